#!/usr/bin/env bash
# fleet-1000 against grocery, simulated requests per second per core (issue 38's target: fleet-1000
# at 75 % of grocery or more). Both run grocery's classes and policies, each instance at grocery's
# load; fleet-1000 has 1,000 instances and 100 times the traffic, so what it pays per request
# beyond grocery is what grows with the instances and the requests in flight.
#
#   bash benches/fleet.sh [BIN]          # BIN default target/release/brownout; ROUNDS=3
#
# Each round runs grocery then fleet-1000, `run --serial --stats --no-charts -q` (one core: the
# policy sets one after another), and reads `simulated_requests_per_s` from stats.json. Rounds
# interleave the two so a slow minute on a shared machine slows both; the figure is the median
# of the per-round ratios, with their range. A run that misses an expectation exits 1 and is
# still complete.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/brownout}
ROUNDS=${ROUNDS:-3}
OUT=$(mktemp -d -t brownout-fleet.XXXXXX)
echo "== uptime before: $(uptime)" >&2
for r in $(seq "$ROUNDS"); do
  for s in grocery bench/fleet-1000; do
    d=$OUT/$(basename "$s")-$r
    "$BIN" run "scenarios/$s.ron" --serial --stats --no-charts -q --out "$d" >/dev/null 2>&1 || [ $? -eq 1 ]
  done
done
echo "== uptime after: $(uptime)" >&2
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rate(name, r):
    return json.load(open(f"{out}/{name}-{r}/stats.json"))["simulated_requests_per_s"]
g = [rate("grocery", r) for r in range(1, rounds + 1)]
f = [rate("fleet-1000", r) for r in range(1, rounds + 1)]
ratios = sorted(b / a for a, b in zip(g, f))
print(f"grocery: {statistics.median(g) / 1e6:.3f} M simulated requests/s (median of {rounds}; "
      f"{min(g) / 1e6:.3f}-{max(g) / 1e6:.3f})")
print(f"fleet-1000: {statistics.median(f) / 1e6:.3f} M simulated requests/s (median of {rounds}; "
      f"{min(f) / 1e6:.3f}-{max(f) / 1e6:.3f})")
print(f"fleet-1000 / grocery: {100 * statistics.median(ratios):.1f} % (median of the per-round ratios; "
      f"{100 * ratios[0]:.1f}-{100 * ratios[-1]:.1f} %; target >= 75 %)")
PY
echo "raw outputs in $OUT" >&2
