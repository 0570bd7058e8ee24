#!/usr/bin/env bash
# Side-by-side speed of brownout, SimPy 4.1.2, the hand-written limit and the equal-work limit
# (the same loops doing the per-request work brownout must do: counter-based draws and full
# metrics) on the reference models of /work/shared/bench, in one go, plus the memory check
# (peak RSS at 10x horizon). The ratios to the two limits are of time per request (lower is
# better; issue 21's target is brownout / equal-work <= 1.5).
#
#   bash benches/compare.sh            # REPS=3 interleaved rounds, medians; SimPy at full size
#   REPS=5 SIMPY_REPS=1 SIMPY_N=200000 bash benches/compare.sh
#
# Logical events = arrivals + outcomes (2 per finished request), counted the way the peer
# scripts count them: brownout's from summary.json (requests in + outcomes out), the peers'
# from their own JSON. brownout's wall time is `run --stats`'s (the simulation, not the
# file writing). Pairing: mmc <-> mmc.py / `models mmc`; timeout-race <-> --mode abandon;
# timeout-race-bulkhead <-> --mode cancel --cap 20 (a brownout Limiter releases its permit
# when the timeout fires, like the peers' cancel mode).
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
N=${N:-1000000}
SIMPY_N=${SIMPY_N:-$N}
SIMPY_REPS=${SIMPY_REPS:-$REPS}
BENCH=${BENCH_DIR:-$(cd .. && pwd)/shared/bench}
[ -d "$BENCH" ] || BENCH=/work/shared/bench
VENV=${VENV:-/tmp/peers-venv}
LIMIT_TARGET=${LIMIT_TARGET:-/tmp/brownout-limit-target}
OUT=$(mktemp -d /tmp/brownout-compare.XXXXXX)

# BIN=path runs that binary instead of building one (scripts/benchmarks.sh passes its own).
if [ -z "${BIN:-}" ]; then
  echo "== building (release)" >&2
  cargo build --release --quiet
fi
(cd "$BENCH/limit" && cargo build --release --quiet --target-dir "$LIMIT_TARGET")
if ! "$VENV/bin/python" -c "import simpy" 2>/dev/null; then
  echo "== installing simpy==4.1.2 into $VENV" >&2
  python3 -m venv "$VENV" && "$VENV/bin/pip" install -q simpy==4.1.2
fi
BIN=${BIN:-target/release/brownout}
LIM=$LIMIT_TARGET/release/models
EQ=$LIMIT_TARGET/release/equal_work

echo "== uptime before: $(uptime)" >&2
# Interleaved rounds: each round runs brownout, the limit and the equal-work limit on one
# model back to back, so a slow minute on a shared machine slows all three; the ratios are
# medians of the per-round (paired) ratios.
for r in $(seq "$REPS"); do
  for m in mmc timeout-race timeout-race-bulkhead; do
    d=$OUT/bo-$m-$r
    "$BIN" run "scenarios/bench/$m.ron" --stats --out "$d" >/dev/null 2>&1
    python3 - "$d" "$m" "$r" >>"$OUT/brownout.jsonl" <<'PY'
import json, sys
d, m, r = sys.argv[1], sys.argv[2], int(sys.argv[3])
st = json.load(open(f"{d}/stats.json")); su = json.load(open(f"{d}/summary.json"))
run = su["runs"][0]; c = run["classes"][0]; o = c["outcomes"]
outs = sum(o.values())
stat = (c["latency_ms"]["mean"] - run["dependency"]["latency_ms"]["mean"] if m == "mmc"
        else (o["timeout"] + o["rejected"]) / outs)
print(json.dumps({"model": m, "round": r, "logical": c["requests"] + outs, "wall": st["wall_s"],
                  "rss_kib": st["peak_rss_kib"], "stat": stat}))
PY
    case $m in
      mmc) lim=(mmc); eq=(mmc);;
      timeout-race) lim=(race --mode abandon); eq=(race);;
      timeout-race-bulkhead) lim=(race --mode cancel --cap 20); eq=(race-bulkhead);;
    esac
    "$LIM" "${lim[@]}" --n "$N" --reps 1 | sed "s/^{/{\"model\":\"$m\",\"round\":$r,/" >>"$OUT/limit.jsonl"
    "$EQ" "${eq[@]}" --n "$N" --reps 1 | sed "s/^{/{\"model\":\"$m\",\"round\":$r,/" >>"$OUT/equal.jsonl"
  done
done
echo "== SimPy (slow: ~10-25 s per run at 1,000,000 requests)" >&2
PY="$VENV/bin/python"
$PY "$BENCH/peers/mmc.py" --n "$SIMPY_N" --reps "$SIMPY_REPS" | sed 's/^{/{"model":"mmc",/' >>"$OUT/simpy.jsonl"
$PY "$BENCH/peers/timeout_race.py" --mode abandon --n "$SIMPY_N" --reps "$SIMPY_REPS" | sed 's/^{/{"model":"timeout-race",/' >>"$OUT/simpy.jsonl"
$PY "$BENCH/peers/timeout_race.py" --mode cancel --cap 20 --n "$SIMPY_N" --reps "$SIMPY_REPS" | sed 's/^{/{"model":"timeout-race-bulkhead",/' >>"$OUT/simpy.jsonl"

echo "== memory: M/M/c at 111 s and at 1111 s of simulated time" >&2
for h in 111111ms 1111111ms; do
  sed "s/horizon: \"1111111ms\"/horizon: \"$h\"/" scenarios/bench/mmc.ron >"$OUT/mmc-$h.ron"
  "$BIN" run "$OUT/mmc-$h.ron" --stats --out "$OUT/rss-$h" >/dev/null 2>&1
  python3 -c "import json,sys; print(sys.argv[1], json.load(open(sys.argv[2]))['peak_rss_kib'])" \
    "$h" "$OUT/rss-$h/stats.json" >>"$OUT/rss.txt"
done
echo "== uptime after: $(uptime)" >&2

python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
def load(f):
    rows = {}
    for line in open(f"{out}/{f}"):
        d = json.loads(line); rows.setdefault(d["model"], []).append(d)
    return rows
bo, lim, eq, sp = load("brownout.jsonl"), load("limit.jsonl"), load("equal.jsonl"), load("simpy.jsonl")
med = statistics.median
def eps(rows): return med(r["logical_events_per_s"] for r in rows)
def peer_stat(m, r): return r["Wq_sim_ms"] if m == "mmc" else r["timeout_frac"]
print("| model | brownout M ev/s | limit M ev/s | equal-work M ev/s | SimPy M ev/s | time/request: brownout/limit "
      "| time/request: brownout/equal-work | speed: brownout/SimPy | statistic: brownout / limit / equal-work / SimPy |")
print("|---|---|---|---|---|---|---|---|---|")
def paired(m, peer):
    """Per-round ratios of brownout's time per request to the peer's (same round)."""
    by_round = {r["round"]: r["logical_events_per_s"] for r in peer[m]}
    return sorted(by_round[r["round"]] / (r["logical"] / r["wall"]) for r in bo[m])
spreads = []
for m in ["mmc", "timeout-race", "timeout-race-bulkhead"]:
    b = med(r["logical"] / r["wall"] for r in bo[m]); s = eps(sp[m])
    l, e = eps(lim[m]), eps(eq[m])
    pl, pe = paired(m, lim), paired(m, eq)
    spreads.append(f"{m} {pe[0]:.2f}-{pe[-1]:.2f}")
    name = "mean wait ms" if m == "mmc" else "timeout fraction"
    stat = " / ".join(f"{med(x):.4f}" for x in ([r["stat"] for r in bo[m]],
                      [peer_stat(m, r) for r in lim[m]], [peer_stat(m, r) for r in eq[m]],
                      [peer_stat(m, r) for r in sp[m]]))
    print(f"| {m} | {b/1e6:.2f} | {l/1e6:.2f} | {e/1e6:.2f} | {s/1e6:.3f} | {med(pl):.2f} | {med(pe):.2f} | {b/s:.1f} "
          f"| {name}: {stat} |")
rss = [line.split() for line in open(f"{out}/rss.txt")]
(h1, k1), (h2, k2) = rss
print(f"\npeak RSS, M/M/c: {k1} KiB at horizon {h1}, {k2} KiB at {h2} ({(int(k2)/int(k1)-1)*100:+.1f} %)")
print(f"medians of {len(bo['mmc'])} interleaved rounds of brownout, limit and equal-work (the time ratios are "
      f"medians of the per-round ratios; brownout / equal-work per round: {', '.join(spreads)}) "
      f"and {len(sp['mmc'])} SimPy runs per model; raw JSON in {out}")
PY
