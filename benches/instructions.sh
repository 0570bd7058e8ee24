#!/usr/bin/env bash
# Instructions per simulated request of every shipped scenario, under callgrind: a count the
# load of a shared machine does not change, to compare two binaries scenario by scenario.
# For each scenario:
#   1. a native run of BIN (`run --serial --stats`) gives its simulated requests R over its
#      horizon H; the horizon is cut to H * TARGET / R (whole seconds, at least 1 s, warm-up
#      at most a quarter of it) so the instrumented run simulates about TARGET requests and
#      finishes on a loaded machine. The cut depends only on the scenario and on results
#      that are the same for two binaries that give the same results, so both run the same
#      cut file (kept in OUT/scen, with the data files beside it). A cut the scenario refuses
#      (an explicit phase past it) keeps the full horizon.
#   2. `valgrind --tool=callgrind --toggle-collect=brownout_core::model::world::run
#      --dump-after=brownout_core::model::world::run`: one dump per policy set, counting the
#      instructions inside `world::run` only (the engine loop, the world, the recorders and
#      the summaries; not parsing, the model's build or writing files).
#   3. per request: all dumps over stats.json's simulated requests (every replication's);
#      with PER_SET=1 and no replications, each
#      set's dump over the set's requests, which for an open-loop scenario without reloads
#      are the same in every set (common random numbers; the script checks that every set
#      judged the same number of requests after warm-up, and says `?` where not).
#
#   bash benches/instructions.sh BIN [SCENARIO...]   # paths under scenarios/, default: all
#   KEEP=DIR TARGET=100000 PER_SET=1 bash benches/instructions.sh BIN grocery.ron
#   HORIZON=2s bash benches/instructions.sh BIN bench/fleet-10.ron bench/fleet-1000.ron
#                 # the same cut for each (no native run); TARGET=0: no cut at all
#   bash benches/instructions.sh BIN /tmp/x.ron      # a file outside scenarios/: run as is
#                 # beside the copies (data paths resolve from scenarios/)
# Prints one tab-separated line per scenario (or per policy set): scenario, set, form-free
# total instructions, requests, instructions per request, horizon run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:?usage: $0 BIN [SCENARIO...]}")
shift
TARGET=${TARGET:-100000}
PER_SET=${PER_SET:-0}
OUT=${KEEP:-$(mktemp -d -t brownout-instr.XXXXXX)}
mkdir -p "$OUT"
[ -d "$OUT/scen" ] || cp -r scenarios "$OUT/scen"
if [ $# -gt 0 ]; then
  LIST=("$@")
else
  LIST=()
  for f in scenarios/*.ron scenarios/bench/*.ron; do LIST+=("${f#scenarios/}"); done
fi
for s in "${LIST[@]}"; do
  if [ -f "$s" ] && [ ! -f "scenarios/$s" ]; then
    cp "$s" "$OUT/scen/$(basename "$s")"
    s=$(basename "$s")
  fi
  name=${s%.ron}
  name=${name//\//-}${HORIZON:+-$HORIZON}
  cutf="$OUT/scen/$(dirname "$s")/cut${HORIZON:+-$HORIZON}-$(basename "$s")"
  if [ "$TARGET" = 0 ]; then
    cp "$OUT/scen/$s" "$cutf"
  elif [ -n "${HORIZON:-}" ] && [ ! -f "$cutf" ]; then
    python3 - "$OUT/scen/$s" "$HORIZON" "$cutf" <<'PY'
import re, sys
src, cut, out = sys.argv[1:]
text = open(src).read()
UNIT = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}
def secs(v):
    m = re.fullmatch(r"([\d.]+)(ms|s|m|h)", v)
    return float(m.group(1)) * UNIT[m.group(2)]
h = re.search(r'horizon: "([^"]+)"', text)
text = text[:h.start()] + f'horizon: "{cut}"' + text[h.end():]
w = re.search(r'warmup: "([^"]+)"', text)
if w and secs(w.group(1)) > secs(cut) / 4:
    text = text[:w.start()] + f'warmup: "{int(secs(cut) * 250)}ms"' + text[w.end():]
open(out, "w").write(text)
PY
  elif [ ! -f "$cutf" ]; then
    # Expectation failures (exit 1) still write results; only bad input (exit 2) is fatal.
    "$BIN" run "$OUT/scen/$s" --serial --no-charts -q --stats --out "$OUT/$name.native" >/dev/null 2>&1 || [ $? -eq 1 ]
    python3 - "$OUT/scen/$s" "$OUT/$name.native/stats.json" "$TARGET" "$cutf" <<'PY'
import json, re, sys
src, stats, target, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
text = open(src).read()
req = max(1, json.load(open(stats))["simulated_requests"])
UNIT = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}
def secs(v):
    m = re.fullmatch(r"([\d.]+)(ms|s|m|h)", v)
    return float(m.group(1)) * UNIT[m.group(2)]
h = re.search(r'horizon: "([^"]+)"', text)
horizon = secs(h.group(1))
cut = max(1, int(horizon * target / req + 0.999))
if cut < horizon:
    text = text[:h.start()] + f'horizon: "{cut}s"' + text[h.end():]
    w = re.search(r'warmup: "([^"]+)"', text)
    if w and secs(w.group(1)) > cut / 4:
        text = text[:w.start()] + f'warmup: "{cut * 250}ms"' + text[w.end():]
open(out, "w").write(text)
PY
    if ! "$BIN" check "$cutf" >/dev/null 2>&1; then cp "$OUT/scen/$s" "$cutf"; fi
  fi
  d=$OUT/$name.$(basename "$BIN")
  rm -rf "$d" "$d".cg*
  valgrind --tool=callgrind --dump-instr=no --toggle-collect='brownout_core::model::world::run' \
    --dump-after='brownout_core::model::world::run' --callgrind-out-file="$d.cg" \
    "$BIN" run "$cutf" --serial --no-charts -q --stats --out "$d" >/dev/null 2>"$d.err" || [ $? -eq 1 ]
  python3 - "$d" "$s" "$PER_SET" "$cutf" <<'PY'
import glob, json, re, sys
d, scen, per_set, cutf = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
req = json.load(open(f"{d}/stats.json"))["simulated_requests"]
runs = json.load(open(f"{d}/summary.json"))["runs"]
dumps = sorted(glob.glob(f"{d}.cg.*"), key=lambda p: int(p.rsplit(".", 1)[1]))
def total(p):
    for line in open(p):
        if line.startswith("totals:") or line.startswith("summary:"):
            return int(line.split()[1])
    return 0
ir = [total(p) for p in dumps]
# One dump per run of `world::run`: per policy set, or per set and replication.
assert len(ir) % len(runs) == 0, f"{scen}: {len(ir)} dumps for {len(runs)} policy sets"
per_set = per_set and len(ir) == len(runs)
horizon = re.search(r'horizon: "([^"]+)"', open(cutf).read()).group(1)
print(f"{scen}\tall\t{sum(ir)}\t{req}\t{sum(ir) / req:.0f}\t{horizon}")
if per_set:
    judged = [sum(c["requests"] + c["in_flight_within_deadline"] for c in r["classes"]) for r in runs]
    same = len(set(judged)) == 1
    for r, i in zip(runs, ir):
        per = f"{i / (req / len(runs)):.0f}" if same else "?"
        print(f"{scen}\t{r['policy']}\t{i}\t{req / len(runs) if same else '?'}\t{per}\t{horizon}")
PY
done
echo "callgrind files and outputs in $OUT" >&2
