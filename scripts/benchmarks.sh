#!/usr/bin/env bash
# Regenerates BENCHMARKS.md's "Current figures" section, the one source of every speed and
# memory figure README.md quotes (tests/docs/performance_figures.rs checks README against it).
#
#   scripts/benchmarks.sh           # full: 11 interleaved rounds, SimPy at 1,000,000 requests x 3,
#                                   # fleet-1000 against grocery x 3 (~10 min on an idle machine)
#   scripts/benchmarks.sh --quick   # 3 rounds, SimPy at 200,000 requests x 1, grocery x 3,
#                                   # fleet-1000 against grocery x 1 (~4 min)
#   BIN=path scripts/benchmarks.sh  # measure that release binary instead of building one (the
#                                   # section says so: it may not be HEAD's build)
#
# What it runs, in order, with the release build:
# - benches/compare.sh: brownout, the hand-written limit and the equal-work limit interleaved
#   round by round on the reference models (time ratios are medians of the per-round paired
#   ratios), SimPy on the same models, and peak RSS at 1x and 10x horizon.
# - benches/parts.sh: instructions per simulated request under callgrind, which the load of a
#   shared machine does not change (wall times do: prefer these for A/B comparisons).
# - the grocery scenario on one core, `run --serial --stats`, simulated requests per second.
# - benches/fleet.sh: fleet-1000 against grocery per core, interleaved rounds.
# `uptime` before and after is written into the section: a loaded machine slows the times
# (not the instruction counts, nor much the interleaved ratios).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=full
case "${1:-}" in
  --quick) MODE=quick ;;
  "") ;;
  *) echo "usage: scripts/benchmarks.sh [--quick]" >&2; exit 2 ;;
esac
if [ "$MODE" = quick ]; then
  REPS=3 SIMPY_REPS=1 SIMPY_N=200000 GROCERY_RUNS=3 FLEET_ROUNDS=1
else
  REPS=11 SIMPY_REPS=3 SIMPY_N=1000000 GROCERY_RUNS=7 FLEET_ROUNDS=3
fi
OUT=$(mktemp -d -t brownout-benchmarks.XXXXXX)
if [ -n "${BIN:-}" ]; then
  built="the release binary given as \`BIN=$BIN\` (not rebuilt by the script)"
else
  BIN=target/release/brownout
  cargo build --release --quiet
  built="a release build of HEAD"
fi
export BIN
up_before=$(uptime)
started=$(date -u +"%Y-%m-%d %H:%M UTC")

echo "== compare.sh (REPS=$REPS SIMPY_REPS=$SIMPY_REPS SIMPY_N=$SIMPY_N)" >&2
REPS=$REPS SIMPY_REPS=$SIMPY_REPS SIMPY_N=$SIMPY_N bash benches/compare.sh >"$OUT/compare.md" 2>"$OUT/compare.log"

echo "== parts.sh (callgrind)" >&2
bash benches/parts.sh "$BIN" >"$OUT/parts.jsonl" 2>"$OUT/parts.log"

echo "== grocery, $GROCERY_RUNS runs on one core" >&2
for r in $(seq "$GROCERY_RUNS"); do
  # A run that misses an expectation exits 1 and is still complete.
  "$BIN" run scenarios/grocery.ron --serial --stats --no-charts -q --out "$OUT/grocery-$r" >/dev/null 2>&1 || [ $? -eq 1 ]
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['simulated_requests_per_s'])" \
    "$OUT/grocery-$r/stats.json" >>"$OUT/grocery.txt"
done

echo "== fleet.sh, $FLEET_ROUNDS rounds" >&2
ROUNDS=$FLEET_ROUNDS bash benches/fleet.sh "$BIN" >"$OUT/fleet.txt" 2>"$OUT/fleet.log"
up_after=$(uptime)

python3 - "$OUT" "$MODE" "$started" "$up_before" "$up_after" "$(git rev-parse --short HEAD)" \
  "$(rustc --version)" "$REPS" "$SIMPY_REPS" "$SIMPY_N" "$GROCERY_RUNS" "$built" "$FLEET_ROUNDS" <<'PY'
import json, re, statistics, sys
out, mode, started, up0, up1, commit, rustc, reps, simpy_reps, simpy_n, gruns, built, gruns_fleet = sys.argv[1:]
compare = open(f"{out}/compare.md").read()
rows = [l.strip().strip("|").split(" | ") for l in compare.splitlines() if l.startswith("| ")]
head, body = rows[0], rows[1:]
col = {h.strip(): i for i, h in enumerate(head)}
by = {r[0].strip(): r for r in body}
models = ["mmc", "timeout-race", "timeout-race-bulkhead"]
def vals(name):
    return [by[m][col[name]].strip() for m in models]
simpy = vals("speed: brownout/SimPy")
lim = vals("time/request: brownout/limit")
eq = vals("time/request: brownout/equal-work")
rss = re.search(r"\(([+-][\d.]+) %\)", compare).group(1)
parts = {d["model"]: d for d in map(json.loads, open(f"{out}/parts.jsonl"))}
g = sorted(float(x) / 1e6 for x in open(f"{out}/grocery.txt"))
fleet = re.search(r"fleet-1000 / grocery: ([\d.]+) % \(median of the per-round ratios; ([\d.]+)-([\d.]+) %",
                  open(f"{out}/fleet.txt").read())
# Issue 38's targets: each model at most 2.0x the equal-work limit's time per request, fleet-1000 at
# 75 % of grocery's rate per core or more.
over = [n for n, x in zip(["M/M/c", "timeout race", "race + bulkhead"], eq) if float(x) > 2.0]
eq_state = "met on all three" if not over else "not met on " + ", ".join(over)
fleet_state = "met" if float(fleet.group(1)) >= 75 else "not met"
quick = " --quick" if mode == "quick" else ""
sf = sorted(simpy, key=float)
lines = [
    "## Current figures",
    "",
    f"Written by `scripts/benchmarks.sh{quick}` on {started} at commit `{commit}`, {rustc}, measuring {built}.",
    f"Load: `{up0.strip()}` before, `{up1.strip()}` after (a 2-core machine shared with other work:",
    "times move with the load, instruction counts do not, interleaved ratios little).",
    "",
    "| measure | figure | command |",
    "|---|---|---|",
    f"| reference models vs SimPy | {sf[0]}–{sf[-1]}× faster (M/M/c {simpy[0]}, timeout race {simpy[1]}, "
    f"race + bulkhead {simpy[2]}) | `bash benches/compare.sh` |",
    f"| reference models vs a hand-written heap loop | {lim[0]}, {lim[1]}, {lim[2]}× its time per request "
    "(M/M/c, timeout race, race + bulkhead) | `bash benches/compare.sh` |",
    f"| reference models vs the equal-work limit | {eq[0]}, {eq[1]}, {eq[2]}× its time per request "
    f"(target ≤ 2.0×: {eq_state}) | `bash benches/compare.sh` |",
    "| instructions per simulated request (callgrind) | " + ", ".join(
        f"{n} {parts[m]['total']:,}" for m, n in [("mmc", "M/M/c"), ("timeout-race", "timeout race"),
                                                  ("timeout-race-bulkhead", "race + bulkhead"), ("grocery", "grocery")])
    + " | `bash benches/parts.sh` |",
    f"| grocery, all six policies, one core | {statistics.median(g):.2f} M simulated requests/s (median of "
    f"{len(g)}; {g[0]:.2f}–{g[-1]:.2f}) | `brownout run scenarios/grocery.ron --serial --stats --no-charts` |",
    f"| fleet-1000 against grocery, one core | {fleet.group(1)} % of grocery's simulated requests/s (median of "
    f"{gruns_fleet} rounds; {fleet.group(2)}–{fleet.group(3)} %; target ≥ 75 %: {fleet_state}) | `bash benches/fleet.sh` |",
    f"| memory | O(in flight): 10× the horizon, peak RSS {rss} % | `bash benches/compare.sh` |",
    "",
    f"`benches/compare.sh` ran as `REPS={reps} SIMPY_REPS={simpy_reps} SIMPY_N={simpy_n} bash benches/compare.sh`:",
    "",
    *compare.strip().splitlines(),
    "",
    "`benches/parts.sh` (instructions per simulated request; draws and metrics as the script defines them):",
    "",
    "| model | requests | total | draws | metrics | rest |",
    "|---|---:|---:|---:|---:|---:|",
    *[f"| {m} | {d['requests']:,} | {d['total']:,} | {d['draws']:,} | {d['metrics']:,} | {d['rest']:,} |"
      for m, d in parts.items()],
    "",
    f"grocery, simulated requests per second, {gruns} runs: " + ", ".join(f"{x:.2f} M" for x in g) + ".",
    "",
    "`benches/fleet.sh`:",
    "",
    *["    " + l for l in open(f"{out}/fleet.txt").read().strip().splitlines()],
    "",
]
text = open("BENCHMARKS.md").read()
begin, end = "<!-- current figures: begin (scripts/benchmarks.sh) -->", "<!-- current figures: end -->"
a, b = text.index(begin) + len(begin), text.index(end)
open("BENCHMARKS.md", "w").write(text[:a] + "\n" + "\n".join(lines) + text[b:])
print("\n".join(lines))
PY
echo "raw outputs in $OUT" >&2
