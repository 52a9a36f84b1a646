"""What a new session carries, for other programs (issue 42 item 6): the handoff, the
mood, the corrections and the intentions, over MCP (the SDK's own client, stdio) and over
HTTP (`cogd serve`), each scoped to the caller's user; a real Postgres behind both.

The data is written the way cogd writes it: a chat turn (imported) back-dated a day,
so the next session is a "catch up" with that session's note; an open intention with a
due date, and a fulfilled one; a correction with its fails_when / fine_when; a finished
night cycle run with a block of the user's. Another user's correction and intention are
there too, and must not show.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.acceptance.test_cli import COGD, run
from tests.acceptance.test_mcp import drive, stdio, wait_listening
from tests.acceptance.test_memory_cli import env_for
from tests.conftest import free_port

NOTE_TEXT = "I am migrating the billing service to Postgres this week."
PLAN = "Send the quarterly invoice to Marta"
DONE = "Book the dentist appointment"
CORRECTION = "The staging deploy needs the --force flag only for schema changes"
FAILS, FINE = "a database migration is pending", "the schema is unchanged"
BRIEF = "The user and the agent walked through the billing migration checklist."
OTHERS = "Erin's secret garden plan with raised beds"
DUE = datetime(2031, 3, 14, 9, 30, tzinfo=UTC)


def _uid(conn: psycopg.Connection[Any], handle: str) -> Any:
    row = conn.execute("SELECT user_id FROM users WHERE handle = %s", (handle,)).fetchone()
    if row is None:
        row = conn.execute("INSERT INTO users (handle) VALUES (%s) RETURNING user_id",
                           (handle,)).fetchone()
    assert row is not None
    return row[0]


def seed(db_url: str, handle: str) -> dict[str, str]:
    """After the user's turn (NOTE_TEXT) exists: it moves a day back; the user gets an
    open intention (due), a fulfilled one, a correction and a night's block; `erin` an
    intention and a correction of her own. Returns the ids."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        uid, erin = _uid(conn, handle), _uid(conn, "erin")
        turn = conn.execute("SELECT entry_id, session_id FROM day_table WHERE user_id = %s "
                            "AND content = %s", (uid, NOTE_TEXT)).fetchone()
        assert turn is not None, "the user's turn was not written"
        entry, session = turn
        conn.execute("UPDATE day_table SET created_at = created_at - interval '26 hours' "
                     "WHERE user_id = %s", (uid,))

        def intention(user: Any, content: str, status: str = "open",
                      due: datetime | None = None) -> str:
            row = conn.execute(
                "INSERT INTO intentions (user_id, kind, content, status, due_at, resolved_at) "
                "VALUES (%s, 'plan', %s, %s, %s, CASE WHEN %s = 'open' THEN NULL ELSE now() "
                "END) RETURNING intention_id", (user, content, status, due, status)).fetchone()
            assert row is not None
            return str(row[0])

        def correction(user: Any, content: str) -> str:
            row = conn.execute(
                "INSERT INTO memories (memory_type, content, fails_when, fine_when, user_id) "
                "VALUES ('correction', %s, %s, %s, %s) RETURNING memory_id",
                (content, FAILS, FINE, user)).fetchone()
            assert row is not None
            return str(row[0])

        ids = {"plan": intention(uid, PLAN, due=DUE), "done": intention(uid, DONE, "fulfilled"),
               "correction": correction(uid, CORRECTION)}
        intention(erin, OTHERS)
        correction(erin, OTHERS)
        run = conn.execute("INSERT INTO night_cycle_runs (status, finished_at, summary) "
                           "VALUES ('done', now(), '{}'::jsonb) RETURNING run_id").fetchone()
        assert run is not None
        at = datetime.now(UTC) - timedelta(hours=20)
        prose = {"live_zones": [{"start": 0, "end": 1, "content": BRIEF, "why": "arc peak"}],
                 "dead_zone_summaries": [], "kind": "arc"}
        block = conn.execute(
            "INSERT INTO holographic_blocks (prose, flux_metrics, salience_scores, "
            "coherence_gain, ties_merge_weight, session_id, user_id, run_id, arc_start_time, "
            "arc_end_time) VALUES (%s::jsonb, %s::jsonb, '{}', 0.5, 0.8, %s, %s, %s, %s, %s) "
            "RETURNING block_id",
            (json.dumps(prose), json.dumps({"kind": "arc", "entry_ids": [str(entry)]}),
             session, uid, run[0], at, at + timedelta(minutes=5))).fetchone()
        assert block is not None
        ids.update(run=str(run[0]), block=str(block[0]), entry=str(entry))
    return ids


def check(got: dict[str, Any], ids: dict[str, str], handle: str) -> None:
    """The four answers for the user: their own data, with ids, none of erin's."""
    hand, mood, corr, open_, every = (got[k] for k in ("handoff", "mood", "corrections",
                                                        "intentions", "all"))
    assert OTHERS not in json.dumps(got)
    # the handoff: a day's gap, the note of the last session, the open intention, the brief
    assert hand["user"] == handle and hand["mode"] == "catch_up", hand
    assert hand["gap_minutes"] > 24 * 60
    assert hand["brief"] == int(ids["run"])
    items = {i["kind"]: i for i in hand["items"]}
    assert {"note", "intention", "brief"} <= set(items), hand["items"]
    assert NOTE_TEXT in items["note"]["text"]
    assert f"day_table:{ids['entry']}" in items["note"]["source_ids"]
    assert items["intention"]["id"] == f"intention:{ids['plan']}"
    assert items["brief"]["id"] == f"block:{ids['block']}"
    assert PLAN in hand["text"] and BRIEF in hand["text"] and DONE not in hand["text"]
    # the mood: the temperament until a chat turn moves it, as the prompt's tendency line
    assert mood["user"] == handle and mood["temperament"] is True
    assert {"valence", "energy", "openness", "label"} <= set(mood)
    assert -1 <= mood["valence"] <= 1 and 0 <= mood["energy"] <= 1
    assert mood["tendency"].startswith("You feel ") and mood["label"] in mood["tendency"]
    # the corrections: the user's own, with fails_when / fine_when and its id
    assert corr["user"] == handle
    assert [(c["id"], c["content"], c["fails_when"], c["fine_when"], c["shared"])
            for c in corr["corrections"]] == [(ids["correction"], CORRECTION, FAILS, FINE,
                                               False)]
    assert f"fails when {FAILS}" in corr["corrections"][0]["line"]
    # the intentions: the open one with its due date; `all` adds the fulfilled one
    assert [(i["id"], i["content"], i["status"]) for i in open_["intentions"]] == [
        (ids["plan"], PLAN, "open")]
    assert datetime.fromisoformat(open_["intentions"][0]["due_at"]) == DUE
    assert [(i["id"], i["status"]) for i in every["intentions"]] == [
        (ids["plan"], "open"), (ids["done"], "fulfilled")]


def test_handoff_mood_corrections_intentions_over_mcp(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)

    async def read(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ("handoff", "mood", "corrections", "intentions"):
            res = await c.call_tool(name, {})
            assert not res.is_error, (name, [getattr(p, "text", "") for p in res.content])
            out[name] = res.structured_content
        out["all"] = (await c.call_tool("intentions", {"status": "all"})).structured_content
        bad = await c.call_tool("intentions", {"status": "someday"})
        out["bad"] = (bad.is_error, " ".join(getattr(p, "text", "") for p in bad.content))
        tools = {t.name: t for t in (await c.list_tools()).tools}
        out["described"] = {n: tools[n].description for n in
                            ("handoff", "mood", "corrections", "intentions")}
        return out

    lines = tmp_path / "chat.jsonl"  # the last session: a chat of the day before
    lines.write_text(json.dumps({"session": "billing", "user": "dana", "role": "user",
                                 "content": NOTE_TEXT, "external_id": "n1"}) + "\n")
    imported = run("import", str(lines), "--json", env=env, timeout=300)
    assert imported.returncode == 0 and json.loads(imported.stdout)["inserted"] == 1, (
        imported.stdout, imported.stderr)
    ids = seed(db_url, "dana")
    got = drive(stdio(env, "--user", "dana"), read)  # a new process: a new session
    check(got, ids, "dana")
    assert got["bad"][0] and "status must be one of open, fulfilled, dropped" in got["bad"][1]
    assert all(d and len(d) > 60 for d in got["described"].values()), got["described"]


@pytest.fixture
def api(db_url: str, tmp_path: Path) -> Iterator[dict[str, httpx.Client]]:
    """`cogd serve` on a free port, and a client for alice, bob and no token."""
    env = env_for(db_url, tmp_path)
    tokens = {}
    for user in ("alice", "bob"):
        made = run("token", "create", "--user", user, "--create-user", "--json", env=env)
        assert made.returncode == 0, made.stderr
        tokens[user] = json.loads(made.stdout)["token"]
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([COGD, "serve", "--port", str(port)], env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    clients = {user: httpx.Client(base_url=base, timeout=120,
                                  headers={"Authorization": f"Bearer {token}"})
               for user, token in tokens.items()} | {"anon": httpx.Client(base_url=base)}
    try:
        wait_listening(proc, port, log, "cogd serve")
        yield clients
    finally:
        for c in clients.values():
            c.close()
        proc.terminate()
        proc.wait(60)
    assert "Traceback" not in log.read_text()


def test_handoff_mood_corrections_intentions_over_http(
        api: dict[str, httpx.Client], db_url: str) -> None:
    alice, bob = api["alice"], api["bob"]
    line = {"session": "billing", "role": "user", "content": NOTE_TEXT, "external_id": "n1"}
    assert alice.post("/v1/import", content=json.dumps(line)).json()["inserted"] == 1
    ids = seed(db_url, "alice")
    got = {k: alice.get(f"/v1/{k}") for k in ("handoff", "mood", "corrections", "intentions")}
    got["all"] = alice.get("/v1/intentions", params={"status": "all"})
    assert all(r.status_code == 200 for r in got.values()), {k: r.text for k, r in got.items()}
    check({k: r.json() for k, r in got.items()}, ids, "alice")
    # bob's token: his own (empty) views, none of alice's
    theirs = {k: bob.get(f"/v1/{k}").json() for k in ("handoff", "corrections", "intentions")}
    assert theirs["handoff"]["user"] == "bob" and theirs["handoff"]["text"] is None
    assert theirs["corrections"]["corrections"] == [] and theirs["intentions"]["intentions"] == []
    for k in ("handoff", "mood", "corrections", "intentions"):
        assert bob.get(f"/v1/{k}").status_code == 200
        assert api["anon"].get(f"/v1/{k}").status_code == 401
    # bad query parameters: 400 with what is wrong
    bad_params: list[tuple[str, dict[str, Any], str]] = [
            ("/v1/intentions", {"status": "someday"}, "status must be one of"),
            ("/v1/intentions", {"limit": 0}, "limit must be 1-500"),
            ("/v1/corrections", {"limit": 501}, "limit must be 1-500")]
    for path, params, fragment in bad_params:
        bad = alice.get(path, params=params)
        assert bad.status_code == 400, bad.text
        assert fragment in bad.json()["error"]["message"], bad.text
