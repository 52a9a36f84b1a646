"""Broad questions read the cortex's RAPTOR levels (seed 001 §5.4; issue 17).

The cortex: dated turns of October and November sessions on four themes are imported;
each session becomes one cortex block written through the cortex store's own API in the
shape stage 7 (migration) writes (its turns' entry ids in flux_metrics, its arc times),
and stage 8's own tree builder (real HDBSCAN, the heuristic summariser) writes the RAPTOR
nodes over them. (A whole night cycle would also have to cut these turns into blocks and
age them past migration; that path is covered by tests/integration/test_night_cycle.py.)
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
import pytest

from agent.config import Settings
from agent.cortex.lance import BLOCKS, CLUSTERS, LanceCortex
from agent.domain.prompt import build_messages
from agent.domain.tags import parse_memory_tags, tag_for
from agent.providers import factory
from agent.runtime import Runtime
from agent.services.access.introspect import format_recall, recall_payload
from agent.workers.loop import LoopWorker
from night_cycle import runs
from night_cycle.context import RunContext
from night_cycle.progress import NullProgress
from night_cycle.stages import clustering
from tests.conftest import NoFloor, make_session
from tests.integration.test_cognition import say
from tests.integration.test_night_cycle import _session, import_jsonl

ASKED_AT = datetime(2025, 12, 5, 12, tzinfo=UTC)  # "in October": October 2025
OCT, NOV = datetime(2025, 10, 6, 9, tzinfo=UTC), datetime(2025, 11, 3, 9, tzinfo=UTC)
THEMES: dict[str, tuple[datetime, list[tuple[str, str]]]] = {
    "garden": (OCT, [
        ("My tomato plants in the garden have yellow leaves.",
         "Water the garden beds less; yellow tomato leaves often mean too much water."),
        ("Should I add compost to the vegetable garden?", "Yes, compost feeds the garden soil."),
        ("Slugs are eating the lettuce in my garden.", "Beer traps keep slugs off garden beds."),
        ("When do I plant garlic in the garden?", "Plant garden garlic in autumn."),
    ]),
    "kitchen": (OCT, [
        ("We picked new cabinets for the kitchen renovation.",
         "Oak kitchen cabinets suit the renovation."),
        ("Which tiles for the kitchen backsplash?", "White kitchen tiles brighten the renovation."),
        ("The plumber moves the kitchen sink under the window.",
         "Moving the kitchen sink is the renovation's biggest job."),
        ("The kitchen renovation budget is running over.",
         "Cut the kitchen renovation's extras to stay on budget."),
    ]),
    "tax": (NOV, [
        ("Which receipts count for my tax return deductions?",
         "Keep receipts for tax deductions: work tools and travel."),
        ("When is the tax return deadline?", "The tax return is due by the end of January."),
        ("Do I pay tax on my savings interest?", "Savings interest above the allowance is taxed."),
        ("I filled in the tax return form for self-assessment.",
         "Check the tax return totals before you submit."),
    ]),
    "marathon": (NOV, [
        ("My marathon training plan starts with long runs on Sunday.",
         "Build the marathon long run by a mile each week."),
        ("How do I taper before the marathon?", "Run less in the last two marathon weeks."),
        ("My knee hurts after marathon interval training.",
         "Rest the knee and shorten marathon intervals."),
        ("What should I eat before the marathon race?",
         "Eat pasta the night before the marathon race."),
    ]),
}


def build_cortex(settings: Settings, db_url: str) -> dict[str, Any]:
    """The cortex of the sixteen sessions; returns {block_id: (theme, start, entry ids)}."""
    settings.llm.roles["night_cycle"] = "heuristic"
    settings.night_cycle["hdbscan_min_cluster_size"] = 3  # 4 blocks per theme
    lines = ""
    for theme, (start, pairs) in THEMES.items():
        for i, (asked, answered) in enumerate(pairs):
            lines += _session(f"{theme}-{i}", "nora", start + timedelta(days=5 * i, hours=i),
                              [("user", asked), ("assistant", answered)])
    import_jsonl(db_url, settings, lines)
    universal = factory.build_universal_embedder(settings)
    out: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    with psycopg.connect(db_url, autocommit=True) as conn:
        for theme in THEMES:
            for i in range(4):
                turns = conn.execute(
                    "SELECT entry_id::text, content, created_at, session_id::text, "
                    "user_id::text FROM day_table WHERE external_id LIKE %s "
                    "ORDER BY created_at", (f"{theme}-{i}-%",)).fetchall()
                assert len(turns) == 2
                bid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{theme}-{i}"))
                prose = " ".join(t[1] for t in turns)
                vec = np.asarray(universal.embed_documents([prose])[0], np.float32)
                out[bid] = (theme, turns[0][2], [t[0] for t in turns])
                rows.append({  # as night_cycle/stages/migration.py cortex_row writes it
                    "block_id": bid, "kind": "block", "session_id": turns[0][3],
                    "user_id": turns[0][4], "user_tier": "normal", "run_id": 1,
                    "prose_text": prose, "live_zones_text": prose,
                    "prose": json.dumps({"live_zones": [prose], "dead_zone_summaries": []}),
                    "universal": vec.tolist(), "native": vec.tolist(),
                    "native_model": universal.model_id,
                    "flux_metrics": json.dumps({"entry_ids": [t[0] for t in turns]}),
                    "salience_scores": "{}", "composite": 0.5, "coherence_gain": 0.1,
                    "ties_merge_weight": 0.3, "citations": "[]",
                    "preoccupation_centroid_id": None, "parent_metablock_id": None,
                    "continues_from": None, "continued_by": None,
                    "session_continuity_flag": False, "arc_start_time": turns[0][2],
                    "arc_end_time": turns[-1][2], "created_at": turns[0][2],
                    "migrated_at": ASKED_AT, "last_accessed": None, "vector_history": "[]"})
        cortex = LanceCortex.from_settings(settings)
        cortex.upsert(BLOCKS, rows, "block_id")
        run = runs.start(conn, {"stages": {}})
        tree = clustering._tree(RunContext(settings, conn, run, ASKED_AT, ASKED_AT,
                                           NullProgress()))
    assert tree["clusters_by_level"].get("1", 0) >= 4, tree  # a branch per theme at least
    return out


def themes_of(item: dict[str, Any], blocks: dict[str, Any]) -> set[str]:
    return {blocks[b["block_id"]][0] for b in item["sources"]["blocks"]}


def test_a_period_question_returns_the_cluster_nodes_of_that_period_with_their_blocks(
    settings: Settings, db_url: str,
) -> None:
    blocks = build_cortex(settings, db_url)
    recaller = Runtime(settings).recaller()
    with psycopg.connect(db_url, autocommit=True) as conn:
        out = recaller.recall(conn, "what did we work on in October?", now=ASKED_AT)
        plain = recaller.recall(conn, "what tiles did we pick for the backsplash?",
                                now=ASKED_AT)
        logged = conn.execute("SELECT items FROM recall_log WHERE id = %s",
                              (out.log_id,)).fetchone()
    payload = recall_payload(out)
    assert payload["broad"]["fired"] and payload["broad"]["scope"] == "period"
    assert payload["broad"]["detector"] == "broad-question heuristic"
    nodes = [i for i in payload["items"] if i["kind"] == "cluster"]
    assert nodes and payload["broad"]["nodes"] == len(nodes)
    assert payload["items"][:len(nodes)] == nodes  # first: the prompt shows them first
    for node in nodes:
        assert 1 <= node["level"] <= 3 and node["window"]["start"].startswith("2025-10-01")
        assert themes_of(node, blocks) <= {"garden", "kitchen"}  # October's themes only
        for b in node["sources"]["blocks"]:
            assert b["start"].startswith("2025-10") and b["in_window"] is True
            assert b["entry_ids"] == blocks[b["block_id"]][2]  # the block's source turns
            assert set(b["entry_ids"]) <= set(node["sources"]["day_table"])
        assert node["verdict"] != "no_match" and "RAPTOR level" in node["content"]
    assert {t for n in nodes for t in themes_of(n, blocks)} == {"garden", "kitchen"}
    # the citation tag of a node is a memory tag like any other
    assert parse_memory_tags(tag_for(nodes[0]["id"])) == [nodes[0]["id"].split(":", 1)[1]]
    assert "broad question (broad-question heuristic" in format_recall(payload)
    assert logged is not None
    assert [i["via"] for i in logged[0] if i["kind"] == "cluster"] == [
        "broad-question heuristic"] * len(nodes)
    # an ordinary question: no cluster node, nothing recorded as broad
    assert plain.result.broad is None
    assert all(i.kind != "cluster" for i in plain.result.items)
    assert out.result.tokens <= recaller.cfg.token_budget


def test_a_theme_question_returns_the_node_of_that_theme(
    settings: Settings, db_url: str,
) -> None:
    blocks = build_cortex(settings, db_url)
    recaller = Runtime(settings).recaller()
    with psycopg.connect(db_url, autocommit=True) as conn:
        out = recaller.recall(conn, "summarise our conversations about the marathon",
                              now=ASKED_AT, log=False)
    payload = recall_payload(out)
    assert payload["broad"]["scope"] == "theme" and payload["broad"]["topic"] == ["marathon"]
    nodes = [i for i in payload["items"] if i["kind"] == "cluster"]
    assert nodes and themes_of(nodes[0], blocks) == {"marathon"}
    assert nodes[0]["window"] is None and len(nodes[0]["sources"]["blocks"]) == 4


@pytest.fixture
def loop(settings: Settings, db_url: str) -> Any:
    settings.llm.roles["system1"] = "heuristic"
    settings.llm.roles["system2"] = "heuristic"
    build_cortex(settings, db_url)
    worker = LoopWorker(settings, db_url)
    worker.conn = worker._connect()
    worker.setup()
    worker.cognition.rng = worker.cognition.writer.rng = worker.cognition.rollover.rng = NoFloor()
    yield worker
    worker.teardown()
    worker.conn.close()


def test_a_broad_question_in_the_loop_puts_the_cluster_summary_in_the_prompt(
    loop: LoopWorker, conn: Any, settings: Settings,
) -> None:
    sid = make_session(conn, "nora")  # the user the imported turns belong to
    prompts: list[str] = []
    respond = loop.cognition.respond

    def spy(ctx: Any, on_partial: Any = None) -> Any:
        prompts.append(build_messages(ctx.parts)[0]["content"])
        return respond(ctx, on_partial)

    loop.cognition.respond = spy  # type: ignore[method-assign]
    out = say(loop, conn, sid, "Overall, how has the garden been going?")
    broad = out["meta"]["recall"]["broad"]
    assert broad["fired"] and broad["topic"] == ["garden"] and broad["nodes"] >= 1
    [node_id, *_] = [i for i in out["meta"]["recall"]["items"] if i.startswith("cluster:")]
    [row] = LanceCortex.from_settings(settings).rows(
        CLUSTERS, where=f"cluster_id = '{node_id.split(':', 1)[1]}'", columns=["summary_text"])
    summary = " ".join(row["summary_text"].split())
    assert f"{tag_for(node_id)} (cluster," in prompts[0] and summary[:60] in prompts[0]
    assert "garden" in summary.lower()
    # an ordinary question in the same session: no cluster node reaches the prompt
    plain = say(loop, conn, sid, "Which tiles did we choose for the backsplash?")
    assert plain["meta"]["recall"]["broad"] is None
    assert not any(i.startswith("cluster:") for i in plain["meta"]["recall"]["items"])
    assert "(cluster," not in prompts[1]
