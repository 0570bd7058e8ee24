#!/usr/bin/env bash
# Peak RSS at 1x and 10x horizon for every shipped scenario (issue 21, target 3), and a
# simulated week of grocery. Each 10x copy goes to a temporary folder beside a copy of the
# data and import files the scenarios read; peak RSS is `run --stats`'s peak_rss_kib.
#   bash benches/rss.sh [BIN]        # BIN defaults to target/release/brownout (built if absent)
#   ONLY="limiters-demo verify/mmc-limiter" bash benches/rss.sh BIN   # these scenarios, no week
#   FAR=100 ONLY=... bash benches/rss.sh BIN   # also at 100x horizon: has memory stopped growing?
#   RUNS=3 ONLY=... bash benches/rss.sh BIN    # each figure the median of 3 runs (1x and 10x
#                                              # interleaved): RSS moves by ~0.5 MiB run to run
# Prints a Markdown table: scenario, RSS 1x, RSS 10x (MiB), ratio 10x / 1x, and the events
# pending in the queue at the peak at 10x (`stats.json`'s peak_pending_events).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/brownout}
[ -x "$bin" ] || cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# `horizon: "X"` with X times FACTOR, in milliseconds; every Poisson rate divided by DIV
# (default 1), so a long horizon can keep its request count affordable.
scaled() {
  python3 - "$1" "$2" "${3:-1}" <<'PY'
import re, sys
text, factor, div = open(sys.argv[1]).read(), int(sys.argv[2]), float(sys.argv[3])
text = re.sub(r"rate_per_s:\s*([0-9.]+)", lambda m: f"rate_per_s: {float(m.group(1)) / div!r}", text)
unit = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
def times(m):
    n, u = re.fullmatch(r"([0-9.]+)\s*(ms|s|m|h|d)", m.group(1)).groups()
    return f'horizon: "{round(float(n) * unit[u] * factor)}ms"'
sys.stdout.write(re.sub(r'horizon:\s*"([^"]+)"', times, text, count=1))
PY
}

# Peak RSS (KiB) of `brownout run FILE` (expectation failures, exit 1, still count).
rss() {
  local out="$tmp/out"
  "$bin" run "$1" --out "$out" --quiet --stats "${@:2}" >/dev/null 2>&1 || [ $? -eq 1 ]
  grep -o '"peak_rss_kib": *[0-9]*' "$out/stats.json" | grep -o '[0-9]*$'
}

# The median of the numbers on standard input, one per line.
median() {
  sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# The last run's events pending at the peak (called after a 10x run).
pending() {
  grep -o '"peak_pending_events": *[0-9]*' "$tmp/out/stats.json" | grep -o '[0-9]*$'
}

far=${FAR:-}
if [ -n "$far" ]; then
  echo "| scenario | RSS 1x (MiB) | RSS 10x (MiB) | 10x / 1x | pending at the peak, 10x | RSS ${far}x (MiB) | ${far}x / 10x |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
else
  echo "| scenario | RSS 1x (MiB) | RSS 10x (MiB) | 10x / 1x | pending at the peak, 10x |"
  echo "|---|---:|---:|---:|---:|"
fi
for s in scenarios/*.ron scenarios/bench/*.ron scenarios/verify/*.ron; do
  name=${s#scenarios/}
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" ${name%.ron} "* ]]; then continue; fi
  dir="$tmp/$(dirname "$s")"
  mkdir -p "$dir"
  cp -r scenarios/data scenarios/imports "$dir/" 2>/dev/null || true
  one="$dir/$(basename "$s")"
  ten="$dir/$(basename "$s" .ron)-10x.ron"
  cp "$s" "$one"
  scaled "$s" 10 >"$ten"
  # RUNS runs at each horizon, interleaved so a slow or crowded minute weighs on both alike.
  as=() bs=()
  for _ in $(seq "${RUNS:-1}"); do as+=("$(rss "$one")") bs+=("$(rss "$ten")"); done
  a=$(printf '%s\n' "${as[@]}" | median) b=$(printf '%s\n' "${bs[@]}" | median) p=$(pending)
  row=$(awk -v n="$name" -v a="$a" -v b="$b" -v p="$p" \
    'BEGIN { printf "| %s | %.1f | %.1f | %.2f | %d |", n, a / 1024, b / 1024, b / a, p }')
  if [ -n "$far" ]; then
    scaled "$s" "$far" >"$dir/$(basename "$s" .ron)-far.ron"
    c=$(rss "$dir/$(basename "$s" .ron)-far.ron")
    row+=$(awk -v b="$b" -v c="$c" 'BEGIN { printf " %.1f | %.2f |", c / 1024, c / b }')
  fi
  echo "$row"
done
[ -z "${ONLY:-}" ] || exit 0

# A simulated week of grocery (10 s windows: 60,480 windows per class and policy set), its
# rates divided by 100 so the week simulates about 3.4x the requests of the 30-minute run:
# memory must follow the windows and requests in flight, not the horizon.
week="$tmp/scenarios/grocery-week.ron"
scaled scenarios/grocery.ron 336 100 >"$week"
for flags in "--no-charts --serial" ""; do
  kib=$(rss "$week" $flags)
  awk -v k="$kib" -v f="${flags:-(charts, parallel)}" 'BEGIN { printf "\ngrocery, 7 days %s: peak RSS %.1f MiB\n", f, k / 1024 }'
done
