"""Differential driver for pybreaker (tests/policies/differential.rs).

Reads a JSON array of cases {options, steps} on stdin and prints, per case, one JSON line:
whether each call ran and the breaker's state after each step. The clock is fake: the
module's `datetime` is replaced by one whose now() is the driver's time, starting at 0.
Steps: {"op": "advance", "us": N} and {"op": "call", "us": D, "outcome": "success" |
"error" | "timeout"}: pybreaker's `call` holds its lock for the whole call, so a call is
one step that takes D microseconds.
"""

import json
import sys
from datetime import datetime, timedelta, timezone

import pybreaker

EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


class Clock:
    us = 0


class FakeDatetime(datetime):
    @classmethod
    def now(cls, tz=None):
        return EPOCH + timedelta(microseconds=Clock.us)


pybreaker.datetime = FakeDatetime


class DependencyError(Exception):
    pass


class DependencyTimeout(Exception):
    pass


KINDS = {"Error": DependencyError, "Timeout": DependencyTimeout}


def run_case(case):
    Clock.us = 0
    o = case["options"]
    breaker = pybreaker.CircuitBreaker(
        fail_max=o["fail_max"],
        reset_timeout=o["reset_timeout_ms"] / 1000,
        success_threshold=o["success_threshold"],
        exclude=[KINDS[k] for k in o["exclude"]],
    )
    out = []
    for step in case["steps"]:
        ran = None
        if step["op"] == "advance":
            Clock.us += step["us"]
        else:
            ran = False

            def call(step=step):
                nonlocal ran
                ran = True
                Clock.us += step["us"]
                if step["outcome"] == "error":
                    raise DependencyError()
                if step["outcome"] == "timeout":
                    raise DependencyTimeout()

            try:
                breaker.call(call)
            except (pybreaker.CircuitBreakerError, DependencyError, DependencyTimeout):
                pass
        out.append({"ran": ran, "state": breaker.current_state})
    return out


def main():
    for case in json.load(sys.stdin):
        print(json.dumps(run_case(case)))


if __name__ == "__main__":
    main()
