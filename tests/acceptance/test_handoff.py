"""Session handoff, corrections and intentions reach the conversation (issue 17): two
sessions of one user a simulated day apart, on a real Postgres, through the loop (the
inbox -> loop -> outbox path whose metadata `cogd chat --json` prints), with the
heuristic System 1/2 and the offline (heuristic) consolidation role."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent.config import Settings
from agent.db.queries import query, vector_text
from agent.errors import InputError
from agent.runtime import Runtime
from agent.services.reach.intentions import drop
from agent.workers.loop import LoopWorker
from tests.acceptance.test_cli import assert_clean_error, run
from tests.conftest import cogd_env, make_session
from tests.integration.test_cognition import loop, say  # noqa: F401  (the loop fixture)

PLAN = "I need to send the quarterly invoice to Marta before Friday."
DEPLOY = "Let's look at the staging deploy script and its --force flag today."
CORRECTION = ("Running the deploy script with --force breaks when a database migration is "
              "pending; it's fine when the schema is unchanged.")
BRIEF = "Alice and the agent walked through the staging deploy checklist step by step."
BOBS = "Bob planned his allotment garden with raised beds for tomatoes."


def _user(conn: Any, handle: str) -> Any:
    return conn.execute("SELECT user_id FROM users WHERE handle = %s", (handle,)).fetchone()[0]


def _turn(conn: Any, text: str) -> str:
    return str(conn.execute("SELECT entry_id FROM day_table WHERE content = %s AND role = 'user'",
                            (text,)).fetchone()[0])


def _block(conn: Any, run: int, session: Any, user: Any, text: str, weight: float,
           entries: list[str], kind: str = "arc") -> str:
    """A holographic block in the shape the night cycle writes (prose zones, flux metrics)."""
    at = datetime.now(UTC) - timedelta(hours=20)
    prose = {"live_zones": [{"start": 0, "end": 1, "content": text, "why": "arc peak"}],
             "dead_zone_summaries": [], "kind": kind}
    return str(conn.execute(
        "INSERT INTO holographic_blocks (prose, flux_metrics, salience_scores, coherence_gain, "
        "ties_merge_weight, session_id, user_id, run_id, arc_start_time, arc_end_time) "
        "VALUES (%s::jsonb, %s::jsonb, '{}', 0.5, %s, %s, %s, %s, %s, %s) RETURNING block_id",
        (json.dumps(prose), json.dumps({"kind": kind, "signal": "embedding_novelty_proxy",
                                        "entry_ids": entries}),
         weight, session, user, run, at, at + timedelta(minutes=5))).fetchone()[0])


def _spy(worker: LoopWorker, monkeypatch: pytest.MonkeyPatch) -> list[list[dict[str, str]]]:
    """Records the messages System 1 is given (the prompt), then answers as it would."""
    seen: list[list[dict[str, str]]] = []
    llm = worker.cognition.system1
    real = llm.chat

    def chat(messages: Any, *a: Any, **kw: Any) -> Any:
        seen.append(list(messages))
        return real(messages, *a, **kw)

    monkeypatch.setattr(llm, "chat", chat)
    return seen


def test_the_second_session_starts_with_the_handoff_and_an_intention_is_fulfilled(
        loop: LoopWorker, conn: Any, settings: Settings,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings.llm.roles["consolidation"] = "heuristic"  # offline: the named heuristics
    prompts = _spy(loop, monkeypatch)
    # session 1: a plan, a topic; a correction of this user's (consolidation parses it)
    s1 = make_session(conn, "alice")
    say(loop, conn, s1, PLAN)
    say(loop, conn, s1, DEPLOY)
    alice = _user(conn, "alice")
    vec = loop.cognition.universal.embed_documents([CORRECTION], memory_type="correction")[0]
    correction = str(conn.execute(
        "INSERT INTO memories (memory_type, content, universal_embedding, user_id) "
        "VALUES ('correction', %s, %s::vector, %s) RETURNING memory_id",
        (CORRECTION, vector_text(vec), alice)).fetchone()[0])
    # ... a day ago
    conn.execute("UPDATE day_table SET created_at = created_at - interval '26 hours' "
                 "WHERE session_id = %s", (s1,))
    conn.execute("UPDATE sessions SET started_at = started_at - interval '26 hours' "
                 "WHERE session_id = %s", (s1,))
    cons = Runtime(settings).consolidator()
    now = datetime.now(UTC)
    assert cons.intentions(conn, now) and cons.corrections(conn, now)
    notes = cons.continuation(conn, now)
    assert notes and notes["outputs"]["notes"][0]["detector"] == "extractive-heuristic"
    intention, vector_kept = conn.execute(
        "SELECT intention_id::text, universal_embedding IS NOT NULL FROM intentions "
        "WHERE source_entry_id = %s AND status = 'open'", (_turn(conn, PLAN),)).fetchone()
    assert vector_kept
    assert conn.execute("SELECT fails_when, fine_when FROM memories WHERE memory_id = %s",
                        (correction,)).fetchone() == ("a database migration is pending",
                                                      "the schema is unchanged")
    # the night: a finished run whose brief has a block of alice's and a stronger one of bob's
    run = conn.execute("INSERT INTO night_cycle_runs (status, finished_at, summary) VALUES "
                       "('done', now(), %s::jsonb) RETURNING run_id",
                       (json.dumps({"brief": "night_cycle/run1/brief.md"}),)).fetchone()[0]
    s1_turns = [str(r[0]) for r in conn.execute(
        "SELECT entry_id FROM day_table WHERE session_id = %s ORDER BY turn_number", (s1,))]
    mine = _block(conn, run, s1, alice, BRIEF, 0.8, s1_turns)
    sb = make_session(conn, "bob")
    _block(conn, run, sb, _user(conn, "bob"), BOBS, 0.95, [])

    # session 2, the next day: its first prompt carries the handoff
    s2 = make_session(conn, "alice")
    first = say(loop, conn, s2, "Good morning! I want to run the deploy script on staging again.")
    system = prompts[-1][0]["content"]
    assert "## Where we left off (session handoff)" in system
    assert "Last session: 26 hours ago (catch up" in system, system
    assert PLAN in system and BRIEF in system and BOBS not in system
    assert ("fails when a database migration is pending; fine when the schema is unchanged "
            f"[memory:{correction}]") in system
    handoff = first["meta"]["handoff"]
    assert handoff["mode"] == "catch_up" and handoff["gap_minutes"] > 24 * 60
    assert handoff["brief"] == run  # the run's id, never the path of its brief.md
    items = {i["kind"]: i for i in handoff["items"]}
    assert set(items) == {"note", "intention", "correction", "brief"}
    assert f"day_table:{_turn(conn, PLAN)}" in items["note"]["source_ids"]
    assert items["intention"]["id"] == f"intention:{intention}"
    assert items["intention"]["source_ids"] == [f"day_table:{_turn(conn, PLAN)}"]
    assert items["correction"]["id"] == f"memory:{correction}"
    assert items["brief"]["id"] == f"block:{mine}"
    assert items["brief"]["source_ids"] == [f"day_table:{t}" for t in s1_turns]
    # the correction also matched the compound query itself (cosine > 0.35)
    assert [c["id"] for c in first["meta"]["corrections"]] == [f"memory:{correction}"]

    # the next turn of the same session is no session start; the intention surfaces on
    # its topic (the handoff just showed it: its cooldown holds it back once)
    second = say(loop, conn, s2, "What should the invoice to Marta say?")
    assert "handoff" not in second["meta"] and "intentions" not in second["meta"]
    intentions = loop.cognition.continuity.intentions
    intentions.cfg = replace(intentions.cfg, cooldown=timedelta(0))
    third = say(loop, conn, s2, "What should the invoice to Marta say?")
    assert [i["id"] for i in third["meta"]["intentions"]] == [f"intention:{intention}"]
    assert "## Open intentions on this topic" in prompts[-1][0]["content"]

    # a later turn says it is done: fulfilled by the completion heuristic
    done = say(loop, conn, s2, "I sent the quarterly invoice to Marta this morning.")
    assert [f["id"] for f in done["meta"]["intentions_fulfilled"]] == [f"intention:{intention}"]
    status, by, resolution = conn.execute(
        "SELECT status, resolved_by_entry_id::text, resolution FROM intentions "
        "WHERE intention_id = %s", (intention,)).fetchone()
    assert status == "fulfilled" and by == _turn(conn, "I sent the quarterly invoice to Marta "
                                                       "this morning.")
    assert resolution["detector"] == "completion-heuristic" and resolution["cue"] == "sent"
    assert resolution["similarity"] >= 0.45
    # ... and never surfaces again: not on its topic, not to the idle DMN, not in a handoff
    again = say(loop, conn, s2, "What should the invoice to Marta say?")
    assert "intentions" not in again["meta"]
    assert conn.execute(query("dmn_open_intentions"), (alice, 10)).fetchall() == []
    # an unrelated topic gets no correction
    other = say(loop, conn, s2, "Can you suggest a good recipe for banana bread with walnuts?")
    assert "corrections" not in other["meta"]
    assert "## Corrections that apply" not in prompts[-1][0]["content"]
    s3 = make_session(conn, "alice")
    later = say(loop, conn, s3, "Hello again, can we talk about bread?")
    assert "intention" not in {i["kind"] for i in later["meta"]["handoff"]["items"]}
    assert later["meta"]["handoff"]["mode"] == "instant_resume"
    # /handoff: session 2's handoff as at its first turn, computed the same way, no turn
    turns = conn.execute("SELECT count(*) FROM day_table").fetchone()[0]
    made = loop.cognition.continuity.for_session(conn, s2, alice)
    assert made is not None and made[1]["mode"] == "catch_up"
    assert {i["kind"] for i in made[1]["items"]} >= {"note", "correction", "brief"}
    assert conn.execute("SELECT count(*) FROM day_table").fetchone()[0] == turns
    # /handoff in a session with no turn yet (the REPL's first command): no text to embed,
    # the handoff as now (session 3 has just spoken: an instant resume), nothing written
    s4 = make_session(conn, "alice")
    fresh = loop.cognition.continuity.for_session(conn, s4, alice)
    assert fresh is not None and fresh[1]["mode"] == "instant_resume"
    assert conn.execute("SELECT count(*) FROM day_table").fetchone()[0] == turns


def test_an_intention_is_dropped_by_its_user_only(conn: Any, settings: Settings,
                                                  db_url: str) -> None:
    s1 = make_session(conn, "alice")
    alice = _user(conn, "alice")
    make_session(conn, "bob")
    bob = _user(conn, "bob")
    entry = conn.execute("INSERT INTO day_table (session_id, user_id, role, content) VALUES "
                         "(%s, %s, 'user', %s) RETURNING entry_id", (s1, alice, PLAN)).fetchone()[0]
    iid = str(conn.execute("INSERT INTO intentions (user_id, session_id, source_entry_id, kind, "
                           "content) VALUES (%s, %s, %s, 'plan', %s) RETURNING intention_id",
                           (alice, s1, entry, PLAN)).fetchone()[0])
    for who, target, error in ((bob, iid, "no intention"), (alice, "nope", "not an intention"),
                               (alice, "7d3c1a52-0000-4000-8000-000000000000", "no intention")):
        with pytest.raises(InputError, match=error):
            drop(conn, who, target, via="test")
    tracker = Runtime(settings).intention_tracker()
    assert [i["id"] for i in tracker.list(conn, alice)] == [iid]
    assert tracker.list(conn, bob) == []
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(settings.data_dir))
    listed = run("intentions", "--user", "alice", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [i["id"] for i in json.loads(listed.stdout)["intentions"]] == [iid]
    assert_clean_error(run("intentions", "drop", iid, "--user", "bob", env=env), "no intention")
    assert_clean_error(run("intentions", "--user", "nobody", env=env), "no user 'nobody'")
    # --user given to the group (as for listing) reaches `drop` too
    dropped = run("intentions", "--user", "alice", "drop", f"intention:{iid}", env=env)
    assert dropped.returncode == 0, dropped.stderr
    assert dropped.stdout.strip().endswith("dropped")
    assert tracker.list(conn, alice) == []  # open ones only, unless asked for all
    assert tracker.list(conn, alice, include_resolved=True)[0]["status"] == "dropped"
    row = conn.execute("SELECT status, resolution FROM intentions WHERE intention_id = %s",
                       (iid,)).fetchone()
    assert row == ("dropped", {"detector": "user", "via": "cli"})
    with pytest.raises(InputError, match="already dropped"):
        drop(conn, alice, iid, via="test")
