"""Block formation (seed 001 §3.3, §3.8, §4): spans, exchanges, continuity, metablocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.config import load_settings
from agent.domain.night_blocks import (
    BlockConfig,
    StretchEnds,
    chains,
    exchanges,
    form_spans,
    link_continuations,
)
from agent.domain.night_flux import FluxArc

CFG = BlockConfig.from_table(load_settings().night_cycle)
T0 = datetime(2026, 11, 20, 9, tzinfo=UTC)


def arc(start: int, end: int, closed: bool = True) -> FluxArc:
    return FluxArc(start, end, 1.0, 0.5, 0.1, 0.4, closed)


def test_config_comes_from_the_seed_table() -> None:
    assert (CFG.margin_before_turns, CFG.margin_after_turns) == (2, 2)
    assert (CFG.continuity_last_turns, CFG.continuity_min_similarity) == (5, 0.75)


def test_an_arc_block_has_two_turns_of_margin_each_side() -> None:
    spans = form_spans(30, [arc(10, 14)], CFG)
    [block] = [s for s in spans if s.kind == "arc"]
    assert (block.start, block.end, block.anterior, block.posterior) == (8, 16, 2, 2)
    # the 13 turns after it exceed 12: two baseline blocks, as even as possible
    assert [(s.start, s.end) for s in spans if s.kind == "baseline"] == [(0, 7), (17, 23),
                                                                          (24, 29)]


def test_margins_stop_at_the_stretch_edges_and_overlapping_arcs_merge() -> None:
    spans = form_spans(12, [arc(1, 3), arc(5, 8)], CFG)
    # 0..5 and 3..10 overlap: one block; the last turn (11) alone would be one utterance
    [block] = spans
    assert (block.start, block.end, block.kind, len(block.arcs)) == (0, 11, "arc", 2)
    assert (block.anterior, block.posterior) == (1, 3)


def test_a_one_turn_gap_joins_its_neighbour_instead_of_standing_alone() -> None:
    spans = form_spans(11, [arc(2, 6)], CFG)  # margins 0..8, gap of 9..10 is two turns
    assert [(s.start, s.end) for s in spans] == [(0, 8), (9, 10)]
    spans = form_spans(10, [arc(2, 6)], CFG)  # gap of one turn (9)
    assert [(s.start, s.end, s.posterior) for s in spans] == [(0, 9, 3)]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 80), starts=st.lists(st.integers(0, 79), max_size=6),
       lengths=st.lists(st.integers(1, 8), min_size=6, max_size=6))
def test_every_turn_is_in_exactly_one_block(n: int, starts: list[int],
                                             lengths: list[int]) -> None:
    arcs = [arc(s, min(n - 1, s + d)) for s, d in zip(starts, lengths, strict=False) if s < n]
    spans = form_spans(n, arcs, CFG)
    covered = [i for s in spans for i in range(s.start, s.end + 1)]
    assert covered == list(range(n))
    assert all(s.size <= CFG.baseline_block_max_turns for s in spans if s.kind == "baseline")
    if n >= 2 and arcs:
        assert all(s.size >= 2 for s in spans)


def test_exchanges_pair_a_user_turn_with_what_answers_it() -> None:
    roles = ["assistant", "user", "assistant", "user", "user", "assistant", "assistant"]
    assert exchanges(roles) == [(0, 0), (1, 2), (3, 3), (4, 6)]


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, np.float32)
    return v / np.linalg.norm(v)


def ends(key: str, start_h: float, end_h: float, open_vec: np.ndarray | None,
         opening: np.ndarray | None, user: str = "u", cycle: str = "c1") -> StretchEnds:
    return StretchEnds(key, user, cycle, T0 + timedelta(hours=start_h),
                       T0 + timedelta(hours=end_h), open_vec, opening)


def test_a_session_that_opens_on_the_open_question_continues_it() -> None:
    q = _unit(1, 0.1, 0)
    stretches = [
        ends("a", 0, 1, q, _unit(0, 1, 0)),
        ends("b", 2, 3, None, _unit(1, 0.15, 0)),  # same question: continues a
        ends("c", 4, 5, None, _unit(0, 0, 1)),  # unrelated
    ]
    links = link_continuations(stretches, CFG)
    assert [(a, b) for a, b, _ in links] == [("a", "b")]
    assert links[0][2] > 0.75


def test_continuity_needs_same_user_same_cycle_within_24_hours() -> None:
    q = _unit(1, 0, 0)
    for later in (ends("b", 30, 31, None, q),  # more than 24 h after
                  ends("b", 2, 3, None, q, user="other"),
                  ends("b", 2, 3, None, q, cycle="c2"),
                  ends("b", 2, 3, None, _unit(1, 1.2, 0))):  # cosine 0.64 <= 0.75
        assert link_continuations([ends("a", 0, 1, q, q), later], CFG) == []


def test_chains_of_continuations_become_one_metablock_each() -> None:
    links = [("a", "b", 0.9), ("b", "c", 0.8), ("x", "y", 0.8)]
    assert chains(links) == [["a", "b", "c"], ["x", "y"]]
