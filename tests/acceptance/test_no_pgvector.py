"""A real Postgres without pgvector (Debian's postgresql package) gets a clear error."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acceptance.test_cli import assert_clean_error, run
from tests.conftest import cogd_env

BINDIRS = sorted(glob.glob("/usr/lib/postgresql/*/bin"))


def _as_user(argv: list[str], user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--", *argv] if user else argv


@pytest.fixture
def plain_postgres() -> Iterator[str]:
    if not BINDIRS or not Path(BINDIRS[-1], "initdb").exists():
        pytest.skip("Debian's postgresql server is not installed (apt-get install postgresql)")
    bindir = BINDIRS[-1]
    if glob.glob("/usr/share/postgresql/*/extension/vector.control"):
        pytest.skip("the system Postgres has pgvector; this test needs one without it")
    user = None
    if os.geteuid() == 0:
        user = "postgres"
        pwd.getpwnam(user)  # created by the postgresql package
    root = Path(tempfile.mkdtemp(prefix="cogd-plainpg-"))
    root.chmod(0o777)
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    sock.chmod(0o777)
    if user:
        shutil.chown(root, user)
        shutil.chown(sock, user)
    subprocess.run(
        _as_user([f"{bindir}/initdb", "-D", str(data), "-U", "postgres", "--auth=trust"], user),
        check=True, capture_output=True, timeout=120,
    )
    port = "54329"
    subprocess.run(
        _as_user([f"{bindir}/pg_ctl", "-D", str(data), "-w", "-l", str(root / "log"), "-o",
                  f"-k {sock} -h '' -p {port}", "start"], user),
        check=True, capture_output=True, timeout=120,
    )
    try:
        yield f"postgresql://postgres@/postgres?host={sock}&port={port}"
    finally:
        subprocess.run(
            _as_user([f"{bindir}/pg_ctl", "-D", str(data), "-m", "immediate", "stop"], user),
            capture_output=True, timeout=60,
        )
        shutil.rmtree(root, ignore_errors=True)


def test_postgres_without_pgvector(plain_postgres: str, tmp_path: Path) -> None:
    env = cogd_env(DATABASE_URL=plain_postgres, COGD_DATA_DIR=str(tmp_path))
    for command in ("migrate", "up"):
        assert_clean_error(run(command, env=env), "has no pgvector extension", "pgvector/pgvector")
