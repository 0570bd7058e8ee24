#!/usr/bin/env bash
# Instructions per simulated request, part by part, under callgrind: a count the load of a
# shared machine does not change (wall times do). For each model: `valgrind --tool=callgrind
# BIN run SCEN --serial --no-charts -q --stats`, then from `callgrind_annotate`:
#   total    inclusive instructions of `brownout_core::model::world::run` (the engine loop,
#            the world, the recorders and the summaries of every policy set; not parsing or
#            writing files), divided by `stats.json`'s simulated requests
#   draws    the simulation's own instructions (inlined code included) in rand, rand_distr,
#            rand_core, engine/rng.rs, or the draw functions (DependencyModel::plan,
#            LatencyDist::sample, DelayDist::at)
#   metrics  those in metrics/ or hdrhistogram, or in Recorder(s), Gauge, Lat functions
#   rest     total - draws - metrics (engine, world, policies)
# Models: copies of scenarios/bench/{mmc,timeout-race,timeout-race-bulkhead}.ron with a
# 111111ms horizon (~100,000 requests each) and scenarios/grocery.ron compressed to 6 minutes
# (warm-up 30 s, Brownout(start: 1m, ramp: 1m, hold: 2m, peak: 30): ~1.47 M requests over six
# policy sets, five derived phases). `graph` (named explicitly) is scenarios/bench/graph.ron as
# is: ~100,000 requests of three calls each; divide by its summary.json's dependency.calls for
# instructions per call.
#
#   bash benches/parts.sh [BIN] [MODELS...]     # BIN default target/release/brownout
#   KEEP=DIR bash benches/parts.sh ...           # keep the callgrind files and outputs in DIR
# Prints one JSON line per model; summary.json of each run is kept in the output folder for
# byte comparison between binaries (`cmp A/mmc/summary.json B/mmc/summary.json`).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/brownout}
shift || true
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(mmc timeout-race timeout-race-bulkhead grocery)
OUT=${KEEP:-$(mktemp -d -t brownout-parts.XXXXXX)}
mkdir -p "$OUT/scen"
for m in mmc timeout-race timeout-race-bulkhead; do
  sed 's/horizon: "1111111ms"/horizon: "111111ms"/' "scenarios/bench/$m.ron" >"$OUT/scen/$m.ron"
done
sed -e 's/horizon: "30m"/horizon: "6m"/' -e 's/warmup: "2m"/warmup: "30s"/' \
  -e 's/Brownout(start: "5m", ramp: "5m", hold: "10m", peak: 30.0)/Brownout(start: "1m", ramp: "1m", hold: "2m", peak: 30.0)/' \
  scenarios/grocery.ron >"$OUT/scen/grocery.ron"
# Not in the default list: the service graph (3 calls per request), for its cost per call.
cp scenarios/bench/graph.ron "$OUT/scen/graph.ron"
for m in "${MODELS[@]}"; do
  d=$OUT/$m
  rm -rf "$d"
  # A compressed grocery may miss its expectations (exit 1): the run is complete either way.
  valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$OUT/$m.cg" \
    "$BIN" run "$OUT/scen/$m.ron" --serial --no-charts -q --stats --out "$d" >/dev/null 2>"$OUT/$m.err" || [ $? -eq 1 ]
  python3 - "$OUT/$m.cg" "$d/stats.json" "$m" <<'PY'
import json, re, subprocess, sys
cg, stats, model = sys.argv[1:]
req = json.load(open(stats))["simulated_requests"]
# From "/": in the source tree, callgrind_annotate shortens file names and loses counts.
def ann(*flags):
    return subprocess.run(["callgrind_annotate", "--threshold=100", *flags, cg],
                          capture_output=True, text=True, check=True, cwd="/").stdout
line = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+(\S+?):(.*)$", re.M)
total = sum(int(m.group(1).replace(",", "")) for m in line.finditer(ann("--inclusive=yes"))
            if re.match(r"brownout_core::model::world::run \[", m.group(3)))
DRAW_FILES = ("rand_distr", "rand_core", "/rand-0", "brownout-engine/src/rng.rs")
DRAW_FNS = ("DependencyModel::plan", "LatencyDist::sample", "DelayDist::at", "seed_from_u64", "CounterRng")
MET_FILES = ("brownout-core/src/metrics/", "hdrhistogram")
MET_FNS = ("metrics::", "hdrhistogram::", "Recorder", "Gauge", "Lat::", "UsHist")
OUTPUT = ("brownout-output", "brownout_output", "plotters", "png", "serde_json", "csv")
parts = {"draws": 0, "metrics": 0}
for m in line.finditer(ann()):
    ir, f, fn = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
    if any(k in f or k in fn for k in OUTPUT):
        continue
    if any(k in f for k in DRAW_FILES) or any(k in fn for k in DRAW_FNS):
        parts["draws"] += ir
    elif any(k in f for k in MET_FILES) or any(k in fn for k in MET_FNS):
        parts["metrics"] += ir
per = {k: round(v / req) for k, v in parts.items()}
print(json.dumps({"model": model, "requests": req, "total": round(total / req), **per,
                  "rest": round(total / req) - per["draws"] - per["metrics"]}))
PY
done
echo "callgrind files and outputs in $OUT" >&2
