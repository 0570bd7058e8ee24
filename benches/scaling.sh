#!/usr/bin/env bash
# How `brownout run` grows with the number of classes and of phases (issue 32): each at 1x,
# 10x and 100x of a base count, at almost no traffic, so the cost is the per-class and
# per-phase machinery (recorders, summaries, replication statistics, tables), not requests.
# Prints the wall time and peak RSS of each run and the growth exponent between steps,
# log(t2 / t1) / log(n2 / n1): 1 is linear, 2 quadratic. No test asserts on these times.
#
# Usage: bash benches/scaling.sh [BASE_CLASSES] [BASE_PHASES]
#   (defaults 100 and 100, so 100 / 1,000 / 10,000 of each; BROWNOUT=path picks the binary,
#   default target/ci/brownout, built with `cargo build --profile ci`)
set -euo pipefail
classes=${1:-100}
phases=${2:-100}
bin=${BROWNOUT:-target/ci/brownout}
[ -x "$bin" ] || { echo "no binary at $bin: cargo build --profile ci" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# scenario CLASSES PHASES: two policy sets, two replications (so the replication statistics
# and stars are computed), one request per class per 100 s, PHASES phases of 10 ms each.
scenario() {
    local nc=$1 np=$2
    cat <<HEAD
Scenario(
    name: "scaling",
    seed: 1,
    replications: 2,
    horizon: "$((10 + np / 100))s",
    warmup: "0s",
    window: "1s",
    fleet: (instances: 2, workers: (slots: 50, queue: 10, max_wait: "100ms"),
            pool: (max_connections: 20, acquire_timeout: "100ms")),
HEAD
    if [ "$np" -gt 0 ]; then
        echo "    phases: ["
        awk -v n="$np" 'BEGIN { for (i = 0; i < n; i++) printf "        (name: \"p%d\", start: \"%dms\", end: \"%dms\"),\n", i, i * 10, i * 10 + 10 }'
        echo "    ],"
    fi
    echo "    classes: ["
    awk -v n="$nc" 'BEGIN { for (i = 0; i < n; i++) printf "        (name: \"c%d\", arrivals: Poisson(rate_per_s: 0.01), deadline: \"500ms\"),\n", i }'
    cat <<TAIL
    ],
    dependency: (latency: LogNormal(median: "20ms", sigma: 0.5)),
    policies: [
        (name: "direct", stack: []),
        (name: "timeout", stack: [(policy: Timeout((timeout: "300ms")))]),
    ],
    limits: (max_memory: "64GiB", max_output: "64GiB"),
)
TAIL
}

# measure NAME CLASSES PHASES: prints "seconds peak_kib" of one run without charts.
measure() {
    local f="$tmp/$1.ron"
    scenario "$2" "$3" > "$f"
    rm -rf "$tmp/out"
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" run "$f" --no-charts --quiet --out "$tmp/out" > /dev/null 2>&1 || true
    cat "$tmp/time" | tail -n 1
}

# series WHAT: classes or phases at 1x, 10x, 100x, with the exponent between steps.
series() {
    local what=$1 base prev_n="" prev_t=""
    if [ "$what" = classes ]; then base=$classes; else base=$phases; fi
    printf '%-8s %10s %10s %12s %9s\n' "$what" "count" "seconds" "peak MiB" "exponent"
    for mult in 1 10 100; do
        local n=$((base * mult)) nc np
        if [ "$what" = classes ]; then nc=$n np=0; else nc=1 np=$n; fi
        read -r t kib < <(measure "$what-$n" "$nc" "$np")
        local exp="-"
        if [ -n "$prev_t" ]; then
            exp=$(awk -v t1="$prev_t" -v t2="$t" -v n1="$prev_n" -v n2="$n" \
                'BEGIN { if (t1 <= 0) t1 = 0.01; if (t2 <= 0) t2 = 0.01; printf "%.2f", log(t2 / t1) / log(n2 / n1) }')
        fi
        printf '%-8s %10d %10.2f %12.1f %9s\n' "" "$n" "$t" "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')" "$exp"
        prev_n=$n prev_t=$t
    done
}

series classes
series phases
