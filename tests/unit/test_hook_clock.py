"""`cogd hook --timeout` counts from the process's start, not from the command's body."""

from __future__ import annotations

import subprocess
import sys


def test_process_age_counts_the_time_before_the_import() -> None:
    code = ("import time; time.sleep(1.0)\n"
            "from agent.commands.assist import process_age\n"
            "print(process_age())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    age = float(out)
    # the sleep ran before the module was imported, so a clock started at import (the
    # old behaviour) would read ~0 here
    assert 1.0 <= age < 60.0
