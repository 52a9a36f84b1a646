"""The CI skip policy (tests/skip_policy.py): under CI=true or COGD_STRICT_SKIPS=1 a skip
that is not on the allow-list fails the run, an allow-listed one passes with its reason
printed, and a run with no tests keeps exit code 5. Each case is a real pytest run in a
subprocess on a tiny test file of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.skip_policy import ALLOWLIST, read_allowlist

REPO = Path(__file__).resolve().parents[2]
TESTS = """
import pytest

def test_runs():
    assert True

def test_needs_a_capability():
    pytest.skip("no capability here: this check needs it")
"""


def pytest_run(tmp_path: Path, allowlist: str | None, tests: str = TESTS,
               **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_tiny.py").write_text(tests)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("CI", "COGD_STRICT_SKIPS", "COGD_SKIP_ALLOWLIST")}
    if allowlist is not None:
        (tmp_path / "allow.txt").write_text(allowlist)
        clean["COGD_SKIP_ALLOWLIST"] = str(tmp_path / "allow.txt")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "tests.skip_policy", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**clean, "PYTHONPATH": str(REPO), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **env})


ALLOWED = ("# a comment\n\ntest_tiny.py::test_needs_* | no capability here | CI cannot "
           "have the capability\n")


@pytest.mark.parametrize("env", [{"COGD_STRICT_SKIPS": "1"}, {"CI": "true"}],
                         ids=["COGD_STRICT_SKIPS=1", "CI=true"])
def test_a_skip_not_on_the_allow_list_fails_a_strict_run(tmp_path: Path,
                                                         env: dict[str, str]) -> None:
    proc = pytest_run(tmp_path, "# nothing allowed\n", **env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "skipped: 1 (allow-listed: 0, not allow-listed: 1)" in proc.stdout
    assert ("NOT ALLOWED  test_tiny.py::test_needs_a_capability: no capability here: this "
            "check needs it") in proc.stdout
    assert "1 passed, 1 skipped" in proc.stdout  # the tests themselves did not fail


def test_an_allow_listed_skip_passes_with_its_reason_printed(tmp_path: Path) -> None:
    proc = pytest_run(tmp_path, ALLOWED, CI="true")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "skipped: 1 (allow-listed: 1, not allow-listed: 0)" in proc.stdout
    assert ("allow-listed test_tiny.py::test_needs_a_capability: no capability here: this "
            "check needs it -- allowed because: CI cannot have the capability "
            "(allow-list line 3)") in proc.stdout


def test_the_allow_list_matches_the_message_too(tmp_path: Path) -> None:
    """An entry allows its test's skip for the reason it names, not any skip of it."""
    other = ALLOWED.replace("no capability here", "something else")
    proc = pytest_run(tmp_path, other, COGD_STRICT_SKIPS="1")
    assert proc.returncode == 1 and "NOT ALLOWED" in proc.stdout, proc.stdout


def test_outside_ci_a_skip_is_listed_but_does_not_fail(tmp_path: Path) -> None:
    for env in ({}, {"CI": "true", "COGD_STRICT_SKIPS": "0"}):
        proc = pytest_run(tmp_path, "", **env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "NOT ALLOWED  test_tiny.py::test_needs_a_capability" in proc.stdout


def test_a_module_skipped_whole_counts_as_a_skip(tmp_path: Path) -> None:
    tests = 'import pytest\npytest.skip("no module here", allow_module_level=True)\n'
    (tmp_path / "test_other.py").write_text("def test_runs():\n    assert True\n")
    proc = pytest_run(tmp_path, "", tests, CI="true")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "NOT ALLOWED  test_tiny.py: no module here" in proc.stdout


def test_a_strict_run_of_no_tests_exits_5(tmp_path: Path) -> None:
    proc = pytest_run(tmp_path, "", "# no tests\n", CI="true")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "no tests ran: that is a failure too (exit code 5)" in proc.stdout


def test_a_malformed_allow_list_line_is_named(tmp_path: Path) -> None:
    proc = pytest_run(tmp_path, "# ok\ntest_tiny.py::x | no reason given\n", CI="true")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "allow.txt:2: expected `<test id> | <start of the skip message> | <reason>`" \
        in proc.stderr


def test_the_repository_allow_list_gives_every_skip_a_reason() -> None:
    entries = read_allowlist(ALLOWLIST)
    assert entries and all(len(e.reason) > 40 for e in entries)
    assert all(e.test.startswith("tests/") for e in entries)
