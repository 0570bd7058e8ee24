#!/usr/bin/env bash
# The CI gate on a resilience config change: run the baseline and the candidate scenario with
# replications on the same seeds, publish JUnit, and fail when a guarded figure got worse.
# docs/ci-example.yml (GitHub Actions) and docs/ci-example.gitlab-ci.yml call it; .ci/run runs
# it on scenarios/ci/, where one candidate must fail and one must pass.
#
#   scripts/ci-gate.sh BASE.ron CANDIDATE.ron OUT GUARD...
#
# GUARD is a `brownout diff --fail-on-regression` guard, [policy=SET:][PHASE:][CLASS/]METRIC[:T]
# (docs/diff.md), at least one. Environment: BROWNOUT, the binary (default `brownout` on PATH);
# REPLICATIONS, replications per run (default: each scenario's own `replications`). Both
# scenarios should have the same `seed`, so that `diff` pairs them seed by seed.
#
# Writes OUT/base and OUT/candidate (run folders), OUT/diff.txt and OUT/diff.json (the whole
# comparison), and JUnit reports in OUT/junit/: base.xml and candidate.xml (each scenario's
# expectations) and gate.xml (one test per guard).
#
# Exit: 0 every guard held and the candidate met its expectations; 1 a guard broke or the
# candidate failed an expectation; 2 bad input, including a guard that watches no figure.
set -euo pipefail

if [ "$#" -lt 4 ]; then
  echo "usage: $0 BASE.ron CANDIDATE.ron OUT GUARD..." >&2
  exit 2
fi
base=$1 candidate=$2 out=$3
shift 3
bin=${BROWNOUT:-brownout}
reps=()
if [ -n "${REPLICATIONS:-}" ]; then reps=(--replications "$REPLICATIONS"); fi
mkdir -p "$out/junit"

xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }

# Run one scenario; exit 1 (a failed expectation) is reported through JUnit, 2 stops the gate.
run() {
  local rc=0
  "$bin" run "$1" ${reps[@]+"${reps[@]}"} --quiet --no-charts --out "$out/$2" --junit "$out/junit/$2.xml" \
    >"$out/$2.txt" || rc=$?
  if [ "$rc" -ge 2 ]; then
    echo "error: brownout run $1 exited $rc" >&2
    exit "$rc"
  fi
  return "$rc"
}

run "$base" base || echo "note: the baseline fails some of its expectations (see $out/junit/base.xml)"
status=0
run "$candidate" candidate || {
  echo "the candidate fails some of its expectations (see $out/junit/candidate.xml)"
  status=1
}

# The whole comparison, for people and for tools (exit 0: no guard here).
"$bin" diff "$out/base" "$out/candidate" >"$out/diff.txt"
"$bin" diff "$out/base" "$out/candidate" --json >"$out/diff.json"
sed -n '1,/figures changed/p' "$out/diff.txt"

# One diff per guard, so the JUnit report shows each guard's verdict and message.
cases=""
failures=0 errors=0
for guard in "$@"; do
  rc=0
  msg=$("$bin" diff "$out/base" "$out/candidate" --fail-on-regression "$guard" 2>&1 >/dev/null) || rc=$?
  name=$(printf '%s' "$guard" | xml)
  case "$rc" in
    0)
      echo "gate: $guard holds"
      cases+="    <testcase classname=\"brownout diff\" name=\"$name\"/>"$'\n'
      ;;
    1)
      echo "gate: $guard BROKEN"
      printf '%s\n' "$msg"
      failures=$((failures + 1))
      [ "$status" -ge 1 ] || status=1
      cases+="    <testcase classname=\"brownout diff\" name=\"$name\"><failure message=\"regression\">$(printf '%s' "$msg" | xml)</failure></testcase>"$'\n'
      ;;
    *)
      echo "gate: $guard cannot be judged (exit $rc)"
      printf '%s\n' "$msg"
      errors=$((errors + 1))
      status=2
      cases+="    <testcase classname=\"brownout diff\" name=\"$name\"><error message=\"bad guard\">$(printf '%s' "$msg" | xml)</error></testcase>"$'\n'
      ;;
  esac
done
{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo "<testsuites tests=\"$#\" failures=\"$failures\" errors=\"$errors\">"
  echo "  <testsuite name=\"brownout gate\" tests=\"$#\" failures=\"$failures\" errors=\"$errors\">"
  printf '%s' "$cases"
  echo "  </testsuite>"
  echo "</testsuites>"
} >"$out/junit/gate.xml"

case "$status" in
  0) echo "gate passed" ;;
  1) echo "gate FAILED" ;;
  *) echo "gate could not judge the change" ;;
esac
exit "$status"
