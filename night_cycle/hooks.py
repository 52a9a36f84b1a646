"""A test-only fault hook: COGD_NIGHT_CYCLE_TEST_HOOK="kill:<stage>:<mid|after>" sends this
process SIGKILL in the middle of that stage (after a first write) or right after its
checkpoint. Tests use it to prove that `--resume` after a real crash ends with the same
rows as an uninterrupted run. Unset in normal operation, it does nothing.
"""

from __future__ import annotations

import os
import signal

ENV = "COGD_NIGHT_CYCLE_TEST_HOOK"


def fault_hook(stage: int, point: str) -> None:
    spec = os.environ.get(ENV, "")
    if not spec:
        return
    parts = spec.split(":")
    if len(parts) < 3 or parts[1] != str(stage) or parts[2] != point:
        return
    if parts[0] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
