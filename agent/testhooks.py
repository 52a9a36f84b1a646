"""Test-only fault hooks, so a fault test can crash something at an exact point.

COGD_TEST_HOOK="<action>:<site>[:<file>]", where <site> is one of the names passed to
fault_hook() ("night-<stage>-mid", "night-<stage>-after", "merge-mid", "loop-turn": a
loop worker has claimed a message and starts its turn):

- kill: this process sends itself SIGKILL there;
- pause: this process creates <file> there and waits (at most PAUSE_MAX_S) until the
  test removes it; meanwhile the test crashes something else (the Postgres postmaster)
  while this process holds an open transaction at that point.

Unset in normal operation, fault_hook() does nothing.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

ENV = "COGD_TEST_HOOK"
PAUSE_MAX_S = 120.0


def fault_hook(site: str) -> None:
    spec = os.environ.get(ENV, "")
    if not spec:
        return
    action, _, rest = spec.partition(":")
    target, _, arg = rest.partition(":")
    if target != site:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "pause" and arg:
        flag = Path(arg)
        flag.touch()
        deadline = time.monotonic() + PAUSE_MAX_S
        while flag.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
