"""`cogd export --user HANDLE`: one user's turns as JSONL that `cogd import` reads back."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.acceptance.test_cli import COGD, assert_clean_error, run
from tests.acceptance.test_memory_cli import env_for
from tests.conftest import create_db, drop_db

SECRET = "Ben's locker combination is 7-31-9"

# two users, three sessions, named and unnamed speakers, several zones, a session whose
# timestamps are out of file order, two sessions with the same instant (the tie-break),
# a line without external_id (the importer derives one), text with newlines and non-ASCII
SOURCE: list[dict[str, Any]] = [
    {"session": "trip", "speaker": "Ana", "role": "user", "user": "ana",
     "content": "Let's plan the Lisbon trip for May.", "timestamp": "2026-03-01T09:00:00Z",
     "external_id": "t-1"},
    {"session": "trip", "speaker": "cogd", "role": "assistant", "user": "ana",
     "content": "Sure: flights first,\nthen a hotel near Alfama.",
     "timestamp": "2026-03-01T10:00:01.250000+01:00", "external_id": "t-2"},
    {"session": "trip", "speaker": "Rui", "role": "user", "user": "ana",
     "content": "Rui here: I booked the tram tour (eléctrico 28) 🚋",
     "timestamp": "2026-03-01T09:30:00Z", "external_id": "t-3"},
    {"session": "trip", "role": "assistant", "user": "ana",
     "content": "Noted\u2028the tour is on day two.", "timestamp": "2026-03-01T09:45:00Z"},
    {"session": "work", "speaker": "Ana", "role": "user", "user": "ana",
     "content": "Remind me that the budget review moved to Friday.",
     "timestamp": "2026-03-01T09:00:00Z", "external_id": "w-1"},
    {"session": "work", "speaker": "cogd", "role": "system", "user": "ana",
     "content": "Budget review: Friday 14:00.", "timestamp": "2026-03-02T08:00:00-05:00",
     "external_id": "w-2"},
    {"session": "ben-chat", "speaker": "Ben", "role": "user", "user": "ben",
     "content": SECRET, "timestamp": "2026-03-01T09:10:00Z", "external_id": "b-1"},
    {"session": "ben-chat", "speaker": "cogd", "role": "assistant", "user": "ben",
     "content": "I will keep that safe, Ben.", "timestamp": "2026-03-01T09:11:00Z",
     "external_id": "b-2"},
]
ANA_TURNS = 6


@pytest.fixture
def second_db_url(pg_admin_url: str, template_db: str) -> Iterator[str]:
    """Another migrated database: where an export is imported."""
    name, url = create_db(pg_admin_url, template_db)
    yield url
    drop_db(pg_admin_url, name)


def turns_of(db_url: str, handle: str) -> list[tuple[Any, ...]]:
    """A user's exportable turns as (session key, speaker, role, content, created_at)."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT coalesce(s.external_id, s.session_id::text), d.speaker, d.role, d.content,"
            " d.created_at FROM day_table d JOIN sessions s USING (session_id)"
            " JOIN users u ON u.user_id = coalesce(d.user_id, s.user_id)"
            " WHERE u.handle = %s AND d.message_type IN ('dialogue', 'system')"
            " ORDER BY d.created_at, 1, d.content", (handle,)
        ).fetchall()
    return rows


def import_json(path: Path, env: dict[str, str]) -> dict[str, Any]:
    proc = run("import", str(path), "--json", env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    assert report["errors"] == 0, report
    return report


def test_export_round_trips_through_import(
    db_url: str, second_db_url: str, tmp_path: Path
) -> None:
    src = tmp_path / "history.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in SOURCE))
    env_a, env_b = env_for(db_url, tmp_path), env_for(second_db_url, tmp_path)
    assert import_json(src, env_a)["inserted"] == len(SOURCE)
    with psycopg.connect(db_url) as conn:  # the agent's own notes, which stay out
        conn.execute(
            "INSERT INTO day_table (session_id, user_id, role, content, message_type)"
            " SELECT session_id, user_id, 'system', note, kind FROM sessions,"
            " (VALUES ('[epiphany] memory drifted', 'epiphany'),"
            "         ('thinking about Lisbon privately', 'internal_monologue')) v(note, kind)"
            " WHERE external_id = 'trip'")

    out = tmp_path / "ana.jsonl"
    proc = run("export", "--user", "ana", "--output", str(out), "--json", env=env_a)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"user": "ana", "turns": ANA_TURNS, "sessions": 2,
                                       "path": str(out), "skipped": 0, "skipped_turns": []}
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".ana")] == []
    text = out.read_text()
    assert SECRET not in text and "Ben" not in text and "ben" not in text
    assert "epiphany" not in text and "privately" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) == ANA_TURNS
    assert all(set(line) == {"session", "speaker", "role", "content", "timestamp",
                             "external_id", "user"} for line in lines)
    assert {line["user"] for line in lines} == {"ana"}
    stamps = [line["timestamp"] for line in lines]
    assert stamps == sorted(stamps) and all(s.endswith("+00:00") for s in stamps)
    # the tie at 09:00Z: sessions by key ("trip" < "work")
    assert [line["external_id"] for line in lines[:2]] == ["t-1", "w-1"]
    unnamed = next(line for line in lines if line["content"].startswith("Noted"))
    assert unnamed["speaker"] is None and unnamed["external_id"].startswith("sha256:")

    # into a fresh database: the same turns, sessions, speakers, roles and instants
    assert import_json(out, env_b)["inserted"] == ANA_TURNS
    assert turns_of(second_db_url, "ana") == turns_of(db_url, "ana")
    assert turns_of(second_db_url, "ben") == []
    # exported again from there: byte for byte the same file (over a stale 0644 one)
    again = tmp_path / "again.jsonl"
    again.write_text("stale\n")
    again.chmod(0o644)
    proc = run("export", "--user", "ana", "--output", str(again), env=env_b)
    assert proc.returncode == 0, proc.stderr
    assert f"exported {ANA_TURNS} turns in 2 sessions of ana" in proc.stdout
    assert again.read_bytes() == out.read_bytes()
    assert stat.S_IMODE(again.stat().st_mode) == 0o600

    # idempotent: importing the export again adds nothing, to either database
    for env in (env_a, env_b):
        report = import_json(out, env)
        assert (report["inserted"], report["duplicates"]) == (0, ANA_TURNS)
    assert len(turns_of(db_url, "ana")) == ANA_TURNS

    # stdout (the default): the same bytes and no summary, with --json too
    for extra in ((), ("--json",), ("--output", "-")):
        proc = subprocess.run([COGD, "export", "--user", "ana", *extra], env=env_a,
                              capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == out.read_bytes()


def test_unknown_user_is_a_clean_error_and_writes_nothing(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    target = tmp_path / "nobody.jsonl"
    assert_clean_error(run("export", "--user", "nobody", "--output", str(target), env=env),
                       "no user 'nobody'")
    assert list(tmp_path.glob("*nobody*")) == []
    assert_clean_error(run("export", "--user", "nobody", env=env), "no user 'nobody'")
    missing = tmp_path / "missing" / "a.jsonl"  # the user is checked first
    assert_clean_error(run("export", "--user", "ana", "--output", str(missing), env=env),
                       "no user 'ana'")
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps(SOURCE[0]) + "\n")
    import_json(src, env)
    assert_clean_error(run("export", "--user", "ana", "--output", str(missing), env=env),
                       "cannot write", str(missing))


def test_live_turns_get_stable_ids_and_session_uuids(
    db_url: str, second_db_url: str, tmp_path: Path
) -> None:
    env_a, env_b = env_for(db_url, tmp_path), env_for(second_db_url, tmp_path)
    chat = subprocess.run(
        [COGD, "chat", "--user", "cara"], env=env_a, capture_output=True, text=True,
        input="I like hiking in the Alps.\n/remember my bike lock code is 2291\nthanks\n",
        timeout=300)
    assert chat.returncode == 0, chat.stderr
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT d.entry_id::text, d.session_id::text, d.message_type FROM day_table d"
            " JOIN users u USING (user_id) WHERE u.handle = 'cara'"
            " ORDER BY d.created_at, d.turn_number").fetchall()
    assert {r[2] for r in rows} == {"dialogue", "system"}  # chat turns and the /remember

    out = tmp_path / "cara.jsonl"
    proc = run("export", "--user", "cara", "--output", str(out), env=env_a)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["external_id"] for line in lines] == [f"cogd:{r[0]}" for r in rows]
    assert {line["session"] for line in lines} == {rows[0][1]}  # no external id: the uuid
    assert {line["speaker"] for line in lines} == {None}
    assert "my bike lock code is 2291" in {line["content"] for line in lines}

    assert import_json(out, env_b)["inserted"] == len(rows)
    assert turns_of(second_db_url, "cara") == turns_of(db_url, "cara")
    again = tmp_path / "again.jsonl"
    assert run("export", "--user", "cara", "--output", str(again), env=env_b).returncode == 0
    assert again.read_bytes() == out.read_bytes()
    assert import_json(out, env_b)["inserted"] == 0
    # and into the database it came from: a live turn is known by its entry id there
    assert import_json(out, env_a)["inserted"] == 0
    assert os.stat(out).st_mode & 0o077 == 0
