"""A foreign or corrupt COGD_DATA_DIR is refused with a clear error, untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.db.embedded import validate_data_dir
from agent.errors import DataDirError


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_new_and_empty_dirs_are_fine(tmp_path: Path) -> None:
    validate_data_dir(tmp_path / "new")
    validate_data_dir(tmp_path)


def test_foreign_dir_is_refused_and_untouched(tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_text("precious")
    before = _snapshot(tmp_path)
    with pytest.raises(DataDirError, match="not a cogd data directory"):
        validate_data_dir(tmp_path)
    assert _snapshot(tmp_path) == before


def test_a_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(DataDirError, match="is a file"):
        validate_data_dir(f)


def test_corrupt_marker_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cogd.json").write_text("{garbage")
    with pytest.raises(DataDirError, match="corrupt"):
        validate_data_dir(tmp_path)


def test_pgdata_without_pg_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cogd.json").write_text('{"format": 1}')
    (tmp_path / "pg").mkdir()
    (tmp_path / "pg" / "base").mkdir()
    before = _snapshot(tmp_path)
    with pytest.raises(DataDirError, match="no PG_VERSION"):
        validate_data_dir(tmp_path)
    assert _snapshot(tmp_path) == before


def test_pgdata_of_another_major_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cogd.json").write_text('{"format": 1}')
    (tmp_path / "pg").mkdir()
    (tmp_path / "pg" / "PG_VERSION").write_text("15\n")
    with pytest.raises(DataDirError, match="PostgreSQL 15"):
        validate_data_dir(tmp_path)


def test_the_setup_lock_lives_in_the_data_dir_not_in_tmp(tmp_path: Path) -> None:
    import tempfile

    from agent.db.embedded import LOCK, _data_dir_lock

    data = tmp_path / "new" / "cogd"
    before = set(Path(tempfile.gettempdir()).glob("cogd-datadir-*.lock"))
    with _data_dir_lock(data):
        assert (data / LOCK).exists()
        validate_data_dir(data)  # the lock file alone does not make the dir foreign
    assert set(Path(tempfile.gettempdir()).glob("cogd-datadir-*.lock")) == before
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(DataDirError), _data_dir_lock(foreign):
        pass
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]  # untouched


def test_a_first_start_in_progress_is_waited_for_not_called_corrupt(tmp_path: Path) -> None:
    """While one process holds the setup lock mid-initdb (PG_VERSION written, pg_control
    not yet), another process entering the lock waits instead of refusing the dir."""
    import threading

    from agent.db.embedded import MARKER_TMP, _data_dir_lock, refuse_foreign_dir

    data = tmp_path / "cogd"
    marked = threading.Event()
    entered = threading.Event()
    release = threading.Event()
    finish = threading.Event()
    seen: list[str] = []

    def first_start() -> None:  # the order _ensure_server_locked writes things in
        with _data_dir_lock(data):
            (data / MARKER_TMP).write_text('{"format": 1}')
            marked.set()
            release.wait(10)
            (data / MARKER_TMP).replace(data / "cogd.json")
            (data / "pg").mkdir()
            (data / "pg" / "PG_VERSION").write_text("18\n")  # initdb half way
            entered.set()
            finish.wait(10)
            (data / "pg" / "global").mkdir()
            (data / "pg" / "global" / "pg_control").write_bytes(b"\0")

    def second_start() -> None:
        try:
            with _data_dir_lock(data):
                validate_data_dir(data)
                seen.append("ok")
        except DataDirError as exc:
            seen.append(str(exc))

    first = threading.Thread(target=first_start)
    first.start()
    assert marked.wait(10)
    assert refuse_foreign_dir(data) is False  # the marker's temporary file is not foreign
    release.set()
    assert entered.wait(10)
    assert refuse_foreign_dir(data) is True
    with pytest.raises(DataDirError, match="pg_control"):
        validate_data_dir(data)  # the full check would call this corrupt: not before the lock
    second = threading.Thread(target=second_start)
    second.start()
    second.join(0.5)
    assert second.is_alive(), "the second start did not wait for the lock"
    finish.set()
    first.join(10)
    second.join(10)
    assert seen == ["ok"]


def test_a_killed_postmaster_not_yet_reaped_is_a_crash_not_a_server(tmp_path: Path) -> None:
    """A zombie keeps its pid: Postgres (and pgserver) would take it for a live server.
    cogd counts it as crashed, waits for it, and says why when it is never reaped."""
    import subprocess
    import time

    from agent.db.embedded import (
        _process_state,
        _wait_for_dead_postmaster,
        crashed,
        server_running,
        stop_server,
    )

    data = tmp_path / "cogd"
    (data / "pg").mkdir(parents=True)
    (data / "cogd.json").write_text('{"format": 1}')
    assert not crashed(data)  # no postmaster.pid: stopped cleanly, or never started
    child = subprocess.Popen(["sleep", "30"])  # stands in for the postmaster
    try:
        (data / "pg" / "postmaster.pid").write_text(f"{child.pid}\n{data / 'pg'}\n")
        assert server_running(data) == child.pid and not crashed(data)
        child.kill()
        deadline = time.monotonic() + 10
        while _process_state(child.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _process_state(child.pid) == "Z"  # killed, not reaped: a zombie
        assert server_running(data) is None and crashed(data)
        with pytest.raises(DataDirError, match="never reaped"):
            _wait_for_dead_postmaster(data / "pg", time.monotonic() + 0.3)
    finally:
        child.wait()
    assert _process_state(child.pid) is None and crashed(data)
    _wait_for_dead_postmaster(data / "pg", time.monotonic())  # gone: nothing to wait for
    with pytest.raises(ValueError, match="stop mode"):
        stop_server(data, mode="now")


def test_a_data_dir_too_deep_for_a_unix_socket_is_refused(tmp_path: Path) -> None:
    """pgserver would put the socket of a deep data dir in a world-writable directory
    under /tmp; cogd refuses the data dir instead, before starting anything."""
    from agent.db.embedded import ensure_server

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    with pytest.raises(DataDirError, match=r"too deep .* choose a shorter COGD_DATA_DIR"):
        ensure_server(deep)
    assert not (deep / "pg").exists()


def test_auto_shared_buffers_is_a_quarter_of_memory_within_bounds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.db import embedded

    real = embedded.memory_bytes()
    assert real is not None and real > 2**28  # Linux: sysconf, or the cgroup's limit
    low, high = embedded.AUTO_SHARED_BUFFERS_MB
    for memory, want in ((2 * 2**30, "512MB"), (64 * 2**30, f"{high}MB"),
                         (256 * 2**20, f"{low}MB"), (None, f"{low}MB")):
        monkeypatch.setattr(embedded, "memory_bytes", lambda m=memory: m)
        assert embedded.shared_buffers_size("auto") == want
    assert embedded.shared_buffers_size("1GB") == "1GB"  # a size is passed as written


def test_config_refuses_a_shared_buffers_postgres_would_not_read() -> None:
    from pydantic import ValidationError

    from agent.config import DatabaseSettings

    assert DatabaseSettings(embedded_shared_buffers="256MB").embedded_shared_buffers == "256MB"
    for bad in ("lots", "1 GB", "0MB", "-1GB", "1gb", "", "64kB", "9TB"):
        with pytest.raises(ValidationError, match="embedded_shared_buffers"):
            DatabaseSettings(embedded_shared_buffers=bad)


def test_embedded_server_starts_with_the_configured_shared_buffers(tmp_path: Path) -> None:
    """[database] embedded_shared_buffers reaches Postgres through pg/cogd.conf when cogd
    starts the server; a running server keeps its own, and a start without a value (the
    restart after a crash) keeps the last one written."""
    import psycopg

    from agent.db.embedded import SERVER_CONF, ensure_server, stop_server

    data = tmp_path / "sb"

    def shown() -> str:
        with psycopg.connect(ensure_server(data).uri) as conn:
            row = conn.execute("SHOW shared_buffers").fetchone()
        assert row is not None
        return str(row[0])

    try:
        ensure_server(data, shared_buffers="160MB")
        assert shown() == "160MB"
        ensure_server(data, shared_buffers="192MB")  # running: left as it is
        assert shown() == "160MB"
        stop_server(data)
        ensure_server(data)  # no value: the last written one
        assert shown() == "160MB"
        stop_server(data)
        ensure_server(data, shared_buffers="144MB")
        assert shown() == "144MB"
        conf = (data / "pg" / "postgresql.conf").read_text()
        assert conf.count(f"include_if_exists = '{SERVER_CONF}'") == 1  # added once
        assert (data / "pg" / SERVER_CONF).stat().st_mode & 0o777 == 0o600
    finally:
        stop_server(data)
