"""CI proves what it claims: a skipped test fails the run unless the skip is allow-listed.

Strict when COGD_STRICT_SKIPS=1, or when CI=true (as `.ci/run` and CI services set it) and
COGD_STRICT_SKIPS is not 0. Then, at the end of the run, every skipped test is listed with
its message and, when allow-listed, the reason written in the allow-list; a skip that is
not allow-listed makes pytest exit 1. A run that collected no tests keeps pytest's exit
code 5 (a failure for CI as well).

The allow-list is tests/skip-allowlist.txt (COGD_SKIP_ALLOWLIST names another file), one
entry a line: `<test id> | <start of the skip message> | <why the skip is acceptable>`,
where `*` in the test id matches any text. Blank lines and lines starting with # are
ignored; a line without its three parts is an error naming the line.

Loaded by tests/conftest.py (its hooks imported there), or by `pytest -p tests.skip_policy`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ALLOWLIST = Path(__file__).resolve().parent / "skip-allowlist.txt"


@dataclass(frozen=True)
class Allowed:
    test: str
    message: str
    reason: str
    line: int

    def matches(self, nodeid: str, message: str) -> bool:
        pattern = ".*".join(re.escape(part) for part in self.test.split("*"))
        return re.fullmatch(pattern, nodeid) is not None and message.startswith(self.message)


def strict() -> bool:
    flag = os.environ.get("COGD_STRICT_SKIPS", "").strip()
    if flag:
        return flag not in ("0", "false", "no")
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def read_allowlist(path: Path) -> list[Allowed]:
    if not path.is_file():
        raise pytest.UsageError(f"the skip allow-list {path} does not exist")
    entries = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        parts = [p.strip() for p in text.split(" | ")]
        if len(parts) != 3 or not all(parts):
            raise pytest.UsageError(
                f"{path}:{number}: expected `<test id> | <start of the skip message> | "
                f"<reason>`, got {text!r}")
        entries.append(Allowed(parts[0], parts[1], parts[2], number))
    return entries


def skip_message(report: Any) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


_SKIPS: list[tuple[str, str]] = []  # (test id, skip message), in the order they happened


def _allowlist_path() -> Path:
    return Path(os.environ.get("COGD_SKIP_ALLOWLIST") or ALLOWLIST)


def pytest_configure(config: pytest.Config) -> None:
    read_allowlist(_allowlist_path())  # a broken allow-list stops the run before it starts
    _SKIPS.clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPS.append((report.nodeid, skip_message(report)))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:  # a whole module skipped at collection
        _SKIPS.append((report.nodeid, skip_message(report)))


def _verdicts() -> list[tuple[str, str, Allowed | None]]:
    allowed = read_allowlist(_allowlist_path())
    return [(nodeid, message, next((a for a in allowed if a.matches(nodeid, message)), None))
            for nodeid, message in _SKIPS]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if strict() and exitstatus == 0 and any(a is None for _, _, a in _verdicts()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    if not strict() and not _SKIPS:
        return
    verdicts = _verdicts()
    bad = [v for v in verdicts if v[2] is None]
    tr = terminalreporter
    tr.section("skipped tests (tests/skip_policy.py)")
    tr.write_line(f"skipped: {len(verdicts)} (allow-listed: {len(verdicts) - len(bad)}, "
                  f"not allow-listed: {len(bad)})")
    for nodeid, message, allowed in verdicts:
        if allowed is None:
            tr.write_line(f"NOT ALLOWED  {nodeid}: {message}", red=True)
        else:
            tr.write_line(f"allow-listed {nodeid}: {message} -- allowed because: "
                          f"{allowed.reason} (allow-list line {allowed.line})")
    if bad and strict():
        tr.write_line("a skip that is not on the allow-list fails this run (CI=true or "
                      "COGD_STRICT_SKIPS=1): make the test run here, or add it to the "
                      "allow-list with the reason", red=True)
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        tr.write_line("no tests ran: that is a failure too (exit code 5)", red=True)
