"""bench.synth: the synthetic long-conversation benchmark is deterministic and self-consistent."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest

from bench.data.synth import CATEGORIES, Corpus, Turn, generate, main

ANSWERABLE = ("planted", "paraphrase", "updated", "temporal", "multi_hop")
TURN_KEYS = ["session", "speaker", "role", "content", "timestamp", "external_id"]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return generate(2000, seed=7)


def _word(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(term)}(?:s|es)?(?!\w)", re.IGNORECASE)


def _by_id(corpus: Corpus) -> dict[str, Turn]:
    return {t.external_id: t for t in corpus.turns}


def test_same_seed_same_lines_other_seed_differs(corpus: Corpus) -> None:
    again = generate(2000, seed=7)
    assert [t.as_json() for t in again.turns] == [t.as_json() for t in corpus.turns]
    assert [q.as_json() for q in again.questions] == [q.as_json() for q in corpus.questions]
    other = generate(2000, seed=8)
    assert [t.as_json() for t in other.turns] != [t.as_json() for t in corpus.turns]


def test_category_counts(corpus: Corpus) -> None:
    assert corpus.counts() == {"planted": 40, "paraphrase": 40, "updated": 5, "temporal": 5,
                               "multi_hop": 5, "never_said": 20, "never_said_hard": 20}
    assert len({q.id for q in corpus.questions}) == len(corpus.questions)
    assert len({q.text for q in corpus.questions if q.category.startswith("never")}) == 40


def test_roles_alternate_user_first(corpus: Corpus) -> None:
    assert len(corpus.turns) == 2000
    sessions: dict[str, list[Turn]] = defaultdict(list)
    for t in corpus.turns:
        sessions[t.session].append(t)
        assert (t.role, t.speaker) in {("user", "sam"), ("assistant", "cogd")}
    for turns in sessions.values():
        assert 10 <= len(turns) <= 40
        assert [t.role for t in turns] == ["user", "assistant"] * (len(turns) // 2)
    assert all(a.role != b.role for a, b in pairwise(corpus.turns))


def test_timestamps_increase_over_the_simulated_days(corpus: Corpus) -> None:
    assert all(t.timestamp.endswith("+00:00") for t in corpus.turns)
    stamps = [datetime.fromisoformat(t.timestamp) for t in corpus.turns]
    assert all(a < b for a, b in pairwise(stamps))
    start = datetime.fromisoformat("2026-09-01T09:00:00+00:00")
    assert stamps[0] >= start and stamps[-1] < start + timedelta(days=42)
    days = Counter(s.date() for s in stamps)
    assert 15 <= len(days) < 42  # some days have no conversation
    per_day = Counter(s.date() for s, t in zip(stamps, corpus.turns, strict=True)
                      if t.external_id.endswith("-t1"))
    assert max(per_day.values()) > 1  # and some have several sessions


def test_external_ids_unique_and_references_exist(corpus: Corpus) -> None:
    ids = [t.external_id for t in corpus.turns]
    assert len(set(ids)) == len(ids)
    known = set(ids)
    for q in corpus.questions:
        assert set(q.evidence + q.stale + q.support) <= known, q
        if q.category in ANSWERABLE:
            assert q.evidence and q.answer and not q.absent_terms, q
        else:
            assert not q.evidence and not q.answer and q.absent_terms, q
        assert bool(q.stale) == (q.category == "updated"), q
        assert bool(q.support) == (q.category == "temporal"), q
        assert len(q.evidence) == (2 if q.category == "multi_hop" else 1 if q.evidence else 0)


def test_evidence_turns_state_the_answer_and_nothing_else_does(corpus: Corpus) -> None:
    by_id = _by_id(corpus)
    for q in corpus.questions:
        if q.category not in ANSWERABLE:
            continue
        assert all(by_id[e].role == "user" for e in q.evidence + q.stale + q.support)
        answer = _word(q.answer)
        holders = {t.external_id for t in corpus.turns if answer.search(t.content)}
        assert holders == {q.evidence[-1]}, (q, holders)
        if q.category in ("planted", "paraphrase"):
            assert q.answer.lower() in by_id[q.evidence[0]].content.lower()


def test_planted_and_paraphrase_share_the_fact_with_different_wording(corpus: Corpus) -> None:
    planted = [q for q in corpus.questions if q.category == "planted"]
    para = [q for q in corpus.questions if q.category == "paraphrase"]
    assert [q.evidence for q in planted] == [q.evidence for q in para]
    assert all(p.text != q.text for p, q in zip(planted, para, strict=True))
    assert len({q.evidence for q in planted}) == len(planted)


def test_updated_evidence_comes_after_the_stale_turn(corpus: Corpus) -> None:
    position = {t.external_id: i for i, t in enumerate(corpus.turns)}
    for q in corpus.questions:
        if q.category == "updated":
            assert position[q.stale[0]] < position[q.evidence[0]]
            assert q.answer.lower() not in _by_id(corpus)[q.stale[0]].content.lower()


def test_temporal_evidence_is_on_the_stated_day(corpus: Corpus) -> None:
    by_id = _by_id(corpus)
    offsets = {"the day after": 1, "two days after": 2, "the day before": -1}
    for q in corpus.questions:
        if q.category != "temporal":
            continue
        delta = next(d for rel, d in offsets.items() if rel in q.text)
        anchor = datetime.fromisoformat(by_id[q.support[0]].timestamp).date()
        day = datetime.fromisoformat(by_id[q.evidence[0]].timestamp).date()
        assert day - anchor == timedelta(days=delta), q
        # the kind of statement (cooking, film, run, market) is made once on that day
        head = " ".join(by_id[q.evidence[0]].content.split()[:2])
        same_day = [t for t in corpus.turns if t.timestamp[:10] == day.isoformat()
                    and t.content.startswith(head)]
        assert len(same_day) == 1, q


def test_planted_facts_are_mostly_far_from_the_end(corpus: Corpus) -> None:
    position = {t.external_id: i for i, t in enumerate(corpus.turns)}
    planted = [position[q.evidence[0]] for q in corpus.questions if q.category == "planted"]
    far = [p for p in planted if len(corpus.turns) - 1 - p >= 200]
    assert len(far) >= 0.6 * len(planted)


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_absent_terms_appear_in_no_turn(seed: int) -> None:
    corpus = generate(2000, seed=seed)
    text = "\n".join(t.content for t in corpus.turns)
    for q in corpus.questions:
        if q.category.startswith("never_said"):
            for term in q.absent_terms:
                assert not _word(term).search(text), (q, term)


def test_write_is_byte_identical_and_cli_prints_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--turns", "400", "--seed", "3", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert all(cat in out for cat in CATEGORIES)
    generate(400, seed=3).write(tmp_path / "t.jsonl", tmp_path / "q.jsonl")
    turns = (tmp_path / "a" / "turns.jsonl").read_bytes()
    questions = (tmp_path / "a" / "questions.jsonl").read_bytes()
    assert turns == (tmp_path / "t.jsonl").read_bytes()
    assert questions == (tmp_path / "q.jsonl").read_bytes()
    lines = turns.decode().splitlines()
    assert len(lines) == 400 and all(list(json.loads(x)) == TURN_KEYS for x in lines)
    q0 = json.loads(questions.decode().splitlines()[0])
    assert {"id", "category", "text", "evidence", "stale", "absent_terms"} <= set(q0)


def test_too_small_a_corpus_is_refused() -> None:
    with pytest.raises(ValueError, match="n_turns"):
        generate(100)
