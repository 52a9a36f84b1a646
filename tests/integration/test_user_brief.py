"""A morning brief per user (issue 42 item 8; seed 000 §9.7) on a real database: a TL;DR
first, the predictions falling due, the model updates and the open contradictions, each
user's own; the handoff and `cogd://brief/latest` (MemoryAPI.brief) show the latest one
of the caller, never another user's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from agent.config import Settings
from agent.runtime import Runtime
from night_cycle.runner import NightCycle
from tests.conftest import make_session, user_of


def _user(conn: Any, handle: str) -> Any:
    sid = make_session(conn, handle)
    return user_of(conn, sid)


def _seed(conn: Any, user: Any, word: str, due_in: timedelta) -> dict[str, str]:
    def one(sql: str, *args: Any) -> str:
        return str(conn.execute(sql, args).fetchone()[0])

    ids = {
        "due": one("INSERT INTO predictions (user_id, statement, confidence, deadline, made_by, "
                   "detector) VALUES (%s, %s, 0.7, %s, 'user', 'test') RETURNING prediction_id",
                   user, f"The {word} shipment arrives on time.",
                   datetime.now(UTC) + due_in),
        "late": one("INSERT INTO predictions (user_id, statement, deadline, made_by, detector) "
                    "VALUES (%s, %s, %s, 'user', 'test') RETURNING prediction_id",
                    user, f"The {word} ferry is back by autumn.",
                    datetime.now(UTC) + timedelta(days=90)),
        "model": one("INSERT INTO cognitive_models (user_id, statement, detector) VALUES "
                     "(%s, %s, 'test') RETURNING model_id",
                     user, f"Deadlines slip when the {word} team is short-staffed."),
    }
    a, b = (one("INSERT INTO memories (user_id, content, memory_type) VALUES (%s, %s, 'fact') "
                "RETURNING memory_id", user, text)
            for text in (f"The {word} office opens at 8.", f"The {word} office opens at 10."))
    conn.execute("INSERT INTO memory_links (source_id, target_id, link_type) "
                 "VALUES (%s, %s, 'contradicts')", (a, b))
    ids.update(a=a, b=b)
    return ids


def test_each_user_gets_a_brief_of_their_own_with_the_seed_sections(
        settings: Settings, db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        alice, bob = _user(conn, "alice"), _user(conn, "bob")
        mine = _seed(conn, alice, "Harrowgate", timedelta(days=3))
        theirs = _seed(conn, bob, "Quillsby", timedelta(days=-1))  # overdue
    run = NightCycle(settings, db_url).run(only_stage=9)
    assert run["user_briefs"] == 2
    with psycopg.connect(db_url) as conn:
        briefs = dict(conn.execute(
            "SELECT u.handle, b.content FROM night_briefs b JOIN users u USING (user_id) "
            "WHERE b.run_id = %s", (run["run_id"],)).fetchall())
    text = briefs["alice"]
    lines = text.splitlines()
    assert lines[2].startswith("TL;DR: ") and "1 prediction(s) falling due" in lines[2]
    assert "1 open contradiction(s)" in lines[2] and "model update" in lines[2]
    for header in ("## Predictions falling due", "## Model updates (3D cognition)",
                   "## Open contradictions"):
        assert header in text, text
    assert f"prediction:{mine['due']}" in text and f"prediction:{mine['late']}" not in text
    assert f"model:{mine['model']}" in text
    assert f"memory:{mine['a']}" in text and f"memory:{mine['b']}" in text
    assert "Quillsby" not in text  # none of bob's
    assert "Harrowgate" not in briefs["bob"] and "(1 overdue)" in briefs["bob"]
    assert f"prediction:{theirs['due']}" in briefs["bob"]

    # the latest brief reaches the caller's handoff and cogd://brief/latest, only theirs
    api = Runtime(settings).memory_api(db_url, "nobody", channel="api", app="cogd-test")
    try:
        got = {who: (api.brief(user=who), api.handoff(user=who)) for who in ("alice", "bob")}
    finally:
        api.close()
    assert got["alice"][0]["text"] == text and got["bob"][0]["text"] == briefs["bob"]
    tldr = [i for i in got["alice"][1]["items"] if i["kind"] == "brief_tldr"]
    assert tldr and tldr[0]["id"] == f"night_brief:{run['run_id']}"
    assert lines[2][len("TL;DR: "):][:60] in tldr[0]["text"]
    assert got["alice"][1]["brief"] == run["run_id"]
    assert "Harrowgate" not in str(got["bob"]) and "Quillsby" not in str(got["alice"])

    # resolved (the loser superseded): no longer open in the next brief
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE memories SET status = 'superseded' WHERE memory_id = %s",
                     (mine["a"],))
    again = NightCycle(settings, db_url).run(only_stage=9)
    with psycopg.connect(db_url) as conn:
        newer = conn.execute("SELECT content FROM night_briefs b JOIN users u USING (user_id) "
                             "WHERE u.handle = 'alice' AND b.run_id = %s",
                             (again["run_id"],)).fetchone()[0]
    assert "## Open contradictions" not in newer and "open contradiction" not in newer
