#!/usr/bin/env bash
# Writes a scenario with N classes (default 100,000) to stdout, for timing `brownout check`
# (issue 21, target 5). Every per-class list grows with N: the classes, four Timeout layers
# naming a quarter of them each, a TieredBulkhead and a Limiter naming every class, one
# expectation per class with a phase, and N/10 phases, so validation, name lookups, locating
# and the budget all see N of everything.
# With ONLY=classes, only the class list grows (N classes, three policy sets naming none of
# them, no expectations): the scenario a team with many endpoints writes.
# Usage: bash benches/many_classes.sh [N] > /tmp/many.ron && brownout check /tmp/many.ron
set -euo pipefail
n=${1:-100000}
only=${ONLY:-all}
each() { # each FROM STEP FORMAT: printf FORMAT for i = FROM, FROM+STEP, ... < n
    awk -v n="$n" -v from="$1" -v step="$2" -v fmt="$3" 'BEGIN { for (i = from; i < n; i += step) printf fmt, i, i }'
}
cat <<HEAD
Scenario(
    name: "many-classes",
    seed: 1,
    horizon: "$((n + 100))s",
    warmup: "0s",
    window: "$((n + 100))s",
    fleet: (instances: 2, workers: (slots: 50, queue: 10, max_wait: "100ms"),
            pool: (max_connections: 20, acquire_timeout: "100ms")),
    classes: [
HEAD
awk -v n="$n" 'BEGIN {
    for (i = 0; i < n; i++)
        printf "        (name: \"c%d\", arrivals: Poisson(rate_per_s: 0.01), deadline: \"%dms\", priority: %d),\n", i, 100 + i % 900, i % 4
}'
if [ "$only" = classes ]; then
    cat <<SMALL
    ],
    dependency: (latency: LogNormal(median: "20ms", sigma: 0.4)),
    // Running it would need 24 KiB per class and run (and per phase); only check is timed.
    limits: (max_memory: "1000TiB", max_output: "1000TiB"),
    policies: [
        (name: "none"),
        (name: "timeout", stack: [(policy: Timeout((timeout: "200ms")))]),
        (name: "limit", stack: [(policy: Limiter((permits: 10)))]),
    ],
)
SMALL
    exit 0
fi
cat <<MID
    ],
    dependency: (latency: LogNormal(median: "20ms", sigma: 0.4)),
    // Running it would need 24 KiB per class and run (and per phase); only check is timed.
    limits: (max_memory: "1000TiB", max_output: "1000TiB"),
    phases: [
MID
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i += 10) printf "        (name: \"p%d\", start: \"%ds\", end: \"%ds\"),\n", i, i, i + 10 }'
cat <<POL
    ],
    policies: [
        (name: "none"),
        (name: "timeouts", stack: [
POL
for k in 0 1 2 3; do
    printf '            (policy: Timeout((timeout: "%dms")), classes: [' $((200 + k))
    each "$k" 4 '"c%d", '
    printf ']),\n'
done
cat <<POL
        ]),
        (name: "bulkhead", stack: [
            (policy: TieredBulkhead((permits: 10, classes: [
POL
each 0 1 '                (name: "c%d", share: 0.0, on_full: FallbackNow),\n'
cat <<POL
            ]))),
            (policy: Limiter((permits: 10, class_max_wait: [
POL
each 0 1 '                ("c%d", "50ms"),\n'
cat <<TAIL
            ]))),
        ]),
    ],
    expect: [
TAIL
each 0 1 '        (policy: "bulkhead", class: "c%d", phase: "p0", metric: "ok_ratio", op: Ge, value: 0.0),\n'
cat <<TAIL
    ],
)
TAIL
