"""Recall with the learned fusion (issue 39 item 2) on a real Postgres: the candidates carry
what the model reads (each list's own score, the session), and the shipped model ranks a
planted answer first."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.config import Settings
from agent.runtime import Runtime
from tests.integration.test_contextual_recall import LINES, import_lines

NOW = datetime(2023, 6, 1, tzinfo=UTC)


@pytest.fixture
def imported(settings: Settings, conn: Any) -> Any:
    import_lines(settings, conn, LINES)
    return conn


def test_candidates_carry_each_lists_score_and_the_session(settings: Settings,
                                                           imported: Any) -> None:
    recaller = Runtime(settings).recaller()
    ctx, names = recaller.query_context("pottery bowls in the kiln", NOW)
    cands, _ = recaller.candidates(imported, "pottery bowls in the kiln", 10, context=ctx,
                                   speaker_names=names)
    turns = {c.external_ids[0]: c for c in cands if c.kind == "day_table"}
    sessions = dict(imported.execute(
        "SELECT external_id, session_id::text FROM day_table").fetchall())
    assert turns and all(c.session_id == sessions[x] for x, c in turns.items())
    kiln = turns["s2-6"]
    assert kiln.sparse_rank is not None and kiln.bm25_score is not None and kiln.bm25_score > 0
    best = max(c.bm25_score or 0.0 for c in turns.values())
    assert kiln.bm25_score == best  # "pottery", "bowls" and "kiln": the best BM25 row
    ranked = [c for c in turns.values() if c.dense_rank is not None]
    assert ranked and all(c.dense_similarity is not None and -1 <= c.dense_similarity <= 1
                          for c in ranked)
    assert all(c.bare_similarity is not None for c in turns.values() if c.bare_rank)


@pytest.mark.parametrize(("question", "answer"), [
    ("Which city did Ana move to?", "s2-7"),
    ("Whose pottery bowls crack in the kiln?", "s2-6"),
    ("What did Ben buy at the flea market?", "s2-4"),
])
def test_learned_fusion_ranks_the_planted_answer_first(
        settings: Settings, imported: Any, question: str, answer: str) -> None:
    settings.recall["fusion"] = "learned"
    recaller = Runtime(settings).recaller()
    assert recaller.fusion() is not None
    out = recaller.recall(imported, question, log=False, now=NOW)
    top = out.result.items[0]
    assert top.external_ids == (answer,), [(i.external_ids, i.score) for i in
                                           out.result.items[:3]]
    assert "learned" in top.components and top.score == pytest.approx(
        top.components["learned"])
    settings.recall["fusion"] = "rrf"
    plain = Runtime(settings).recaller().recall(imported, question, log=False, now=NOW)
    assert "learned" not in plain.result.items[0].components


def test_links_bring_a_seeds_neighbours_into_the_pool(settings: Settings,
                                                      imported: Any) -> None:
    """[recall] link_seed_rank (issue 39 item 3): the turns right before and after a turn
    ranked that high join the candidates, with the seed's rank and which side they are on;
    the answer "Yes, twice." shares no word with the question. Off (0): no link fields."""
    question = "Did Ben ever try the pottery class downtown?"

    def pool(seed_rank: int) -> dict[str, Any]:
        settings.recall["link_seed_rank"] = seed_rank
        recaller = Runtime(settings).recaller()
        ctx, names = recaller.query_context(question, NOW)
        cands, _ = recaller.candidates(imported, question, 10, context=ctx,
                                       speaker_names=names)
        return {c.external_ids[0]: c for c in cands if c.kind == "day_table"}

    off = pool(0)
    assert all(c.link_rank is None and not c.link_next for c in off.values())
    on = pool(3)
    seed = on["s1-2"]  # the question Ana asked, ranked first by its words
    seed_rank = min(r for r in (seed.dense_rank, seed.bare_rank, seed.sparse_rank) if r)
    answer, before = on["s1-3"], on["s1-1"]
    assert answer.link_rank is not None and answer.link_rank <= max(seed_rank, 3)
    assert answer.link_next and answer.similarity is not None
    assert before.link_rank is not None and not before.link_next
    assert set(on) >= set(off)  # the hop only adds



@pytest.mark.parametrize("mode", ["both", "next", "off"])
def test_recalled_turns_come_back_with_the_turns_around_them(
        settings: Settings, imported: Any, mode: str) -> None:
    """[recall] adjacent_turns (issue 39 item 2, "return the pair"): the question Ana asked,
    recalled first by its words, comes back with Ben's answer "Yes, twice." (the turn after
    it) and, with "both", the turn before it; "off" attaches nothing. The attached turns'
    tokens count in the result's."""
    settings.recall["adjacent_turns"] = mode
    recaller = Runtime(settings).recaller()
    out = recaller.recall(imported, "Did Ben ever try the pottery class downtown?", k=1,
                          log=False, now=NOW)
    (top,) = out.result.items
    assert top.external_ids == ("s1-2",)
    got = [(a.external_id, a.after, a.content) for a in top.adjacent]
    expected = {"off": [], "next": [("s1-3", True, "Yes, twice.")],
                "both": [("s1-1", False, "Nice! I bought running shoes last week."),
                         ("s1-3", True, "Yes, twice.")]}[mode]
    assert got == expected
    assert out.result.tokens == recaller.count_tokens(top.content) + sum(
        a.tokens for a in top.adjacent)
    shown = top.as_dict()
    assert ("adjacent" in shown) == (mode != "off")
    if mode != "off":
        assert shown["adjacent"][-1]["content"] == "Yes, twice."
        assert top.adjacent[-1].speaker == "Ben"


def test_adjacent_turns_are_never_items_twice_and_fit_the_budget(settings: Settings,
                                                                  imported: Any) -> None:
    """A turn that is an item itself is not attached to another (k=3: the question's
    neighbours that rank on their own stay items), and a budget with no room left for
    them attaches none."""
    settings.recall["adjacent_turns"] = "both"
    recaller = Runtime(settings).recaller()
    question = "Did Ben ever try the pottery class downtown?"
    out = recaller.recall(imported, question, k=3, log=False, now=NOW)
    ids = {i.id for i in out.result.items}
    attached = [a.id for i in out.result.items for a in i.adjacent]
    assert attached and not set(attached) & ids and len(attached) == len(set(attached))
    items_only = sum(recaller.count_tokens(i.content) for i in out.result.items)
    tight = recaller.recall(imported, question, k=3, log=False, now=NOW,
                            budget_tokens=items_only)
    assert [i.id for i in tight.result.items] == [i.id for i in out.result.items]
    assert all(not i.adjacent for i in tight.result.items)
    assert tight.result.tokens == items_only
