"""`cogd hook` enriched (seed 000 §5.4.1-5.4.3, issue 42 item 5): on a Claude Code
session's first prompt the block carries the corrections that apply, the handoff (the last
session's note, its open intention) and the idle DMN's thought for that session; the next
prompt within [idle] topic_cooldown_minutes repeats none of them; a prompt after the
cooldown shows them again (and the DMN's new thought). The clock is the hook's `now`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent.config import Settings
from agent.db.queries import vector_text
from agent.runtime import Runtime
from agent.services.access import introspect
from agent.services.access.hook import HOOK_CLOSE, HOOK_OPEN, render
from agent.services.access.transcripts import claude_session
from agent.services.records.sessions import ensure_session, ensure_user
from tests.conftest import heuristic_roles, make_session, user_of

PLAN = "I need to send the quarterly invoice to Marta before Friday."
DEPLOY = "Let's look at the staging deploy script and its --force flag today."
CORRECTION = ("Running the deploy script with --force breaks when a database migration is "
              "pending; it's fine when the schema is unchanged.")
PASSPORT = "My passport expires in March 2027."
PROMPT = "I want to run the deploy script with --force on staging now."
FAILS = "fails when a database migration is pending"


@pytest.fixture
def fast(settings: Settings) -> Settings:
    return heuristic_roles(settings)


def _pieces(items: list[dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for i in items:
        out.setdefault(i["piece"], []).append(i["content"])
    return out


def _passport_told(settings: Settings, conn: Any) -> tuple[Runtime, Any]:
    """kim's PASSPORT, remembered in a chat session: (runtime, cognition)."""
    rt = Runtime(settings)
    cog = rt.cognition()
    s1 = make_session(conn, "kim")
    kim = user_of(conn, s1)
    introspect.remember(conn, cog, s1, kim, PASSPORT)
    return rt, cog


def _claude_session(conn: Any, session: str) -> Any:
    """kim's Claude Code session `session`, as `cogd watch` names it."""
    with conn.transaction():
        return ensure_session(conn, ensure_user(conn, "kim"), claude_session(session),
                              channel="import")


def test_first_prompt_carries_corrections_handoff_and_dmn_thoughts_once_per_cooldown(
        fast: Settings, conn: Any) -> None:
    rt = Runtime(fast)
    cog = rt.cognition()
    # yesterday's session: a plan, a topic, a fact; a correction of kim's
    s1 = make_session(conn, "kim")
    kim = user_of(conn, s1)
    for text in (PLAN, DEPLOY):
        cog.write_user_turn(conn, s1, text)
    introspect.remember(conn, cog, s1, kim, PASSPORT)
    vec = rt.universal.embed_documents([CORRECTION], memory_type="correction")[0]
    conn.execute("INSERT INTO memories (memory_type, content, universal_embedding, user_id) "
                 "VALUES ('correction', %s, %s::vector, %s)", (CORRECTION, vector_text(vec), kim))
    conn.execute("UPDATE day_table SET created_at = created_at - interval '26 hours' "
                 "WHERE session_id = %s", (s1,))
    cons = rt.consolidator()
    assert cons.intentions(conn, datetime.now(UTC)) and cons.corrections(conn, datetime.now(UTC))

    # the Claude Code session: the idle DMN thought of the passport for it (task completion)
    t0 = datetime.now(UTC)
    dmn, prompt_hook = rt.dmn(), rt.prompt_hook()
    with conn.transaction():
        sid = ensure_session(conn, ensure_user(conn, "kim"), claude_session("cc-1"),
                             channel="import")
        thought = dmn._recall_for(conn, None, sid, "When does my passport expire?",
                                  ["task_completion"], t0)
    assert len(thought) == 1 and "March 2027" in thought[0]["content"]

    first = prompt_hook.prompt(conn, "kim", PROMPT, "cc-1", now=t0)
    got = _pieces(first)
    assert "handoff" in got and "dmn" in got, got
    handoff = got["handoff"][0]
    assert "Last session: 26 hours ago" in handoff and PLAN in handoff, handoff
    assert FAILS in handoff  # the correction, carried by the handoff (not printed twice)
    assert not [c for c in got.get("correction", []) if FAILS in c]
    assert got["dmn"] == [thought[0]["content"]]
    block = render(first, now=t0)
    assert block.startswith(HOOK_OPEN) and block.endswith(HOOK_CLOSE)
    assert FAILS in block and "March 2027" in block and "Marta" in block
    assert block.count(FAILS) == 1
    assert prompt_hook.count_tokens(block) <= prompt_hook.cfg.max_tokens

    # two minutes later, within the cooldown: none of it again, and the DMN may not
    # write the passport again for this session either
    t1 = t0 + timedelta(minutes=2)
    again = prompt_hook.prompt(conn, "kim", PROMPT, "cc-1", now=t1)
    assert not {"handoff", "dmn", "correction"} & set(_pieces(again)), again
    assert FAILS not in render(again, now=t1) and "Marta" not in render(again, now=t1)
    with conn.transaction():
        assert dmn._recall_for(conn, None, sid, "When does my passport expire?",
                               ["task_completion"], t1) == []

    # after the cooldown: the handoff and its correction again, and the DMN's new thought
    t2 = t0 + dmn.minutes(dmn.cfg.topic_cooldown_minutes) + timedelta(minutes=1)
    with conn.transaction():
        later = dmn._recall_for(conn, None, sid, "When does my passport expire?",
                                ["task_completion"], t2)
    assert len(later) == 1
    third = prompt_hook.prompt(conn, "kim", PROMPT, "cc-1", now=t2)
    got = _pieces(third)
    assert FAILS in render(third, now=t2) and "handoff" in got
    assert got["dmn"] == [later[0]["content"]]
    statuses = {str(r[0]): r[1] for r in conn.execute(
        "SELECT thought_id, status FROM thoughts WHERE session_id = %s", (sid,))}
    assert statuses[thought[0]["thought_id"]] == statuses[later[0]["thought_id"]] == "injected"


def test_the_compound_query_reads_the_sessions_last_turns(fast: Settings, conn: Any) -> None:
    """Seed 000 §5.4.3: "do it" alone matches nothing; after the session's turns about the
    passport (as `cogd watch` imports them), the compound query recalls it."""
    rt, cog = _passport_told(fast, conn)
    prompt_hook = rt.prompt_hook()
    assert prompt_hook.prompt(conn, "kim", "ok, do it", "cc-2") == []
    sid = _claude_session(conn, "cc-3")
    for text in ("I have to renew my passport before it expires.", "ok, do it"):
        cog.write_user_turn(conn, sid, text)
    assert prompt_hook.compound_query(conn, sid, "ok, do it") == (
        "I have to renew my passport before it expires.\nok, do it")
    # [hook] buffer_turns says how many earlier turns it reads (0: the prompt alone)
    fast.hook["buffer_turns"] = 0
    assert Runtime(fast).prompt_hook().compound_query(conn, sid, "ok, do it") == "ok, do it"
    fast.hook["buffer_turns"] = 3
    shown = prompt_hook.prompt(conn, "kim", "ok, do it", "cc-3")
    assert [i["piece"] for i in shown if "March 2027" in i["content"]] == ["recall"]


def test_the_block_keeps_within_its_budget(fast: Settings, conn: Any) -> None:
    rt = Runtime(fast)
    cog = rt.cognition()
    s1 = make_session(conn, "kim")
    for n in range(12):
        cog.write_user_turn(conn, s1, f"Task {n}: I need to email the supplier about "
                                      f"order {n} and check the delivery dates again.")
    conn.execute("UPDATE day_table SET created_at = created_at - interval '3 days' "
                 "WHERE session_id = %s", (s1,))
    assert rt.consolidator().intentions(conn, datetime.now(UTC))
    ask = "What do I need to email the supplier about?"
    whole = render(rt.prompt_hook(max_tokens=5000).prompt(conn, "kim", ask, "cc-4"))
    small = rt.prompt_hook(max_tokens=150)
    shown = small.prompt(conn, "kim", ask, "cc-5")  # another session: its own cooldown
    block = render(shown)
    # without --max-tokens the budget is [hook] max_tokens
    assert rt.prompt_hook().cfg.max_tokens == fast.hook["max_tokens"] == 400
    fast.hook["max_tokens"] = 150
    assert Runtime(fast).prompt_hook().cfg.max_tokens == 150
    assert small.count_tokens(whole) > 150, whole  # there was more to say
    assert shown and small.count_tokens(block) <= 150, block
    assert block.startswith(HOOK_OPEN) and block.endswith(HOOK_CLOSE)


def test_a_frustrated_prompt_says_so_and_gets_nothing_unasked_for(
        fast: Settings, conn: Any) -> None:
    """Seed 000 §5.4.6 in the hook: after two corrections in the session (as `cogd watch`
    imports them), "I already told you..." reads as frustrated (the frustration
    heuristic, the loop's rules): the block says so first and carries no proactive recall,
    while a calm prompt in a session of its own recalls the same memory; the line is not
    stored as a thought."""
    rt, cog = _passport_told(fast, conn)
    prompt_hook = rt.prompt_hook()
    sid = _claude_session(conn, "cc-6")
    for text in ("When does my passport expire?", "No, that's wrong.",
                 "That's not what I asked."):
        cog.write_user_turn(conn, sid, text)
    upset = "I already told you: when does my passport expire?"
    shown = prompt_hook.prompt(conn, "kim", upset, "cc-6")
    got = _pieces(shown)
    assert list(got)[:1] == ["frustration"], got
    line = got["frustration"][0]
    assert "frustration-heuristic" in line and "already told" in line, line
    assert "2 correcting message(s)" in line, line
    assert not {"recall", "dmn", "workflow"} & set(got), got
    block = render(shown)
    assert block.index("Frustration signals:") < block.index(HOOK_CLOSE)
    assert "March 2027" not in block
    stored = conn.execute("SELECT count(*) FROM thoughts WHERE session_id = %s AND "
                          "source_ids ->> 0 = 'frustration'", (sid,)).fetchone()[0]
    assert stored == 0
    calm = _pieces(prompt_hook.prompt(conn, "kim", "When does my passport expire?", "cc-7"))
    assert "frustration" not in calm and any("March 2027" in c for c in calm["recall"]), calm
