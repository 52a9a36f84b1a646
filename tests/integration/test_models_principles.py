"""Cognitive models and principles on a real Postgres (seed 000 §10.2, §10.4): consolidation's
"models" and "principles" operations with the offline (heuristic) consolidation role, and
a principle reaching System 1's prompt through the loop (inbox -> loop -> outbox)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.config import Settings
from agent.db.queries import vector_text
from agent.runtime import Runtime
from agent.services.thinking.models_principles import list_models, list_principles
from agent.workers.loop import LoopWorker
from tests.acceptance.test_handoff import _spy
from tests.conftest import make_session
from tests.integration.test_cognition import loop, say  # noqa: F401  (the loop fixture)

CORRECTIONS = [
    "Running the deploy with --force breaks when a migration is pending.",
    "Deploying with --force fails whenever a database migration is still pending.",
    "Using the --force flag on deploy breaks things if a migration has not run yet.",
]
FRENCH = [
    "Always answer in French, whatever language the user writes in.",
    "Always reply in French, even when the user writes in English.",
    "Always respond in French no matter which language the question is in.",
]
HABIT = [
    "Alice usually goes running in the morning before work.",
    "Alice goes for a run most mornings before she starts work.",
    "Every morning before work, Alice tends to go for a run.",
]


def _user(conn: Any, handle: str) -> Any:
    return conn.execute("SELECT user_id FROM users WHERE handle = %s", (handle,)).fetchone()[0]


def _memories(conn: Any, embedder: Any, user: Any, texts: list[str], kind: str) -> list[str]:
    vecs = embedder.embed_documents(texts, memory_type=kind)
    return [str(conn.execute(
        "INSERT INTO memories (memory_type, content, universal_embedding, user_id) "
        "VALUES (%s, %s, %s::vector, %s) RETURNING memory_id",
        (kind, t, vector_text(v), user)).fetchone()[0]) for t, v in zip(texts, vecs, strict=True)]


def test_agreeing_corrections_crystallise_a_principle_that_reaches_a_relevant_prompt(
        loop: LoopWorker, conn: Any, settings: Settings,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings.llm.roles["consolidation"] = "heuristic"  # offline: the named heuristics
    prompts = _spy(loop, monkeypatch)
    sid = make_session(conn, "alice")
    alice = _user(conn, "alice")
    embedder = loop.cognition.universal
    sources = _memories(conn, embedder, alice, CORRECTIONS, "correction")
    french = _memories(conn, embedder, alice, FRENCH, "correction")
    cons = Runtime(settings).consolidator()
    made = cons.principles(conn, datetime.now(UTC))
    assert made is not None
    rows = {r[0]: r[1:] for r in conn.execute(
        "SELECT statement, status, confidence, source_ids, detector, proposal_id::text "
        "FROM principles WHERE user_id = %s", (alice,))}
    assert len(rows) == 2
    deploy = next(r for r in conn.execute(
        "SELECT principle_id::text, statement, status, confidence, source_ids, detector "
        "FROM principles WHERE status = 'active'"))
    assert deploy[1] in CORRECTIONS and deploy[2:4] == ("active", 0.5)
    assert sorted(deploy[4]) == sorted(f"memory:{m}" for m in sources)
    assert deploy[5] == "centroid-heuristic"
    # the identity-changing one is a Layer 0 proposal, not an active principle
    pid, status, psources, proposal = conn.execute(
        "SELECT principle_id::text, status, source_ids, proposal_id::text FROM principles "
        "WHERE status <> 'active'").fetchone()
    assert status == "proposed" and proposal is not None
    assert sorted(psources) == sorted(f"memory:{m}" for m in french)
    kind, layer, payload, pstatus = conn.execute(
        "SELECT kind, target_layer, payload, status FROM proposals WHERE proposal_id = %s",
        (proposal,)).fetchone()
    assert (kind, layer, pstatus) == ("new_value", 0, "pending")
    assert payload["principle_id"] == pid and payload["description"] in FRENCH
    # a second pass finds nothing new to crystallise
    again = cons.principles(conn, datetime.now(UTC))
    assert again is None or not again["outputs"]["crystallised"]

    # a relevant turn: the principle is in System 1's prompt and in the reply's metadata
    hit = say(loop, conn, sid, "Can I run the deploy with --force now? A migration is pending.")
    system = prompts[-1][0]["content"]
    assert "## Principles that apply (learned from experience)" in system
    assert f"[principle:{deploy[0]}]" in system and deploy[1] in system
    assert [p["id"] for p in hit["meta"]["principles"]] == [f"principle:{deploy[0]}"]
    # an unrelated turn gets none
    other = say(loop, conn, sid, "Can you suggest a good recipe for banana bread with walnuts?")
    assert "principles" not in other["meta"]
    assert "## Principles that apply" not in prompts[-1][0]["content"]
    # the proposed principle stays out of prompts until its proposal is approved
    ask = "Which language should you answer me in, French or English?"
    pending = say(loop, conn, sid, ask)
    assert f"principle:{pid}" not in [p["id"] for p in pending["meta"].get("principles", [])]
    conn.execute("UPDATE proposals SET status = 'approved', decided_at = now() "
                 "WHERE proposal_id = %s", (proposal,))
    decided = cons.principles(conn, datetime.now(UTC))
    assert decided and decided["outputs"]["decided"] == [{"principle_id": pid,
                                                          "status": "active"}]
    approved = say(loop, conn, sid, ask)
    assert f"principle:{pid}" in [p["id"] for p in approved["meta"]["principles"]]
    listed = {p["principle_id"]: p for p in list_principles(conn, "alice")}  # the CLI's list
    assert listed[pid]["status"] == "active" and listed[pid]["proposal_id"] == proposal


def test_a_model_gains_from_support_loses_more_from_contradiction_and_is_capped(
        conn: Any, settings: Settings) -> None:
    settings.llm.roles["consolidation"] = "heuristic"
    make_session(conn, "alice")
    alice = _user(conn, "alice")
    cons = Runtime(settings).consolidator()
    built_from = _memories(conn, cons.universal, alice, HABIT, "episodic")
    out = cons.models(conn, datetime.now(UTC))
    assert out is not None and len(out["outputs"]["built"]) == 1
    model, statement, domain, conf, status, detector = conn.execute(
        "SELECT model_id::text, statement, domain, confidence, status, detector "
        "FROM cognitive_models WHERE user_id = %s", (alice,)).fetchone()
    assert statement in HABIT and detector == "pattern-heuristic"
    assert (domain, conf, status) == ("work_patterns", 0.5, "active")
    evidence = conn.execute("SELECT memory_id::text, direction, note FROM model_evidence "
                            "WHERE model_id = %s", (model,)).fetchall()
    assert sorted(e[0] for e in evidence) == sorted(built_from)
    assert {(e[1], e[2]) for e in evidence} == {("supports", "built from")}

    # a supporting memory (+0.05), then a contradicting one (-0.08): in one pass, in order
    support = _memories(conn, cons.universal, alice,
                        ["Alice went for a morning run again today before work."], "episodic")
    contra = _memories(conn, cons.universal, alice,
                       ["Alice did not go running before work this week."], "episodic")
    assert cons.models(conn, datetime.now(UTC)) is not None
    rows = conn.execute(
        "SELECT memory_id::text, direction, confidence_before, confidence_after, detector "
        "FROM model_evidence WHERE model_id = %s AND note <> 'built from' ORDER BY id",
        (model,)).fetchall()
    assert rows == [(support[0], "supports", 0.5, 0.55, "similarity"),
                    (contra[0], "contradicts", 0.55, 0.47, "negation-heuristic")]
    conf, checks, up, down = conn.execute(
        "SELECT confidence, check_count, strengthen_count, weaken_count FROM cognitive_models "
        "WHERE model_id = %s", (model,)).fetchone()
    assert (conf, checks, up, down) == (0.47, 2, 1, 1)
    # near its domain's cap (work patterns: 0.8, seed 000 §10.2's "medium"), support stops
    conn.execute("UPDATE cognitive_models SET confidence = 0.79 WHERE model_id = %s", (model,))
    _memories(conn, cons.universal, alice,
              ["Alice had her usual run this morning before work."], "episodic")
    cons.models(conn, datetime.now(UTC))
    assert conn.execute("SELECT confidence FROM cognitive_models WHERE model_id = %s",
                        (model,)).fetchone()[0] == 0.8
    # the view shows it with its evidence
    assert conn.execute("SELECT evidence, status FROM v_models WHERE model_id = %s",
                        (model,)).fetchone() == (6, "active")
    assert [(m["model_id"], m["evidence"]) for m in list_models(conn, "alice")] == [(model, 6)]
    # a later pass with nothing new changes nothing (no evidence counted twice)
    assert cons.models(conn, datetime.now(UTC)) is None


def test_a_rejected_principle_does_not_crystallise_again_from_the_same_sources(
        conn: Any, settings: Settings) -> None:
    """A person rejects an identity-changing principle's proposal: it is retired, and its
    sources stay used (they do not crystallise a new proposal on every later pass)."""
    settings.llm.roles["consolidation"] = "heuristic"
    make_session(conn, "alice")
    cons = Runtime(settings).consolidator()
    _memories(conn, cons.universal, _user(conn, "alice"), FRENCH, "correction")
    assert cons.principles(conn, datetime.now(UTC)) is not None
    conn.execute("UPDATE proposals SET status = 'rejected', decided_at = now()")
    decided = cons.principles(conn, datetime.now(UTC))
    assert decided and [d["status"] for d in decided["outputs"]["decided"]] == ["retired"]
    assert not decided["outputs"]["crystallised"]
    assert cons.principles(conn, datetime.now(UTC)) is None
    assert conn.execute("SELECT count(*) FROM principles").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM proposals").fetchone()[0] == 1


def test_forgetting_a_memory_a_model_was_built_from_removes_the_model(
        conn: Any, settings: Settings) -> None:
    """A model carries what its memories said (the pattern-heuristic's statement is one of
    them, cleaned): forgetting any memory it was built from removes it, even when the
    statement is another member's words (no verbatim copy for forget to find)."""
    from agent.runtime import Runtime

    settings.llm.roles["consolidation"] = "heuristic"
    make_session(conn, "alice")
    cons = Runtime(settings).consolidator()
    built_from = _memories(conn, cons.universal, _user(conn, "alice"), HABIT, "episodic")
    assert cons.models(conn, datetime.now(UTC)) is not None
    statement = conn.execute("SELECT statement FROM cognitive_models").fetchone()[0]
    other = next(m for m, t in zip(built_from, HABIT, strict=True) if t != statement)
    Runtime(settings).forgetter(conn).memory(other, "test")
    assert conn.execute("SELECT count(*) FROM cognitive_models").fetchone()[0] == 0


def test_models_with_nothing_new_do_not_hold_the_others_back(
        conn: Any, settings: Settings) -> None:
    """Evidence is weighed for max_models_per_pass models a pass: a model with no new
    evidence goes to the back of the queue, so the others get their turn."""
    settings.llm.roles["consolidation"] = "heuristic"
    settings.cognitive_models["max_models_per_pass"] = 1
    make_session(conn, "alice")
    alice = _user(conn, "alice")
    cons = Runtime(settings).consolidator()
    quiet = _memories(conn, cons.universal, alice, FRENCH, "episodic")
    assert cons.models(conn, datetime.now(UTC)) is not None
    _memories(conn, cons.universal, alice, HABIT, "episodic")
    assert cons.models(conn, datetime.now(UTC)) is not None  # the habit's model, built
    habit = conn.execute("SELECT model_id FROM cognitive_models c WHERE NOT EXISTS ("
                         "SELECT 1 FROM model_evidence e WHERE e.model_id = c.model_id "
                         "AND e.memory_id = ANY(%s::uuid[]))", (quiet,)).fetchone()[0]
    _memories(conn, cons.universal, alice,
              ["Alice went for a morning run again today before work."], "episodic")
    for _ in range(3):
        cons.models(conn, datetime.now(UTC))
    assert conn.execute("SELECT count(*) FROM model_evidence WHERE model_id = %s "
                        "AND note <> 'built from'", (habit,)).fetchone()[0] == 1


def test_weighing_a_model_reads_only_its_users_memories_by_index(conn: Any) -> None:
    """The evidence query narrows memories by the model's user through the (user_id,
    status) index (a join on IS NOT DISTINCT FROM read every active memory of everyone,
    for each model, every pass)."""
    from agent.db.queries import query

    conn.execute("SET enable_seqscan = off")
    for user in ("00000000-0000-0000-0000-000000000001", None):
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + query(
            "models_evidence_candidates"), {"model": "00000000-0000-0000-0000-000000000000",
                                            "user": user, "min": 0.5}))
        scan = plan.split(" on memories m", 1)[1].split("\n")[1]
        assert "Index Cond" in scan and "user_id" in scan, plan


def test_a_group_that_made_no_model_is_not_judged_again_until_it_grows(
        conn: Any, settings: Settings) -> None:
    """The models' pass judges only groups holding a memory written since its previous
    pass: a group the (real) model found no regularity in is not sent to it on every
    consolidation pass."""
    from types import SimpleNamespace

    asked: list[int] = []

    class NoRegularity:  # a remote model (the provider is what real_llm checks)
        provider, model = "openai", "stub"

        def chat(self, messages: Any, **kwargs: Any) -> Any:
            asked.append(1)
            return SimpleNamespace(text="no regularity here", fallback=False)

    settings.llm.roles["consolidation"] = "heuristic"
    make_session(conn, "alice")
    alice = _user(conn, "alice")
    cons = Runtime(settings).consolidator()
    cons.ctx.models_op.llm = NoRegularity()
    runs = [f"Alice went running before work on {day}." for day in
            ("Monday", "Tuesday", "Wednesday", "Thursday")]  # alike, but no regularity cue
    _memories(conn, cons.universal, alice, runs[:3], "episodic")
    cons.models(conn, datetime.now(UTC))
    assert len(asked) == 1  # the group, once
    cons.models(conn, datetime.now(UTC))
    assert len(asked) == 1  # nothing new: not asked again
    _memories(conn, cons.universal, alice, ["The sourdough needs feeding twice a day."],
              "episodic")
    cons.models(conn, datetime.now(UTC))
    assert len(asked) == 1  # new, but in no group with it
    _memories(conn, cons.universal, alice, runs[3:], "episodic")
    cons.models(conn, datetime.now(UTC))
    assert len(asked) == 2  # the group grew: judged again
    assert conn.execute("SELECT count(*) FROM cognitive_models").fetchone() == (0,)


def test_memories_that_share_an_instant_past_the_scan_limit_all_challenge_a_principle(
        conn: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """An import writes its memories in one transaction: they share a created_at. A pass
    that reads only the first of them (the scan limit) leaves the others to the next pass,
    which reads each once: the watermark is the last memory read, not its instant."""
    from agent.services.thinking import models_principles

    settings.llm.roles["consolidation"] = "heuristic"
    make_session(conn, "alice")
    alice = _user(conn, "alice")
    cons = Runtime(settings).consolidator()
    _memories(conn, cons.universal, alice, CORRECTIONS, "correction")
    assert cons.principles(conn, datetime.now(UTC)) is not None  # the deploy principle
    later = [t.replace("breaks", "no longer breaks").replace("fails", "never fails")
             for t in CORRECTIONS]
    with conn.transaction():  # one instant for all three
        imported = _memories(conn, cons.universal, alice, later, "episodic")
    assert conn.execute("SELECT count(DISTINCT created_at) FROM memories WHERE memory_id = "
                        "ANY(%s::uuid[])", (imported,)).fetchone() == (1,)
    monkeypatch.setattr(models_principles, "MAX_CHALLENGE_SCAN", 2)
    seen: list[str] = []
    for _ in range(3):
        out = cons.principles(conn, datetime.now(UTC))
        seen += [c["by"] for c in (out["outputs"]["challenged"] if out else [])]
    assert sorted(seen) == sorted(f"memory:{m}" for m in imported)  # each once
