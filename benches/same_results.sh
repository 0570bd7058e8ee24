#!/usr/bin/env bash
# Byte-identity check for engine optimisations: runs every scenario (scenarios/*.ron and
# scenarios/bench/*.ron) with a given brownout binary and stores each summary.json and
# timeseries.csv under DIR;
# with two DIRs, compares them file by file.
#   bash benches/same_results.sh record BIN DIR      # e.g. before an optimisation
#   bash benches/same_results.sh compare DIR_A DIR_B # exit 1 on any difference
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
record)
  bin=$2 dir=$3
  mkdir -p "$dir"
  for s in scenarios/*.ron scenarios/bench/*.ron; do
    name=$(basename "$s" .ron)
    # Expectation failures (exit 1) still write results; only bad input (exit 2) is fatal.
    "$bin" run "$s" --out "$dir/run-$name" >/dev/null 2>&1 || [ $? -eq 1 ]
    cp "$dir/run-$name/summary.json" "$dir/$name.summary.json"
    cp "$dir/run-$name/timeseries.csv" "$dir/$name.timeseries.csv"
    rm -rf "$dir/run-$name"
  done
  ls "$dir"/*.summary.json | wc -l | xargs echo "recorded summaries:"
  ;;
compare)
  a=$2 b=$3 bad=0
  for f in "$a"/*.summary.json "$a"/*.timeseries.csv; do
    if ! cmp -s "$f" "$b/$(basename "$f")"; then echo "DIFFERS: $(basename "$f")"; bad=1; fi
  done
  [ $bad -eq 0 ] && echo "all $(ls "$a"/*.summary.json | wc -l) summaries and time series byte-identical"
  exit $bad
  ;;
*) echo "usage: $0 record BIN DIR | compare DIR_A DIR_B" >&2; exit 2 ;;
esac
