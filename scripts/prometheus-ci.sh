#!/usr/bin/env bash
# The Prometheus round trip (issue 35, docs/openmetrics.md), against the real tools:
#   brownout run (a known scenario) -> brownout export openmetrics -> promtool check metrics
#   -> promtool tsdb create-blocks-from openmetrics -> prometheus on 127.0.0.1 -> the HTTP
#   API's /api/v1/query_range -> the value equals brownout's own timeseries.csv
#   -> brownout calibrate prometheus -> the fitted arrivals and latency within the tolerances
#   below of the scenario's.
# Installs Debian's `prometheus` package when promtool or prometheus is missing (root and
# apt-get needed). Usage: scripts/prometheus-ci.sh [BROWNOUT_BINARY]   (default target/ci/brownout)
# PROM_KEEP=DIR keeps the query_range answers there (how tests/data/prometheus/*.json were made).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-${BROWNOUT:-target/ci/brownout}}"
[ -x "$bin" ] || { echo "prometheus-ci: no brownout binary at $bin (cargo build --profile ci)"; exit 1; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  mkdir -p target
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { timeout 300 apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends prometheus; } \
      >target/prometheus-install.log 2>&1 || { cat target/prometheus-install.log; echo "prometheus could not be installed"; exit 1; }
  else
    echo "not root or no apt-get: Debian's prometheus package cannot be installed, and the round trip needs it"
    exit 1
  fi
fi

work="$(mktemp -d)"
prom_pid=""
cleanup() {
  if [ -n "$prom_pid" ]; then kill "$prom_pid" 2>/dev/null || true; wait "$prom_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

scenario=tests/data/prometheus/roundtrip.ron
start=2026-01-01T00:00:00Z
start_s=1767225600 # $start in Unix seconds
"$bin" run "$scenario" --out "$work/run" --no-charts >/dev/null
"$bin" export openmetrics "$work/run" --start "$start" --out "$work/export.om" 2>/dev/null
grep -qx '# EOF' "$work/export.om"

echo "== promtool check metrics (on the export in the classic text format: promtool's linter reads only that)"
# The classic format names a counter family with its _total, writes timestamps in integer
# milliseconds, and has no # UNIT or # EOF; nothing else changes.
python3 - "$work/export.om" >"$work/export.prom" <<'PY'
import re, sys
counters = set()
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("# TYPE ") and line.endswith(" counter"):
        counters.add(line.split()[2])
    if line.startswith("# UNIT") or line == "# EOF":
        continue
    if line.startswith(("# TYPE ", "# HELP ")):
        parts = line.split(" ", 3)
        if parts[2] in counters:
            parts[2] += "_total"
        print(" ".join(parts))
        continue
    m = re.match(r"^(.*) (\d+)\.(\d{3})$", line)
    print(f"{m.group(1)} {m.group(2)}{m.group(3)}")
PY
promtool check metrics <"$work/export.prom"

echo "== promtool tsdb create-blocks-from openmetrics (its OpenMetrics parser reads the export as written)"
promtool tsdb create-blocks-from openmetrics "$work/export.om" "$work/tsdb" >"$work/blocks.log"

echo "== prometheus on 127.0.0.1"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# Retention far beyond the anchored timestamps, or the blocks would be dropped as old. The
# lookback is below the 15 s window, so a series that ends (a phase label changing) is not
# carried into the next steps as the default 5 minutes would.
prometheus --config.file=/dev/null --web.listen-address="127.0.0.1:$port" \
  --storage.tsdb.path="$work/tsdb" --storage.tsdb.retention.time=100y \
  --query.lookback-delta=14s >"$work/prometheus.log" 2>&1 &
prom_pid=$!
api="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  if curl -fsS "$api/-/ready" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$prom_pid" 2>/dev/null; then cat "$work/prometheus.log"; echo "prometheus exited"; exit 1; fi
  sleep 0.2
done
curl -fsS "$api/-/ready" >/dev/null || { cat "$work/prometheus.log"; echo "prometheus not ready"; exit 1; }

range() { # QUERY FILE: query_range over the run, 15 s step (the scenario's window)
  curl -fsS -G "$api/api/v1/query_range" --data-urlencode "query=$1" \
    --data-urlencode "start=$start_s" --data-urlencode "end=$((start_s + 585))" --data-urlencode "step=15" >"$2"
}
range 'brownout_arrivals_per_second{policy="none",class="api"}' "$work/arrivals.json"
range 'brownout_dependency_latency_p50_seconds{policy="none",class="api"}' "$work/p50.json"
range 'brownout_dependency_latency_p95_seconds{policy="none",class="api"}' "$work/p95.json"
range 'brownout_offered_requests_total{policy="none",class="api"}' "$work/offered.json"
if [ -n "${PROM_KEEP:-}" ]; then
  mkdir -p "$PROM_KEEP" && cp "$work/arrivals.json" "$work/p50.json" "$work/p95.json" "$PROM_KEEP/"
fi

echo "== Prometheus answers brownout's figures"
python3 - "$work" <<'PY'
import csv, json, sys
work = sys.argv[1]
start = 1767225600
rows = [r for r in csv.DictReader(open(f"{work}/run/timeseries.csv")) if r["policy"] == "none" and r["class"] == "api"]
def answer(name):
    out = {}
    for s in json.load(open(f"{work}/{name}.json"))["data"]["result"]:
        for t, v in s["values"]:
            assert t not in out, f"{name}: two series at {t}: the lookback carried a series on"
            out[t] = float(v)
    return out
arrivals, p50, offered = answer("arrivals"), answer("p50"), answer("offered")
checked = 0
total = 0
for r in rows:
    t = start + float(r["t_s"])
    want = int(r["offered_count"]) / 15.0
    assert abs(arrivals[t] - want) < 1e-9, (t, arrivals[t], want)
    if r["dep_latency_p50_ms"]:
        assert abs(p50[t] - float(r["dep_latency_p50_ms"]) / 1000.0) < 1e-12, (t, p50[t], r["dep_latency_p50_ms"])
    total += int(r["offered_count"])
    # The counter's sample is stamped at the window's end: the query at t + 15 s sees it.
    if t + 15 in offered:
        assert offered[t + 15] == total, (t, offered[t + 15], total)
    checked += 1
assert checked == 40, checked
print(f"ok: {checked} windows of arrivals, dependency p50 and the offered counter equal timeseries.csv")
PY

echo "== every query of docs/grafana-dashboard.json runs and finds series"
python3 - "$api" "$start_s" docs/grafana-dashboard.json <<'PY'
import json, sys, urllib.parse, urllib.request
api, start, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = 0
for panel in json.load(open(path))["panels"]:
    for t in panel["targets"]:
        expr = t["expr"].replace("$policy", ".*").replace("$class", ".*").replace("$__interval", "15s")
        q = urllib.parse.urlencode({"query": expr, "start": start, "end": start + 585, "step": 15})
        answer = json.load(urllib.request.urlopen(f"{api}/api/v1/query_range?{q}"))
        assert answer["status"] == "success", (panel["title"], expr, answer)
        # A run without a limiter has no limit: no value, so no sample (docs/openmetrics.md).
        assert answer["data"]["result"] or "brownout_limit" in expr, (panel["title"], expr, "no series")
        n += 1
print(f"ok: {n} dashboard queries")
PY

echo "== calibrate closes the round trip"
"$bin" calibrate prometheus "$work/arrivals.json" "$work/p50.json" "$work/p95.json" \
  --class 'api=brownout_arrivals_per_second{class="api"}' \
  --latency-quantile '0.5=brownout_dependency_latency_p50_seconds' \
  --latency-quantile '0.95=brownout_dependency_latency_p95_seconds' \
  --quiet-until 4m --out "$work/fitted" 2>"$work/calibrate.log" || { cat "$work/calibrate.log"; exit 1; }
"$bin" check "$work/fitted/scenario.ron" >/dev/null
python3 - "$work/fitted/scenario.ron" <<'PY'
import math, re, sys
text = open(sys.argv[1]).read()
def profile(t):  # the scenario's arrivals: 20/s at 0, 60/s at 5m, 20/s at 10m, linear between
    return 20 + 40 * (t / 300) if t <= 300 else 60 - 40 * ((t - 300) / 300)
def drift(t):  # Ramp 1 -> 3 from 4m to 6m
    return 1 + 2 * min(max((t - 240) / 120, 0), 1)
def secs(d):
    n, u = re.fullmatch(r"([\d.]+)(us|ms|s|m)", d).groups()
    return float(n) * {"us": 1e-6, "ms": 0.001, "s": 1, "m": 60}[u]
arr = re.search(r"PoissonProfile\(points: \[(.*?)\]\)\)", text, re.S).group(1)
pts = [(secs(d), float(v)) for d, v in re.findall(r'\("([^"]+)", ([\d.]+)\)', arr)]
assert len(pts) == 40, len(pts)
for t, v in pts:
    # A window's expected rate is the profile's mean over it (linear: at its middle); the
    # count is Poisson, so 5 standard deviations of count / 15 s bound the noise.
    want = profile(t + 7.5)
    sd = math.sqrt(want * 15) / 15
    assert abs(v - want) <= 5 * sd, (t, v, want, sd)
m = re.search(r'LogNormal\(median: "([^"]+)", sigma: ([\d.]+)\)', text)
median, sigma = secs(m.group(1)) * 1000, float(m.group(2))
assert abs(median - 100) <= 5, median          # 100 ms within 5 %
assert abs(sigma - 0.4) <= 0.05, sigma         # sigma 0.4 within 0.05
dr = re.search(r"drift: Points\(\[(.*?)\]\)", text, re.S).group(1)
for d, f in re.findall(r'\("([^"]+)", ([\d.]+)\)', dr):
    t = secs(d)
    # The window's median against the drift over it: within 10 % of the drift at its ends.
    lo, hi = drift(t), drift(t + 15)
    assert lo * 0.9 <= float(f) <= hi * 1.1, (t, f, lo, hi)
print(f"ok: 40 arrival points within 5 sd, median {median} ms, sigma {sigma}, drift within 10 %")
PY
echo "prometheus round trip passed"
