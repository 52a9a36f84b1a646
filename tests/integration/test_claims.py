"""Knowledge updates as claim slots (issue 39 item 5) on a real Postgres: a new statement
about the same slot retires the old claim (kept, linked), recall ranks the current claim
first for "now" and the retired one for "before", the schema holds one current claim per
slot, a back-dated statement is placed in time, and `why` shows the slot's history."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.config import Settings
from agent.runtime import Runtime
from agent.services.access.introspect import why_lines
from agent.services.access.memory_api import MemoryAPI
from agent.services.memory import claims
from tests.acceptance.test_cli import run
from tests.conftest import cogd_env

BERLIN = "I live in Berlin, close to the old park."
LISBON = "I now live in Lisbon, right by the sea."
OTHERS = ("I like the trams in Lisbon a lot.", "My sister lives in Munich.",
          "I bought a new bike for the park rides.")


@pytest.fixture
def api(settings: Settings, db_url: str) -> Any:
    api = Runtime(settings).memory_api(db_url, "ana", channel="api", app="cogd-test")
    yield api
    api.close()


def _said(api: MemoryAPI) -> tuple[str, str]:
    old = api.remember(BERLIN)["memory_id"]
    for text in OTHERS:
        api.remember(text)
    new = api.remember(LISBON)["memory_id"]
    return old, new


def _first(api: MemoryAPI, question: str) -> str:
    items = api.recall(question, k=5)["items"]
    assert items, question
    return str(items[0]["content"])


def test_the_current_claim_ranks_first_now_and_the_retired_one_before(
        api: MemoryAPI, conn: psycopg.Connection[Any]) -> None:
    old, new = _said(api)
    rows = {str(r[0]): r[1:] for r in conn.execute(
        "SELECT memory_id, slot, subject, value, status, retired_by::text FROM claims")}
    assert rows == {old: ("residence", "user", "Berlin", "retired", new),
                    new: ("residence", "user", "Lisbon", "current", None)}
    # consolidation supersedes, never destroys: both memories are still active
    assert conn.execute("SELECT count(*) FROM memories WHERE memory_id = ANY(%s) "
                        "AND status = 'active'", ([old, new],)).fetchone() == (2,)
    assert _first(api, "Where do I live now?") == LISBON
    assert _first(api, "Where do I live?") == LISBON
    assert _first(api, "Where did I live before?") == BERLIN
    assert _first(api, "Where did I use to live?") == BERLIN
    # the demoted claim is still found
    found = [i["content"] for i in api.recall("Where do I live now?", k=10)["items"]]
    assert BERLIN in found
    # another user's claims are theirs: bob's statement retires nothing of ana's
    api.remember("I moved to Oslo.", user="bob")
    assert conn.execute("SELECT count(*) FROM claims WHERE status = 'current'").fetchone() == (2,)
    assert _first(api, "Where do I live now?") == LISBON


def test_the_schema_holds_one_current_claim_per_slot(
        api: MemoryAPI, conn: psycopg.Connection[Any]) -> None:
    old, new = _said(api)
    uid = conn.execute("SELECT user_id FROM claims LIMIT 1").fetchone()[0]  # type: ignore[index]
    with pytest.raises(psycopg.errors.UniqueViolation, match="ux_claims_current"):
        conn.execute("UPDATE claims SET status = 'current', retired_at = NULL, "
                     "retired_by = NULL WHERE memory_id = %s", (old,))
    with pytest.raises(psycopg.errors.CheckViolation, match="ck_claims_retired"):
        conn.execute("UPDATE claims SET status = 'retired' WHERE memory_id = %s", (new,))
    with pytest.raises(psycopg.errors.NotNullViolation):
        conn.execute("INSERT INTO claims (memory_id, subject, slot, value, valid_from, "
                     "detector) VALUES (%s, 'user', 'job', 'x', now(), 't')", (new,))
    # restating the value that holds adds no claim; a repeat of the memory neither
    api.remember("I live in Lisbon.")
    with conn.transaction():
        assert claims.record(conn, new) == []
    assert conn.execute("SELECT count(*) FROM claims WHERE user_id = %s",
                        (uid,)).fetchone() == (2,)


def _memory(conn: psycopg.Connection[Any], uid: Any, text: str, at: datetime) -> Any:
    row = conn.execute("INSERT INTO memories (user_id, content, created_at) "
                       "VALUES (%s, %s, %s) RETURNING memory_id", (uid, text, at)).fetchone()
    assert row is not None
    return row[0]


def test_a_back_dated_statement_is_placed_in_time(conn: psycopg.Connection[Any]) -> None:
    uid = conn.execute("INSERT INTO users (handle) VALUES ('cy') RETURNING user_id"
                       ).fetchone()[0]  # type: ignore[index]
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    jan = _memory(conn, uid, "I work at Acme.", t0)
    sep = _memory(conn, uid, "I started a new job at Globex.", t0 + timedelta(days=240))
    may = _memory(conn, uid, "I work as a baker at Crumbs.", t0 + timedelta(days=120))
    with conn.transaction():
        for mid in (jan, sep, may):  # the May line arrives last (an import's older line)
            claims.record(conn, mid)
    chain = [(str(h["memory_id"]), h["status"], h["retired_by"])
             for h in claims.history(conn, may)]
    assert chain == [(str(jan), "retired", str(may)), (str(may), "retired", str(sep)),
                     (str(sep), "current", None)]


def test_why_shows_the_claim_history(api: MemoryAPI, db_url: str, tmp_path: Path) -> None:
    old, new = _said(api)
    found = api.why(new)
    history = found["chain"][0]["claims"]
    assert [(h["memory_id"], h["value"], h["status"], h["this"]) for h in history] == [
        (old, "Berlin", "retired", False), (new, "Lisbon", "current", True)]
    assert history[0]["retired_by"] == new
    lines = "\n".join(why_lines(found))
    assert "claim residence of user: Berlin (retired " in lines
    assert f"by {new}" in lines and "claim residence of user: Lisbon (current since" in lines
    # the retired memory's why shows the same history, and what replaced it
    assert [h["this"] for h in api.why(old)["chain"][0]["claims"]] == [True, False]
    # `cogd why` prints it
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"))
    done = run("why", old, env=env)
    assert done.returncode == 0, done.stderr
    assert "claim residence of user: Berlin (retired" in done.stdout
    assert "Lisbon (current since" in done.stdout
    as_json = run("why", old, "--json", env=env)
    assert as_json.returncode == 0, as_json.stderr
    assert "claims" in json.dumps(json.loads(as_json.stdout))


def test_forgetting_the_current_claim_brings_back_the_one_it_retired(
        api: MemoryAPI, conn: psycopg.Connection[Any], db_url: str, tmp_path: Path) -> None:
    old, new = _said(api)
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"))
    done = run("forget", new, "--json", env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert [(str(r[0]), r[1], r[2]) for r in conn.execute(
        "SELECT memory_id, status, retired_by FROM claims")] == [(old, "current", None)]
    assert json.loads(done.stdout)["removed"]["memories"] == 1
