#!/usr/bin/env bash
# One turn of the edit-build-test loop for a one-line change in a policy: flip one line of
# `ShedByDeadline::admit` (crates/brownout-core/src/policy/shed.rs) between two equivalent
# forms, then build and run that policy's tests. Run it from a checkout; pass the test
# selection as arguments, e.g.
#   scripts/loop-bench.sh --test policies shed_by_deadline::   # since the test fold (6 area binaries)
#   scripts/loop-bench.sh --test shed_by_deadline              # before it (45fbed5, 77 binaries)
# Time a few turns of each, alternating (e.g. `/usr/bin/time -f "%e s wall %U s user"`).
set -euo pipefail
f=crates/brownout-core/src/policy/shed.rs
line='        if a.remaining() < self.min_remaining { Admission::Refuse(Refusal::Rejected) } else { Admission::Admit }'
alt='        if self.min_remaining > a.remaining() { Admission::Refuse(Refusal::Rejected) } else { Admission::Admit }'
if grep -qF "$alt" "$f"; then
  python3 - "$f" "$alt" "$line" <<'PY'
import sys; p, a, b = sys.argv[1:]; s = open(p).read(); open(p, "w").write(s.replace(a, b, 1))
PY
else
  grep -qF "$line" "$f" || { echo "loop-bench: the line to flip is not in $f" >&2; exit 2; }
  python3 - "$f" "$line" "$alt" <<'PY'
import sys; p, a, b = sys.argv[1:]; s = open(p).read(); open(p, "w").write(s.replace(a, b, 1))
PY
fi
cargo test --profile ci --quiet "$@" >/dev/null 2>&1
