"""agent/domain/episodes.py: the episode, title and milestone heuristics and the timeline
question parser (issue 42 item 4), pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agent.domain import episodes as e

CFG = e.EpisodeConfig(gap_hours=6, min_similarity=0.2, title_terms=3, event_importance=0.85)
T0 = datetime(2026, 10, 3, 18, 0, tzinfo=UTC)


def piece(i: int, minutes: float, vec: list[float], session: str = "s1") -> e.Piece:
    at = T0 + timedelta(minutes=minutes)
    return e.Piece(f"b{i}", session, at, at + timedelta(minutes=10),
                   np.array(vec, dtype=np.float32), (f"t{i}",))


def test_segments_cut_at_a_new_day_a_long_gap_and_a_topic_shift() -> None:
    pieces = [
        piece(0, 0, [1, 0, 0]), piece(1, 15, [0.9, 0.1, 0]),  # one topic, one hour
        piece(2, 30, [0, 0, 1]),  # a topic shift (cosine 0 to the centroid)
        piece(3, 30 + 7 * 60, [0, 0, 1]),  # a gap of 7 hours
        piece(4, 24 * 60, [0, 0, 1]),  # the next day, same topic
    ]
    got = e.segment(list(reversed(pieces)), CFG)  # any order in
    assert [[p.id for p in s.pieces] for s in got] == [["b0", "b1"], ["b2"], ["b3"], ["b4"]]
    assert got[0].start == T0 and got[0].end == T0 + timedelta(minutes=25)


def test_a_piece_without_a_vector_stays_in_its_episode() -> None:
    a = piece(0, 0, [1, 0])
    b = e.Piece("b1", "s1", T0 + timedelta(minutes=20), T0 + timedelta(minutes=30), None)
    assert [[p.id for p in s.pieces] for s in e.segment([a, b], CFG)] == [["b0", "b1"]]


def test_salient_terms_name_the_topic_and_skip_function_words() -> None:
    texts = ["I went hiking with Marta in the Alps.", "The Alps were cold; Marta loved hiking.",
             "We really think hiking is good."]
    # names count double: Alps and Marta (2 mentions each) before hiking (3)
    assert e.salient_terms(texts, 3) == ["Alps", "Marta", "hiking"]
    assert e.heuristic_title([]) == "conversation"


def test_milestones_first_mentions_decisions_moves_and_events() -> None:
    turns = [
        e.TurnText("t1", T0, "Today I met Marta at the Lisbon office. I decided to take it."),
        e.TurnText("t2", T0 + timedelta(hours=1), "Marta says we moved to Porto last week."),
        e.TurnText("t3", T0 + timedelta(hours=2), "The offer letter arrived.", importance=0.9),
        e.TurnText("t4", T0 + timedelta(hours=3), "nothing much, just tea"),
    ]
    got = [(m.kind, m.key, m.entry_id) for m in e.milestones(turns, CFG)]
    assert got == [("first_mention", "marta", "t1"), ("first_mention", "lisbon", "t1"),
                   ("decision", "t1", "t1"), ("first_mention", "porto", "t2"),
                   ("move", "t2", "t2"), ("event", "t3", "t3")]


NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(("text", "start", "end"), [
    ("what happened in October?", "2026-10-01", "2026-11-01"),
    ("What happened in October 2025?", "2025-10-01", "2025-11-01"),
    ("what did I do last month", "2026-11-01", "2026-12-01"),
    ("give me a recap of September", "2026-09-01", "2026-10-01"),
    ("what happened between 2026-09-01 and 2026-10-15?", "2026-09-01", "2026-10-16"),
])
def test_timeline_questions_and_their_range(text: str, start: str, end: str) -> None:
    got = e.timeline_question(text, NOW)
    assert got is not None
    assert (got.start.date().isoformat(), got.end.date().isoformat()) == (start, end)


@pytest.mark.parametrize("text", ["where do I live?", "in October I was sad",
                                  "what happened?", "what happened between 2026-13-01 and "
                                  "2026-10-01"])
def test_not_a_timeline_question(text: str) -> None:
    assert e.timeline_question(text, NOW) is None
