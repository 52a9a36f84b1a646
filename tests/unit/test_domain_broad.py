"""The broad-question heuristic and the choice of RAPTOR nodes (agent/domain/broad.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent.config import load_settings
from agent.domain import broad, timeref
from agent.domain.night_raptor import node_id
from bench.data import convo, synth

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)

BROAD = [
    ("what did we work on in October?", "period", ()),
    ("what have we been working on this month?", "period", ()),
    ("What were the main themes last week?", "period", ()),
    ("summarise our conversations about the garden", "theme", ("garden",)),
    ("Overall, how has the move been going?", "theme", ("move",)),
    ("Can you recap what we discussed yesterday?", "period", ()),
    ("What did I do last weekend?", "period", ()),
    ("what have we been talking about lately?", "period", ()),
    ("How has the garden been going?", "theme", ("garden",)),
    ("Give me a quick overview of the tax stuff", "theme", ("tax", "stuff")),
    ("catch me up on the renovation", "theme", ("renovation",)),
    ("What did we talk about on Tuesday?", "period", ()),
    ("What topics came up in September?", "period", ()),
    ("Summarize what we did in the summer", "period", ()),
    ("What's been going on with the kitchen?", "theme", ("kitchen",)),
    ("what have we been working on?", "theme", ()),
    ("what happened last week?", "period", ()),
]
NEVER_BROAD = [
    "what is my locker code?",
    "when did Ana book the car?",
    "What did I do with my keys?",
    "How is Ana going to pay for it?",
    "What was the summary of the report Ana sent?",
    "How did Maya's job interview go?",
    "What happened to Ben's car in April?",
    "Was the movie good overall?",
    "What dinner did Elena cook in mid-June?",
    "What did I say I'd cook two days after the fire drill?",
    "Where did I go skydiving?",
    "How does Sami get to work now?",
    "What is Umar knitting at the moment?",
    "How was your day?",
    "Which team sport does Leo play?",
    "What did we decide about the deposit?",
    "How is it going?",  # greetings: "how ... going" names no topic and no period
    "Hey, how are things going?",
    "How has your day been going?",
]


def decide(question: str) -> broad.BroadQuestion:
    tq = timeref.resolve(question, NOW)
    return broad.classify(question, tq.window, tq.text)


@pytest.mark.parametrize(("question", "scope", "topic"), BROAD)
def test_questions_about_a_period_or_a_theme_are_broad(
    question: str, scope: str, topic: tuple[str, ...],
) -> None:
    got = decide(question)
    assert got.fired and got.scope == scope and got.topic == topic
    assert got.cue and got.cue.lower() in question.lower()
    assert got.as_dict()["detector"] == "broad-question heuristic"


@pytest.mark.parametrize("question", NEVER_BROAD)
def test_questions_about_a_fact_are_not_broad(question: str) -> None:
    assert decide(question) == broad.NOT_BROAD


def test_no_benchmark_question_is_broad() -> None:
    """bench.quality's questions (synthetic, quick and full; the dated conversations)
    never take the broad path, so the benchmark's figures cannot move with it."""
    questions = {q.text for q in convo.generate(seed=7).questions}
    questions |= {q.text for q in convo.generate(2, seed=11).questions}
    for n, seed in ((600, 7), (2000, 7), (600, 11)):
        questions |= {q.text for q in synth.generate(n_turns=n, seed=seed).questions}
    assert len(questions) > 400
    assert [q for q in sorted(questions) if decide(q).fired] == []


def cfg(**over: float) -> broad.BroadConfig:
    base = broad.BroadConfig.from_table(load_settings().recall)
    return broad.BroadConfig(**{**base.__dict__, **over})


def leaf(i: int, day: datetime, user: str | None = None) -> broad.LeafBlock:
    return broad.LeafBlock(f"b{i}", day, day + timedelta(hours=1), user, (f"t{i}a", f"t{i}b"))


def node(level: int, members: list[str], summary: str,
         vec: tuple[float, ...] = (1.0, 0.0, 0.0)) -> broad.ClusterNode:
    return broad.ClusterNode(node_id(level, members), level, summary, tuple(members),
                             len(members), vec)


OCT, NOV = datetime(2026, 10, 10, tzinfo=UTC), datetime(2026, 11, 10, tzinfo=UTC)
BLOCKS = {b.block_id: b for b in [leaf(i, OCT + timedelta(days=i)) for i in range(4)]
          + [leaf(i, NOV + timedelta(days=i)) for i in range(4, 8)]}
GARDEN = node(1, ["b0", "b1"], "garden", (1.0, 0.0, 0.0))
KITCHEN = node(1, ["b2", "b3"], "kitchen", (0.0, 1.0, 0.0))
TAX = node(1, ["b4", "b5", "b6", "b7"], "tax", (0.0, 0.0, 1.0))
OCTOBER = node(2, [GARDEN.cluster_id, KITCHEN.cluster_id], "october", (0.7, 0.7, 0.0))
ALL = node(3, [OCTOBER.cluster_id, TAX.cluster_id], "everything", (0.6, 0.6, 0.6))
TREE = [GARDEN, KITCHEN, TAX, OCTOBER, ALL]


def test_a_node_holds_the_blocks_of_its_members_down_to_level_1() -> None:
    leaves = broad.leaf_ids(TREE)
    assert leaves[OCTOBER.cluster_id] == ["b0", "b1", "b2", "b3"]
    assert leaves[ALL.cluster_id] == [f"b{i}" for i in range(8)]


def test_a_period_question_takes_the_nodes_inside_its_window_broadest_first() -> None:
    q = decide("what did we work on in October?")
    window = timeref.resolve("in October", NOW).window
    got = broad.choose_nodes(TREE, BLOCKS, q, window=window, query_vector=None,
                             user_id=None, cfg=cfg())
    assert [c.node.summary for c in got] == ["october", "garden", "kitchen"]  # not tax, not ALL
    assert all(s.start is not None and s.start.month == 10 for c in got for s in c.sources)
    assert broad.node_sources(got[1], window)[0] == {
        "block_id": "b0", "start": BLOCKS["b0"].start.isoformat(),  # type: ignore[union-attr]
        "end": BLOCKS["b0"].end.isoformat(), "in_window": True,  # type: ignore[union-attr]
        "entry_ids": ["t0a", "t0b"]}
    text = broad.node_text(got[0])
    assert "RAPTOR level 2, trunk" in text and "10 Oct 2026 to 13 Oct 2026" in text
    # with the canopy's share lowered to a half, the canopy covers October too
    loose = broad.choose_nodes(TREE, BLOCKS, q, window=window, query_vector=None,
                               user_id=None, cfg=cfg(broad_window_min_share=0.5))
    assert loose[0].node.summary == "everything"
    assert broad.choose_nodes(TREE, BLOCKS, q, window=window, query_vector=None, user_id=None,
                              cfg=cfg(broad_max_nodes=1)) == got[:1]


def test_a_theme_question_takes_the_nodes_near_its_topic() -> None:
    q = decide("summarise our conversations about the garden")
    got = broad.choose_nodes(TREE, BLOCKS, q, window=None, query_vector=(1.0, 0.05, 0.0),
                             user_id=None, cfg=cfg())
    # the trunk (cosine 0.74) and canopy (0.61) over it pass the floor but lie more than
    # the margin (0.15) below the garden's node (1.0)
    assert [c.node.summary for c in got] == ["garden"]
    wide = broad.choose_nodes(TREE, BLOCKS, q, window=None, query_vector=(1.0, 0.05, 0.0),
                              user_id=None, cfg=cfg(broad_similarity_margin=0.3))
    assert [c.node.summary for c in wide] == ["garden", "october"]
    far = broad.choose_nodes(TREE, BLOCKS, q, window=None, query_vector=(-1.0, 0.0, 0.0),
                             user_id=None, cfg=cfg())
    assert far == []  # nothing near the topic: no node rather than an unrelated one


def test_a_question_with_neither_topic_nor_window_takes_the_most_recent_nodes() -> None:
    q = decide("what have we been working on?")
    got = broad.choose_nodes(TREE, BLOCKS, q, window=None, query_vector=None, user_id=None,
                             cfg=cfg(broad_max_nodes=2))
    assert [c.node.summary for c in got] == ["everything", "tax"]


def test_a_node_over_another_users_block_is_never_offered() -> None:
    blocks = dict(BLOCKS, b3=leaf(3, OCT + timedelta(days=3), user="bob"))
    q = decide("what did we work on in October?")
    window = timeref.resolve("in October", NOW).window
    got = broad.choose_nodes(TREE, blocks, q, window=window, query_vector=None,
                             user_id="ada", cfg=cfg())
    assert [c.node.summary for c in got] == ["garden"]
    assert [c.node.summary for c in broad.choose_nodes(
        TREE, blocks, q, window=window, query_vector=None, user_id="bob", cfg=cfg())] == [
        "october", "garden", "kitchen"]


def test_a_node_over_a_block_that_is_gone_is_offered_to_no_user() -> None:
    """Its summary was written from that block too, and whose it was is unknown."""
    blocks = {k: v for k, v in BLOCKS.items() if k != "b3"}
    q = decide("what did we work on in October?")
    window = timeref.resolve("in October", NOW).window
    got = broad.choose_nodes(TREE, blocks, q, window=window, query_vector=None,
                             user_id="ada", cfg=cfg())
    assert [c.node.summary for c in got] == ["garden"]
    assert [c.node.summary for c in broad.choose_nodes(
        TREE, blocks, q, window=window, query_vector=None, user_id=None, cfg=cfg())] == [
        "october", "garden", "kitchen"]


def test_a_single_child_chain_and_recently_shown_nodes_are_left_out() -> None:
    chain = node(2, [TAX.cluster_id], "tax again", (0.0, 0.0, 1.0))
    q = decide("what did we work on in November?")
    window = timeref.resolve("in November", NOW).window
    got = broad.choose_nodes([*TREE, chain], BLOCKS, q, window=window, query_vector=None,
                             user_id=None, cfg=cfg())
    assert [c.node.summary for c in got] == ["tax again"]
    assert broad.choose_nodes([*TREE, chain], BLOCKS, q, window=window, query_vector=None,
                              user_id=None, cfg=cfg(),
                              skip=frozenset({chain.cluster_id})) != got
