"""`cogd db-url --readonly`, and API keys kept out of output, logs and rows (issue #8)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.acceptance.test_cli import COGD, assert_clean_error, embedded_dir, run  # noqa: F401
from tests.conftest import cogd_env
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401


def test_db_url_readonly_on_embedded_defaults(embedded_dir: Path) -> None:  # noqa: F811
    env = cogd_env(COGD_DATA_DIR=str(embedded_dir))
    # a fresh server: no roles until the first migration
    assert_clean_error(run("db-url", "--readonly", env=env),
                       "role cogd_readonly does not exist", "cogd migrate")
    assert run("migrate", env=env).returncode == 0
    proc = run("db-url", "--readonly", env=env)
    assert proc.returncode == 0, proc.stderr
    url = proc.stdout.strip()
    assert url.startswith("postgresql://cogd_readonly@/cogd?host=")
    assert url.split("?")[1] == run("db-url", env=env).stdout.strip().split("?")[1]
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("cogd_readonly",)
        assert conn.execute("SELECT count(*) FROM v_memories").fetchone() == (0,)
        conn.execute("SELECT * FROM v_processes").fetchall()
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="permission denied for table day_table"):
            conn.execute("SELECT * FROM day_table")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO audit_log (actor, action) VALUES ('ro', 'x')")
    assert "COGD_READONLY_PASSWORD" in run("db-url", "--help", env=env).stdout


def test_db_url_readonly_with_database_url(db_url: str, tmp_path: Path) -> None:
    env = cogd_env(DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"))
    plain = run("db-url", "--readonly", env=env)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.strip() == db_url.replace("postgres:@", "cogd_readonly@", 1)
    env["COGD_READONLY_PASSWORD"] = "pw with/odd:chars"
    url = run("db-url", "--readonly", env=env).stdout.strip()
    assert "cogd_readonly:pw%20with%2Fodd%3Achars@" in url
    with psycopg.connect(url) as conn:  # trust auth on the test server ignores it
        assert conn.execute("SELECT current_user").fetchone() == ("cogd_readonly",)


# -- secrets ----------------------------------------------------------------------------


class EchoingAuthServer:
    """An OpenAI-compatible endpoint that refuses every key and, like a careless proxy,
    echoes it whole in the error message (next to OpenAI's own masked form)."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _refuse(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                masked = f"{token[:8]}{'*' * 20}{token[-4:]}"  # OpenAI's own style
                body = json.dumps({"error": {
                    "message": f"Incorrect API key provided: {token} ({masked}).",
                    "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _refuse

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def echo_server() -> Iterator[EchoingAuthServer]:
    server = EchoingAuthServer()
    yield server
    server.stop()


def _openai_env(db_url: str, data: Path, key: str, base_url: str) -> dict[str, str]:
    roles = {f"COGD_LLM__ROLES__{r}": "openai"
             for r in ("SYSTEM1", "SYSTEM2", "CONSOLIDATION", "NIGHT_CYCLE")}
    return cogd_env(
        COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(data), OPENAI_API_KEY=key,
        COGD_LLM__PROFILES__OPENAI__BASE_URL=base_url,
        COGD_LLM__PROFILES__OPENAI__MODEL="stub-chat",
        COGD_EMBEDDING__NATIVE_PROVIDER="openai",
        COGD_EMBEDDING__NATIVE_MODEL="text-embedding-3-small",  # the stub honours dimensions
        COGD_EMBEDDING__NATIVE_BASE_URL=base_url,
        COGD_RETRY__MAX_RETRIES="0", COLUMNS="500", **roles)


def _dump(db_url: str) -> str:
    """Every row of every table in the database, as text."""
    with psycopg.connect(db_url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND table_type = 'BASE TABLE' ORDER BY 1")]
        assert len(tables) > 25
        return "\n".join(r[0] for t in tables
                         for r in conn.execute(f"SELECT t::text FROM {t} t"))


def _files(*roots: Path) -> bytes:
    return b"\n".join(p.read_bytes() for root in roots if root.exists()
                      for p in sorted(root.rglob("*")) if p.is_file())


def _server_log(db_url: str) -> bytes:
    with psycopg.connect(db_url) as conn:
        pgdata = Path(str(conn.execute("SHOW data_directory").fetchone()[0]))  # type: ignore[index]
    log = pgdata / "log"
    return log.read_bytes() if log.is_file() else b""


class Cogd:
    """Runs `cogd -vv ...` and keeps everything it printed; a line holding the secret fails
    on the spot, naming the command."""

    def __init__(self, env: dict[str, str], secret: str) -> None:
        self.env, self.secret = env, secret
        self.outputs: list[str] = []

    def __call__(self, *args: str, stdin: str | None = None, rc: int = 0,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([COGD, "-vv", *args], input=stdin, env=env or self.env,
                              capture_output=True, text=True, timeout=300)
        self.outputs.extend((proc.stdout, proc.stderr))
        leaks = [line.strip()[:300] for line in (proc.stdout + proc.stderr).splitlines()
                 if self.secret in line]
        assert not leaks, (args, leaks[:3])
        assert proc.returncode == rc, (args, proc.returncode, proc.stdout, proc.stderr)
        return proc


def assert_nowhere(key: str, db_url: str, data: Path, outputs: list[str]) -> None:
    """Not in what the CLI printed, not in any row of any table, not in a file of the data
    dir, not in the Postgres server log; also with whitespace squeezed out (wrapped lines)."""
    secret = key.removeprefix("sk-test-FAKE-")
    rows = _dump(db_url)
    haystacks = {"cli output": "\n".join(outputs).encode(), "rows": rows.encode(),
                 "data dir files": _files(data), "server log": _server_log(db_url)}
    for where, text in haystacks.items():
        squeezed = b"".join(text.split())
        for needle in (key, secret, secret[:16], secret[16:]):
            assert needle.encode() not in text, f"{needle} in {where}"
            assert needle.encode() not in squeezed, f"{needle} in {where} (wrapped)"


def test_api_key_never_reaches_output_logs_or_rows(
    db_url: str, tmp_path: Path, stub_server: StubServer, echo_server: EchoingAuthServer
) -> None:
    secret = uuid.uuid4().hex
    key = f"sk-test-FAKE-{secret}"
    data = tmp_path / "data"
    cogd = Cogd(_openai_env(db_url, data, key, stub_server.openai_base_url), secret)
    assert "The stub heard you say" in cogd("ask", "what is the capital of France?").stdout
    cogd("ask", "--no-stream", "--json", "and of Spain?")
    chat = cogd("chat", "--user", "sam", "--session", "s1", "--json",
                stdin="Remember this: my locker code is 4512.\nWhat is my locker code?\n")
    assert len(chat.stdout.splitlines()) == 2
    cogd("consolidate", "--once", "--json")
    cogd("idle", "--once", "--json")
    cogd("recall", "locker code", "--json")
    cogd("models", "--json")
    cogd("embed", "--native", "hello")
    cogd("status", "--json")
    # the provider refuses the key (401): the error says so and names the variable
    stub_server.fail_next(1, 401)
    refused = cogd("ask", "--no-stream", "who am I?", rc=2)
    assert "HTTP 401" in refused.stderr and "OPENAI_API_KEY" in refused.stderr
    # a provider that echoes the key in its error body: the one-line error redacts it
    echo = _openai_env(db_url, data, key, echo_server.url)
    echoed = cogd("ask", "--no-stream", "who am I?", rc=2, env=echo)
    assert "HTTP 401" in echoed.stderr and "Incorrect API key provided: ***" in echoed.stderr
    # the key was really used: the stub saw it, and llm_calls recorded the calls
    assert any(r.headers.get("authorization") == f"Bearer {key}" for r in stub_server.requests)
    with psycopg.connect(db_url) as conn:
        calls = conn.execute("SELECT count(*) FROM llm_calls WHERE provider = 'openai' AND ok"
                             ).fetchone()
        assert calls is not None and calls[0] > 0
    assert "my locker code is 4512" in _dump(db_url)  # the dump does read the rows
    # the embedded test server's log is read too (an external COGD_TEST_DATABASE_URL: skipped)
    assert _server_log(db_url) or os.environ.get("COGD_TEST_DATABASE_URL")
    assert_nowhere(key, db_url, data, cogd.outputs)


def test_a_key_echoed_by_the_provider_stays_out_of_worker_logs(
    db_url: str, tmp_path: Path, echo_server: EchoingAuthServer
) -> None:
    secret = uuid.uuid4().hex
    key = f"sk-test-FAKE-{secret}"
    data = tmp_path / "data"
    cogd = Cogd(_openai_env(db_url, data, key, echo_server.url), secret)
    chat = cogd("chat", "--user", "sam", stdin="Is my key safe with you?\n")
    assert "the key was refused" in chat.stdout
    cogd("consolidate", "--once")
    with psycopg.connect(db_url) as conn:
        failed = conn.execute("SELECT error FROM llm_calls WHERE NOT ok").fetchall()
        assert failed and all("***" in r[0] for r in failed)  # recorded, redacted
    assert_nowhere(key, db_url, data, cogd.outputs)


# a Python that a second OS user may run (the venv's may live under /root, 0700)
SYSTEM_PYTHON = "/usr/bin/python3"
# run as an unprivileged OS user: every path that holds conversation text is refused
PROBE = r"""
import json, os, socket, sys
out = {}
for name, path in json.loads(sys.argv[1]).items():
    try:
        if name == "socket":
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.close()
        elif os.path.isdir(path) if os.access(path, os.F_OK) else False:
            os.listdir(path)
        else:
            open(path, "rb").close()
        out[name] = "open"
    except PermissionError:
        out[name] = "denied"
    except OSError as exc:
        out[name] = type(exc).__name__
print(json.dumps(out))
"""


def test_an_unprivileged_user_reads_none_of_the_data_dir(embedded_dir: Path) -> None:  # noqa: F811
    """The data dir, pg/, cortex/, the marker, the locks and a morning brief, as a second
    OS user (`nobody`) sees them: modes 0700 / 0600 (the data dir 0711 as root, so that
    Postgres's OS user can pass through), nothing listed or read, no socket reached."""
    import shutil
    import stat
    from datetime import UTC, datetime

    from night_cycle.artifacts import RunDir

    if os.geteuid() != 0:  # allow-listed (tests/skip-allowlist.txt); as root it must run
        pytest.skip("not root: acting as a second OS user (runuser) needs root")
    assert shutil.which("runuser"), "runuser (util-linux) is needed to act as a second OS user"
    assert Path(SYSTEM_PYTHON).exists(), f"{SYSTEM_PYTHON} is needed to run the probe as nobody"
    env = cogd_env(COGD_DATA_DIR=str(embedded_dir))
    out = run("status", "--json", env=env)
    assert out.returncode == 0, out.stderr
    brief = RunDir.for_run(embedded_dir, 1, datetime.now(UTC)).write_once("brief.md", "said")
    assert brief is not None
    mode = {p: stat.S_IMODE(p.stat().st_mode) for p in (
        embedded_dir, embedded_dir / "pg", embedded_dir / "cortex", embedded_dir / "cogd.json",
        embedded_dir / ".cogd.lock", embedded_dir / ".pgserver.lock", brief.parent.parent,
        brief.parent, brief)}
    assert mode == {
        embedded_dir: 0o711, embedded_dir / "pg": 0o700, embedded_dir / "cortex": 0o700,
        embedded_dir / "cogd.json": 0o600, embedded_dir / ".cogd.lock": 0o600,
        embedded_dir / ".pgserver.lock": 0o600, brief.parent.parent: 0o700,
        brief.parent: 0o700, brief: 0o600}
    # pgserver opens every parent to everyone; they are put back, searchable only
    # (pytest makes tmp_path 0700)
    assert stat.S_IMODE(embedded_dir.parent.stat().st_mode) == 0o711
    paths = {"data_dir": embedded_dir, "pg": embedded_dir / "pg",
             "cortex": embedded_dir / "cortex", "marker": embedded_dir / "cogd.json",
             "brief": brief, "socket": embedded_dir / "pg" / ".s.PGSQL.5432"}
    probe = subprocess.run(
        ["runuser", "-u", "nobody", "--", SYSTEM_PYTHON, "-c", PROBE,
         json.dumps({k: str(v) for k, v in paths.items()})],
        capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout) == dict.fromkeys(paths, "denied")


def test_the_daemon_logs_in_as_the_app_role_on_embedded_defaults(
    embedded_dir: Path, tmp_path: Path,  # noqa: F811
) -> None:
    """`cogd up` on the embedded server: the supervisor and every worker log in as
    cogd_app (not the owner with SET ROLE); only the migration is the owner's."""
    import time

    env = cogd_env(COGD_DATA_DIR=str(embedded_dir), COGD_PROCESS__HEARTBEAT_INTERVAL_S="0.5",
                   **{f"COGD_LLM__ROLES__{r}": "heuristic"
                      for r in ("SYSTEM1", "SYSTEM2", "CONSOLIDATION")})
    owner = run("db-url", env=env).stdout.strip()
    log = (tmp_path / "up.log").open("w")
    up = subprocess.Popen([COGD, "up", "--workers", "loop,consolidate"], env=env,
                          stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        seen: dict[str, str] = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and up.poll() is None:
            with psycopg.connect(owner, autocommit=True) as conn:
                seen = dict(conn.execute(
                    "SELECT split_part(application_name, '@', 1), usename::text "
                    "FROM pg_stat_activity WHERE application_name ~ '^cogd-(up|loop|consolidate)@'"
                ).fetchall())
            if {"cogd-up", "cogd-loop", "cogd-consolidate"} <= set(seen):
                break
            time.sleep(0.3)
        assert {"cogd-up", "cogd-loop", "cogd-consolidate"} <= set(seen), (
            seen, (tmp_path / "up.log").read_text()[-2000:])
        assert set(seen.values()) == {"cogd_app"}, seen
    finally:
        up.send_signal(2)
        try:
            up.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, 9)
            up.wait()
        log.close()
