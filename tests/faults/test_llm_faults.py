"""LLM faults through the real `openai` SDK path (provider factory → retry layer → stub server).

Timeouts, a 429 storm, malformed bodies, malformed JSON *content* in a real
consolidation pass, and a cognitive-loop turn whose System 1 keeps failing. The
stub counts attempts; nothing here measures time (the retry delays are zero, or
injected through the retrier's `sleep`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.config import LLMProfile, RetrySettings, Settings, load_settings
from agent.domain.gates import contradiction_cue
from agent.inbox import complete
from agent.providers.factory import build_llm
from agent.providers.ports import ListRecorder
from agent.providers.retry import ProviderCallError
from agent.runtime import Runtime
from agent.services.access import introspect
from agent.services.background.consolidation import CONTRADICTION_SYSTEM
from tests.acceptance.test_cli import COGD
from tests.conftest import NoFloor, cogd_env, make_session, user_of
from tests.faults.conftest import Reliability
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401

KEY_ENV = "COGD_FAULT_TEST_KEY"
KEY = "sk-fault-test-not-real-4242"
CHAT = "/v1/chat/completions"
HELLO = [{"role": "user", "content": "Where did I leave my keys?"}]
TIMEOUT_S = 0.5  # the profile's timeout: the stub answers 30 s late, so every attempt times out
LATE_S = 30.0  # how late a delayed answer is; far beyond TIMEOUT_S (a missing timeout fails)


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def route_to_stub(settings: Settings, stub: StubServer, *roles: str,
                  timeout_s: float = 10.0, base_delay_s: float = 0.0,
                  provider: str = "openai") -> None:
    """Point `roles` at the stub through an openai (or gemini) profile; retries 3, no real
    waiting."""
    settings.llm.profiles["stub"] = LLMProfile(
        provider=provider, model="stub-chat" if provider == "openai" else "gemini-stub",
        base_url=stub.openai_base_url if provider == "openai" else stub.url,
        api_key_env=KEY_ENV, temperature=0.0, max_tokens=64, timeout_s=timeout_s)
    for role in roles:
        settings.llm.roles[role] = "stub"
    settings.retry = RetrySettings(max_retries=3, base_delay_s=base_delay_s,
                                   max_delay_s=30.0 if base_delay_s else 0.0, jitter=0.0)


@pytest.fixture
def plain_settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data")


# -- timeouts ------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_a_timeout_is_retried_and_the_next_attempt_answers(
    plain_settings: Settings, stub_server: StubServer, reliability: Reliability, provider: str
) -> None:
    route_to_stub(plain_settings, stub_server, "system1", timeout_s=TIMEOUT_S, provider=provider)
    rec = ListRecorder()
    llm = build_llm(plain_settings, "system1", rec)
    stub_server.delay_next(1, LATE_S)
    result = llm.chat(HELLO)
    assert result.text.startswith("The stub heard you say")
    assert result.attempts == 2 and stub_server.count() == 2
    assert [(r.ok, r.attempts) for r in rec.records] == [(True, 2)]
    reliability.add("llm_fault", fault=f"{provider}: 1 answer {LATE_S:.0f} s late (timeout "
                    f"{TIMEOUT_S} s)", calls=1, attempts=stub_server.count(),
                    outcome="retried, answered", parse_failures=0)


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_timeouts_on_every_attempt_end_in_a_clear_provider_error(
    plain_settings: Settings, stub_server: StubServer, reliability: Reliability, provider: str
) -> None:
    route_to_stub(plain_settings, stub_server, "system1", timeout_s=TIMEOUT_S, provider=provider)
    rec = ListRecorder()
    llm = build_llm(plain_settings, "system1", rec)
    stub_server.delay_next(10, LATE_S)
    with pytest.raises(ProviderCallError) as info:
        llm.chat(HELLO)
    err = info.value
    assert (err.provider, err.status, err.attempts) == (provider, None, 4)
    base = stub_server.openai_base_url if provider == "openai" else stub_server.url
    assert str(err).startswith(f"{provider}: no response after 4 attempts: check that "
                               f"{base} is reachable")
    assert "imeout" in str(err) and KEY not in str(err)
    assert stub_server.count() == 4
    assert [(r.ok, r.attempts) for r in rec.records] == [(False, 4)]
    reliability.add("llm_fault", fault=f"{provider}: every answer {LATE_S:.0f} s late "
                    f"(timeout {TIMEOUT_S} s)", calls=1, attempts=stub_server.count(),
                    outcome="ProviderCallError after 4 attempts", parse_failures=0)


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_cogd_ask_under_timeouts_ends_with_one_error_line_and_exit_2(
    tmp_path: Path, stub_server: StubServer, reliability: Reliability, provider: str
) -> None:
    up = provider.upper()
    base = stub_server.openai_base_url if provider == "openai" else stub_server.url
    env = cogd_env(**{
        "COGD_DATA_DIR": str(tmp_path), "COGD_LLM__ROLES__SYSTEM1": provider,
        f"COGD_LLM__PROFILES__{up}__BASE_URL": base,
        f"COGD_LLM__PROFILES__{up}__MODEL": "stub-chat" if provider == "openai"
        else "gemini-stub",
        f"COGD_LLM__PROFILES__{up}__API_KEY_ENV": KEY_ENV, KEY_ENV: KEY,
        f"COGD_LLM__PROFILES__{up}__TIMEOUT_S": str(TIMEOUT_S),
        "COGD_RETRY__BASE_DELAY_S": "0", "COGD_RETRY__MAX_DELAY_S": "0",
    })
    stub_server.delay_next(10, LATE_S)
    proc = subprocess.run([COGD, "ask", "where are my keys"], env=env, capture_output=True,
                          text=True, timeout=120)  # streams: retries cover opening the stream
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and KEY not in proc.stderr + proc.stdout
    # the retry warnings are log lines; the error itself is the last line
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"cogd: error: {provider}: no response after 4 attempts: check "
                           f"that {base} is reachable"), proc.stderr
    assert stub_server.count() == 4
    reliability.add("llm_fault", fault=f"cogd ask (subprocess, {provider}), every answer late",
                    calls=1, attempts=stub_server.count(), outcome="one error line, exit 2",
                    parse_failures=0)


# -- 429 storm -----------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_a_429_storm_gives_up_per_call_and_recovers_when_it_ends(
    plain_settings: Settings, stub_server: StubServer, reliability: Reliability, provider: str
) -> None:
    # base delay 1 s: a retrier that ignored Retry-After: 0 would sleep 1, 2, 4 s
    route_to_stub(plain_settings, stub_server, "system1", base_delay_s=1.0, provider=provider)
    rec = ListRecorder()
    llm = build_llm(plain_settings, "system1", rec)
    sleeps: list[float] = []
    llm.retrier.sleep = sleeps.append  # type: ignore[attr-defined]
    stub_server.fail_next(20, 429, retry_after="0")
    errors: list[ProviderCallError] = []
    for _ in range(10):
        try:
            result = llm.chat(HELLO)
            break
        except ProviderCallError as exc:
            errors.append(exc)
    else:
        pytest.fail("the storm never ended for the client")
    assert len(errors) == 5  # 20 rejections / (1 try + 3 retries)
    for err in errors:
        assert (err.provider, err.status, err.attempts) == (provider, 429, 4)
        assert str(err).startswith(f"{provider}: HTTP 429 after 4 attempts: rate limited")
    assert result.attempts == 1 and result.text.startswith("The stub heard you say")
    assert stub_server.count() == 21 and stub_server.pending() == (0, 0)
    assert sleeps == [0.0] * 15  # Retry-After: 0 honoured between the attempts of each call
    assert [r.ok for r in rec.records] == [False] * 5 + [True]
    reliability.add("llm_fault", fault=f"{provider}: 429 storm x20, Retry-After: 0", calls=6,
                    attempts=stub_server.count(),
                    outcome="5 calls failed after 4 attempts each; 6th answered first time",
                    parse_failures=0)


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_a_refusal_that_echoes_the_key_does_not_leak_it(
    plain_settings: Settings, stub_server: StubServer, provider: str
) -> None:
    """A careless proxy puts the key in its error body: the error cogd raises, logs and
    records names the key's variable, never the key."""
    route_to_stub(plain_settings, stub_server, "system1", provider=provider)
    rec = ListRecorder()
    llm = build_llm(plain_settings, "system1", rec)
    echo = json.dumps({"error": {"code": 401, "status": "UNAUTHENTICATED",
                                 "message": f"API key not valid: {KEY}"}})
    stub_server.malformed_next(1, body=echo, status=401)
    with pytest.raises(ProviderCallError) as info:
        llm.chat(HELLO)
    assert info.value.status == 401 and info.value.attempts == 1
    assert f"check {KEY_ENV}" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(info.value)
    assert [KEY in (r.error or "") for r in rec.records] == [False]


# -- malformed bodies ----------------------------------------------------------------


def test_malformed_response_bodies_are_provider_errors_not_crashes(
    plain_settings: Settings, stub_server: StubServer, reliability: Reliability
) -> None:
    route_to_stub(plain_settings, stub_server, "system1")
    llm = build_llm(plain_settings, "system1")
    stub_server.malformed_next(1)  # cut short once: retried, then answered
    assert llm.chat(HELLO).attempts == 2
    stub_server.malformed_next(4, body="<html>502 Bad Gateway</html>")
    with pytest.raises(ProviderCallError) as info:
        llm.chat(HELLO)
    assert (info.value.status, info.value.attempts) == (200, 4)
    assert "malformed response body" in str(info.value)
    stub_server.malformed_next(1, body='{"object": "chat.completion", "choices": []}')
    with pytest.raises(ProviderCallError, match="no choices"):  # valid JSON, wrong shape
        llm.chat(HELLO)
    stub_server.malformed_next(1, body="data: {not json\n\n")
    with pytest.raises(ProviderCallError):
        "".join(llm.stream(HELLO))
    assert stub_server.pending() == (0, 0)
    reliability.add("llm_fault", fault="200 with a cut/HTML/empty-choices/non-SSE body", calls=4,
                    attempts=stub_server.count(CHAT),
                    outcome="retried, then ProviderCallError naming the body", parse_failures=0)


# -- malformed JSON content in a real consolidation pass ------------------------------

PAIRS = [("My sister lives in Lisbon.", "My sister lives in Madrid."),
         ("My car is a red Toyota.", "My car is a blue Honda."),
         ("I drink my coffee black.", "I never drink coffee."),
         ("The wifi password is tulip42.", "The wifi password is orchid77."),
         ("My landlord is called Mr Okafor.", "My landlord is called Mrs Brennan."),
         ("The team standup moved to 9 am.", "The team standup is at 11 am.")]

GARBAGE = "I would rather not say; it depends on context."
SCRIPT: list[tuple[str, str | None]] = [  # (the model's answer, how it must parse)
    ('{"contradicts": tru', None),  # truncated JSON
    ('```json\n{"contradicts": true, "reason": "different \\u0000 values"}\n```', "fenced"),
    ("The two statements are about {different things}.", None),  # prose with braces
    ('Sure. {"reason": "same }{ person", "contradicts": false} hope it helps', "boundary"),
    ("Yes.", "yes_no"),
    (GARBAGE, None),
]


def remember_for_consolidation(settings: Settings, conn: Any, stub_server: StubServer,
                               texts: list[str]) -> None:
    """The consolidation role on the stub, the loop heuristic, `texts` remembered in turn."""
    for role in ("system1", "system2"):
        settings.llm.roles[role] = "heuristic"
    route_to_stub(settings, stub_server, "consolidation")
    cog = Runtime(settings).cognition(rng=NoFloor())
    sid = make_session(conn)
    uid = user_of(conn, sid)
    for text in texts:
        introspect.remember(conn, cog, sid, uid, text)


def test_consolidation_survives_malformed_json_answers(
    settings: Settings, conn: Any, stub_server: StubServer, reliability: Reliability
) -> None:
    remember_for_consolidation(settings, conn, stub_server, [t for pair in PAIRS for t in pair])
    stub_server.queue_replies(*(answer for answer, _ in SCRIPT))
    stub_server.set_reply(GARBAGE)  # any further check gets garbage too
    report = Runtime(settings).consolidator(rng=NoFloor()).run_pass(conn)

    assert "merge" not in report.operations  # every chat request below is a contradiction check
    requests = [r for r in stub_server.requests if r.path == CHAT]
    assert requests and all(r.body["messages"][0]["content"] == CONTRADICTION_SYSTEM
                            for r in requests)
    assert len(requests) >= len(SCRIPT), "the seed must give at least one check per answer"
    served = [answer for answer, _ in SCRIPT] + [GARBAGE] * (len(requests) - len(SCRIPT))
    expected_how = [how for _, how in SCRIPT] + [None] * (len(requests) - len(SCRIPT))
    garbage = sum(how is None for how in expected_how)

    logged = conn.execute("SELECT inputs, outputs FROM consolidation_log WHERE pass_id = %s AND "
                          "operation = 'contradictions'", (report.pass_id,)).fetchone()
    assert logged is not None
    inputs, outputs = logged
    assert inputs["pairs_checked"] == len(requests)
    assert outputs["parse_failures"] == garbage
    assert outputs["parsed_by"] == {"unparseable": garbage, "fenced": 1, "boundary": 1,
                                    "yes_no": 1}
    # every checked pair has its link, and the link says who decided and how
    for req, answer, how in zip(requests, served, expected_how, strict=True):
        prompt = req.body["messages"][1]["content"]
        a = prompt.split("\n1. ", 1)[1].split("\n2. ", 1)[0]
        b = prompt.split("\n2. ", 1)[1]
        rows = conn.execute(  # contradictions() links the second statement to the first
            "SELECT l.link_type, l.metadata FROM memory_links l "
            "JOIN memories s ON s.memory_id = l.source_id "
            "JOIN memories t ON t.memory_id = l.target_id "
            "WHERE s.content = %s AND t.content = %s", (b, a)).fetchall()
        assert len(rows) == 1, (a, b, rows)
        (row,) = rows
        link_type, meta = row
        assert meta["resolved"] is False
        if how is None:
            assert meta["parsed_by"] == "unparseable", answer
            assert meta["classifier"] == "negation/value heuristic (LLM answer unparseable)"
            assert link_type == ("contradicts" if contradiction_cue(a, b) else "related")
        else:
            assert meta["parsed_by"] == how and meta["classifier"] == "llm:stub-chat"
            verdict = how in ("fenced", "yes_no")  # the scripted answers' verdicts
            assert link_type == ("contradicts" if verdict else "related"), answer
    fenced = conn.execute("SELECT metadata->>'reason' FROM memory_links "
                          "WHERE metadata->>'parsed_by' = 'fenced'").fetchone()
    assert fenced == ("different  values",)  # the NUL jsonb cannot hold is gone
    reliability.add("llm_fault", fault="malformed/fenced/truncated/prose JSON content",
                    calls=len(requests), attempts=stub_server.count(CHAT),
                    outcome="pass completed; heuristic decided the unparseable pairs",
                    parse_failures=outputs["parse_failures"])


def test_consolidation_with_the_provider_down_still_links_pairs(
    settings: Settings, conn: Any, stub_server: StubServer, reliability: Reliability
) -> None:
    remember_for_consolidation(settings, conn, stub_server, list(PAIRS[0]))
    stub_server.fail_next(100, 503)
    report = Runtime(settings).consolidator(rng=NoFloor()).run_pass(conn)
    outputs = report.operations["contradictions"]["outputs"]
    assert outputs["parsed_by"] == {"llm_failed": 1} and outputs["parse_failures"] == 0
    link = conn.execute("SELECT link_type, metadata->>'classifier' FROM memory_links").fetchall()
    assert link == [("contradicts", "negation/value heuristic (LLM failed)")]
    assert stub_server.count(CHAT) == 4
    reliability.add("llm_fault", fault="consolidation LLM 503 on every attempt", calls=1,
                    attempts=stub_server.count(CHAT),
                    outcome="heuristic decided (LLM failed), pass completed", parse_failures=0)


# -- the cognitive loop under a failing System 1 ---------------------------------------


def test_a_turn_with_system1_failing_keeps_the_user_turn_and_raises_a_clear_error(
    settings: Settings, conn: Any, db_url: str, stub_server: StubServer,
    reliability: Reliability,
) -> None:
    settings.llm.roles["system2"] = "heuristic"
    route_to_stub(settings, stub_server, "system1")
    cog = Runtime(settings).cognition(rng=NoFloor())
    sid = make_session(conn)
    text = "Remember this: my bike lock code is 2291."
    stub_server.fail_next(2, 500)
    stub_server.fail_next(2, 429, retry_after="0")
    with pytest.raises(ProviderCallError) as info:
        cog.answer(conn, sid, text)
    err = info.value
    assert (err.provider, err.status, err.attempts) == ("openai", 429, 4)
    assert str(err).startswith("openai: HTTP 429 after 4 attempts")
    # content is written before it is judged: the user turn (and its gate row) are kept
    turns = conn.execute("SELECT role, content FROM day_table WHERE session_id = %s "
                         "ORDER BY turn_number", (sid,)).fetchall()
    assert turns == [("user", text)]
    assert conn.execute("SELECT count(*) FROM gate_decisions WHERE gate = 'entry'"
                        ).fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM scratch_buffer").fetchone() == (1,)
    assert stub_server.count(CHAT) == 4
    # the provider is back: the next turn is answered and the session carries on
    result = cog.answer(conn, sid, "And what is my bike lock code?")
    assert result.reply.startswith("The stub heard you say")
    assert [r[0] for r in conn.execute("SELECT role FROM day_table WHERE session_id = %s "
                                       "ORDER BY turn_number", (sid,))] == [
        "user", "user", "assistant"]

    # through the loop worker the caller gets the error as its reply (inbox row failed)
    from agent.workers.loop import LoopWorker

    worker = LoopWorker(settings, db_url)
    worker.conn = worker._connect()
    worker.setup()
    try:
        stub_server.fail_next(4, 500)
        inbox = conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, %s) "
                             "RETURNING id", (sid, "Are you there?")).fetchone()[0]
        assert worker.process_one() is True
    finally:
        worker.teardown()
        worker.conn.close()
    status, error = conn.execute("SELECT status, error FROM inbox WHERE id = %s",
                                 (inbox,)).fetchone()
    assert status == "failed" and error.startswith("ProviderCallError: openai: HTTP 500 after 4")
    reply, meta = conn.execute("SELECT content, metadata FROM outbox WHERE inbox_id = %s",
                               (inbox,)).fetchone()
    assert "openai: HTTP 500 after 4 attempts" in reply and meta["error"] is True
    assert conn.execute("SELECT count(*) FROM day_table WHERE content = 'Are you there?'"
                        ).fetchone() == (1,)
    assert KEY not in json.dumps([error, reply])
    reliability.add("llm_fault", fault="System 1: 500, 500, 429, 429 (then 4x 500 via the loop)",
                    calls=3, attempts=stub_server.count(CHAT),
                    outcome="ProviderCallError; user turn kept; outbox error reply",
                    parse_failures=0)


def test_a_reply_with_nul_and_a_lone_surrogate_is_stored_not_a_failed_turn(
    settings: Settings, conn: Any, stub_server: StubServer, reliability: Reliability
) -> None:
    settings.llm.roles["system2"] = "heuristic"
    route_to_stub(settings, stub_server, "system1")
    cog = Runtime(settings).cognition(rng=NoFloor())
    sid = make_session(conn)
    inbox = conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, %s) RETURNING id",
                         (sid, "Say something odd.")).fetchone()[0]
    stub_server.queue_replies("odd\x00reply \ud800 here")  # JSON \u0000 and \ud800 on the wire
    result = cog.answer(conn, sid, "Say something odd.", inbox_id=inbox,
                        deliver=lambda c, reply, meta: complete(c, inbox, sid, reply, meta))
    assert result.reply == "odd\ufffdreply ? here"
    stored = conn.execute("SELECT content FROM outbox WHERE inbox_id = %s", (inbox,)).fetchone()
    assert stored == (result.reply,)
    assert conn.execute("SELECT content FROM day_table WHERE role = 'assistant'").fetchone() == (
        result.reply,)
    reliability.add("llm_fault", fault="reply content with NUL and a lone surrogate", calls=1,
                    attempts=stub_server.count(CHAT), outcome="stored with replacements",
                    parse_failures=0)
