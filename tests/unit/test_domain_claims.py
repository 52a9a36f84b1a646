"""Claim slots (issue 39 item 5): the slot heuristic, the past-question cue, and recall's
demotion of the claim that was not valid at the asked time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent.config import load_settings
from agent.domain.claims import (
    SLOT_HEURISTIC,
    ClaimState,
    claim_factor,
    detect,
    same_value,
)
from agent.domain.recall import Candidate, QueryContext, RecallConfig, recall_pipeline
from agent.domain.timeref import TimeWindow, resolve

CFG = RecallConfig.from_table(load_settings().recall)
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
JAN, JUN = NOW - timedelta(days=300), NOW - timedelta(days=150)


@pytest.mark.parametrize(("text", "slot", "value"), [
    ("I live in Berlin.", "residence", "Berlin"),
    ("I moved to Lisbon last month.", "residence", "Lisbon"),
    ("I've just moved to New York for work", "residence", "New York"),
    ("Honestly, I now live in Lisbon with my cat", "residence", "Lisbon"),
    ("I'm based in Porto these days", "residence", "Porto"),
    ("I work as a nurse at St Mary's since 2020", "job", "a nurse at St Mary's"),
    ("Big news: I started a new job at Acme Corp last week!", "job", "Acme Corp"),
    ("My new job is head of design.", "job", "head of design"),
    ("My partner is Sam.", "partner", "Sam"),
    ("My wife, Ana, says hi", "partner", "Ana"),
    ("I'm engaged to Maria Lopez now", "partner", "Maria Lopez"),
    ("The plan is now to sail to Crete in June.", "plan", "sail to Crete in June"),
    ("I'm going to take the train instead.", "plan", "take the train"),
])
def test_the_slot_heuristic_reads_first_person_statements(text: str, slot: str,
                                                           value: str) -> None:
    found = detect(text)
    assert [(c.slot, c.value) for c in found] == [(slot, value)]
    assert SLOT_HEURISTIC.startswith("heuristic:")  # named as a heuristic


@pytest.mark.parametrize("text", [
    "Do I live in Berlin?",  # a question
    "I used to live in Berlin.",  # a past state
    "If I moved to Lisbon, would you visit?",  # a hypothetical
    "I don't live in Berlin anymore",  # negated
    "I'm thinking about moving to Lisbon",
    "I want to work as a pilot one day",
    "my partner is tired today",  # no name
    "Hetzner pricing is about three times cheaper than AWS, note 3",
    "Where did you live before?",
])
def test_no_claim_from_questions_hedges_or_plain_facts(text: str) -> None:
    assert detect(text) == []


def test_the_last_statement_of_a_slot_wins_and_slots_are_separate() -> None:
    found = detect("I lived in Berlin for years, then I moved to Lisbon. "
                   "I work at Acme now.")
    assert [(c.slot, c.value) for c in found] == [("residence", "Lisbon"), ("job", "Acme")]
    assert same_value("Berlin", " berlin ") and not same_value("Berlin", "Lisbon")


@pytest.mark.parametrize(("question", "past"), [
    ("Where did I live before?", True),
    ("Where did Ana live before she moved?", True),
    ("What was my old job?", True),
    ("Who was my partner back then?", True),
    ("Where did I use to work? I used to work somewhere else", True),
    ("Where do I live now?", False),
    ("Where does Ana live?", False),
    ("How old is Sam?", False),
    ("Where did I live before, and where do I live now?", False),  # the present wins
])
def test_a_question_about_the_past_is_told_apart(question: str, past: bool) -> None:
    assert resolve(question, NOW).asks_past is past


BERLIN = ClaimState("retired", JAN, JUN, replaced=False)
LISBON = ClaimState("current", JUN, None, replaced=True)
ONLY = ClaimState("current", JUN, None, replaced=False)


def test_the_claim_valid_at_the_asked_time_ranks_above_its_rival() -> None:
    w = 0.5

    def both(window: TimeWindow | None, past: bool, current: bool) -> tuple[float, float]:
        return (claim_factor(BERLIN, window, past, current, w),
                claim_factor(LISBON, window, past, current, w))

    assert both(None, False, False) == (0.5, 1.0)  # no time named: the retired one demoted
    assert both(None, False, True) == (0.5, 1.5)  # "now": and the current one raised
    assert both(None, True, False) == (1.5, 0.5)  # "before": the other way round
    march = TimeWindow(JAN + timedelta(days=30), JAN + timedelta(days=60), "in March")
    assert both(march, False, False) == (1.5, 0.5)  # a period: the claim that held then
    later = TimeWindow(NOW - timedelta(days=30), NOW, "last month")
    assert both(later, False, False) == (0.5, 1.5)
    # a claim that never had a rival is never moved
    assert {claim_factor(ONLY, x, p, c, w) for x in (None, march) for p in (True, False)
            for c in (True, False)} == {1.0}


def _pair() -> list[Candidate]:
    """The retired claim is the better lexical match (as "live in Berlin" is for "where did
    I live"), and the newer one is the more recent."""
    return [
        Candidate(id="memory:berlin", kind="memory", content="I live in Berlin.",
                  created_at=JAN, dense_rank=1, sparse_rank=1, similarity=0.8, claim=BERLIN),
        Candidate(id="memory:lisbon", kind="memory", content="I moved to Lisbon.",
                  created_at=JUN, dense_rank=2, sparse_rank=2, similarity=0.7, claim=LISBON),
        Candidate(id="memory:other", kind="memory", content="I like Lisbon's trams.",
                  created_at=NOW, dense_rank=3, similarity=0.5),
    ]


def test_recall_ranks_the_current_claim_first_unless_the_past_is_asked() -> None:
    now = recall_pipeline(_pair(), now=NOW, cfg=CFG, k=3, context=QueryContext())
    assert now.items[0].id == "memory:lisbon"
    by_id = {i.id: i for i in now.items}  # demoted, still found
    assert by_id["memory:berlin"].components["claim"] == CFG.retired_claim_weight
    assert by_id["memory:lisbon"].components["claim"] == 1.0
    before = recall_pipeline(_pair(), now=NOW, cfg=CFG, k=3,
                             context=QueryContext(asks_past=True))
    assert before.items[0].id == "memory:berlin"
    assert "claim" not in next(i for i in now.items if i.id == "memory:other").components


def test_the_demotion_is_off_at_weight_one() -> None:
    from dataclasses import replace

    off = replace(CFG, retired_claim_weight=1.0)
    out = recall_pipeline(_pair(), now=NOW, cfg=off, k=3, context=QueryContext())
    assert out.items[0].id == "memory:berlin"  # the better match, as before claim slots


def test_a_question_about_the_past_puts_the_claim_of_then_above_a_look_alike() -> None:
    """"My sister lives in Munich" matches "where did I live before?" as well as the
    retired claim does; the claim that held then answers it."""
    items = [
        Candidate(id="memory:munich", kind="memory", content="My sister lives in Munich.",
                  created_at=JUN, dense_rank=1, sparse_rank=2, similarity=0.8),
        Candidate(id="memory:berlin", kind="memory", content="I live in Berlin.",
                  created_at=JAN, dense_rank=2, sparse_rank=1, similarity=0.8, claim=BERLIN),
        Candidate(id="memory:lisbon", kind="memory", content="I moved to Lisbon.",
                  created_at=JUN, dense_rank=3, sparse_rank=3, similarity=0.7, claim=LISBON),
    ]
    before = recall_pipeline(items, now=NOW, cfg=CFG, k=3, context=QueryContext(asks_past=True))
    assert [i.id for i in before.items][:2] == ["memory:berlin", "memory:munich"]
    now = recall_pipeline(items, now=NOW, cfg=CFG, k=3,
                          context=QueryContext(asks_current=True))
    assert now.items[0].id == "memory:lisbon"
