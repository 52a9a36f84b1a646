"""bench.convo: the dated two-speaker benchmark is deterministic and honest;
bench.quality_convo: its pure parts (rendering, ablations, aggregation)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent.config import load_settings
from agent.domain.recall import RecallConfig
from bench.data.convo import CATEGORIES, ConvoCorpus, Turn, generate, main, relative_phrase
from bench.suites import quality_convo

TURN_KEYS = ["user", "session", "speaker", "role", "content", "timestamp", "external_id"]
ANSWERABLE = [c for c in CATEGORIES if c != "never_said"]


@pytest.fixture(scope="module")
def corpus() -> ConvoCorpus:
    return generate(seed=7)


def _word(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(term)}(?:s|es)?(?!\w)", re.IGNORECASE)


def _by_id(corpus: ConvoCorpus) -> dict[str, Turn]:
    return {t.external_id: t for t in corpus.turns}


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seed", "7", "--out", str(tmp_path / "cli")]) == 0
    assert "single_hop" in capsys.readouterr().out
    generate(seed=7).write(tmp_path / "a")
    generate(seed=11).write(tmp_path / "b")
    for name in ("turns.jsonl", "questions.jsonl"):
        same = (tmp_path / "a" / name).read_bytes()
        assert same == (tmp_path / "cli" / name).read_bytes()
        assert same != (tmp_path / "b" / name).read_bytes()
    lines = (tmp_path / "a" / "turns.jsonl").read_text().splitlines()
    assert all(list(json.loads(x)) == TURN_KEYS for x in lines)
    q0 = json.loads((tmp_path / "a" / "questions.jsonl").read_text().splitlines()[0])
    assert {"id", "conversation", "category", "text", "evidence", "stale", "asked_at",
            "answer", "window"} <= set(q0)


def test_conversations_are_long_dated_and_two_named_speakers(corpus: ConvoCorpus) -> None:
    assert len(corpus.conversations) >= 10
    speakers = [s for c in corpus.conversations for s in c.speakers]
    assert len(set(speakers)) == len(speakers)  # first names distinct across the corpus
    assert all(s.isalpha() and s[0].isupper() for s in speakers)
    starts = set()
    for conv in corpus.conversations:
        turns = [t for t in corpus.turns if t.user == conv.handle]
        assert len(turns) >= 400 and len(turns) == conv.turns
        assert {t.speaker for t in turns} == set(conv.speakers)
        assert {t.role for t in turns} == {"user"}
        sessions: dict[str, list[Turn]] = defaultdict(list)
        for t in turns:
            assert t.session.startswith(conv.handle + "-") and t.external_id.startswith(t.session)
            sessions[t.session].append(t)
        assert len(sessions) >= 20
        assert all(len({t.speaker for t in ts}) == 2 for ts in sessions.values())
        stamps = [_when(t.timestamp) for t in turns]
        assert all(a < b for a, b in pairwise(stamps)) and stamps[0].utcoffset() == timedelta(0)
        days = sorted({s.date() for s in stamps})
        assert len(days) == len(sessions)  # one session a day, on different days
        assert all(3 <= (b - a).days <= 10 for a, b in pairwise(days))
        assert (days[-1] - days[0]).days >= 90
        starts.add(days[0])
        asked = _when(conv.asked_at)
        assert timedelta(hours=12) < asked - stamps[-1] < timedelta(days=5)
    assert len(starts) == len(corpus.conversations)
    ids = [t.external_id for t in corpus.turns]
    assert len(set(ids)) == len(ids)


def test_questions_reference_their_conversation(corpus: ConvoCorpus) -> None:
    by_id = _by_id(corpus)
    assert len({q.id for q in corpus.questions}) == len(corpus.questions)
    for conv in corpus.conversations:
        qs = [q for q in corpus.questions if q.conversation == conv.handle]
        assert 25 <= len(qs) <= 30
        assert {q.category for q in qs} == set(CATEGORIES)
        for q in qs:
            assert q.asked_at == conv.asked_at and q.about in conv.speakers
            assert q.about in q.text  # every question names the speaker it is about
            for ext in q.evidence + q.stale + q.support:
                assert by_id[ext].user == conv.handle, (q, ext)
            if q.category == "never_said":
                assert not q.evidence and not q.answer and q.absent_terms
            else:
                assert q.evidence and q.answer and not q.absent_terms, q
            assert bool(q.stale) == (q.category in ("adversarial", "updated")), q
            assert (q.window is not None) == (q.category == "temporal"), q


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_never_said_words_appear_in_no_turn(seed: int) -> None:
    corpus = generate(seed=seed)
    text = "\n".join(t.content for t in corpus.turns)
    for q in corpus.questions:
        if q.category == "never_said":
            for term in q.absent_terms:
                assert not _word(term).search(text), (q, term)


def test_evidence_holds_the_answer(corpus: ConvoCorpus) -> None:
    by_id = _by_id(corpus)
    for q in corpus.questions:
        text = " ".join(by_id[e].content for e in q.evidence)
        if q.category == "single_hop":
            words = [w for w in re.findall(r"\w+", q.answer) if len(w) > 2]
            assert any(_word(w).search(text) for w in words), (q, text)
        if q.category in ("multi_hop", "temporal", "updated"):
            for value in q.answer.removeprefix("it ").split(", "):
                assert value.lower() in text.lower(), (q, value)
        if q.category == "multi_hop":
            assert {by_id[e].speaker for e in q.evidence} == {q.about}
            assert len({by_id[e].session for e in q.evidence}) == len(q.evidence) >= 2


def test_temporal_evidence_lies_in_its_window_and_only_there(corpus: ConvoCorpus) -> None:
    by_id = _by_id(corpus)
    for q in corpus.questions:
        if q.category != "temporal":
            continue
        assert q.window is not None
        lo, hi = (_when(x) for x in q.window)
        assert lo < hi <= _when(q.asked_at), q
        assert all(lo <= _when(by_id[e].timestamp) < hi for e in q.evidence), q
        assert all(by_id[e].speaker == q.about for e in q.evidence)
        assert not any(lo <= _when(by_id[s].timestamp) < hi for s in q.support), q
        # the answer is said once in the conversation: other dates say other values
        value = q.answer.removeprefix("it ")
        holders = [t for t in corpus.turns if t.user == q.conversation
                   and value.lower() in t.content.lower()]
        assert [t.external_id for t in holders] == list(q.evidence), q


def test_relative_phrases() -> None:
    d = datetime(2023, 5, 10).date()  # a Wednesday
    assert relative_phrase(d - timedelta(days=1), d)[0] == "yesterday"
    assert relative_phrase(d - timedelta(days=2), d)[0] == "earlier this week"
    assert relative_phrase(d - timedelta(days=4), d)[:2] == ("last weekend",
                                                             d - timedelta(days=4))
    assert relative_phrase(d - timedelta(days=6), d)[0] == "last week"
    assert relative_phrase(d - timedelta(days=13), d)[0] == "the week before last"


def test_adversarial_stale_is_the_other_speaker(corpus: ConvoCorpus) -> None:
    by_id = _by_id(corpus)
    for q in corpus.questions:
        if q.category == "adversarial":
            assert {by_id[e].speaker for e in q.evidence} == {q.about}
            assert q.stale and all(by_id[s].speaker != q.about for s in q.stale), q


def test_updated_evidence_is_newer_than_stale(corpus: ConvoCorpus) -> None:
    by_id = _by_id(corpus)
    for q in corpus.questions:
        if q.category == "updated":
            assert min(_when(by_id[e].timestamp) for e in q.evidence) > max(
                _when(by_id[s].timestamp) for s in q.stale), q
            assert not _word(q.answer).search(" ".join(by_id[s].content for s in q.stale))
            assert all(by_id[x].speaker == q.about for x in q.evidence + q.stale)


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="n_conversations"):
        generate(n_conversations=16)
    with pytest.raises(ValueError, match="sessions"):
        generate(n_conversations=1, sessions=5)


# ---------------------------------------------------------------- bench.quality_convo

def test_render_puts_date_and_speaker_first() -> None:
    t = Turn("c01", "c01-s01", "Ana", "user", "Yep, last week!", "2023-05-08T19:02:00+00:00",
             "c01-s01-t001")
    assert quality_convo.render(t) == "(8 May 2023) Ana said, Yep, last week!"


def test_ablations_override_known_fields_only() -> None:
    rec = SimpleNamespace(cfg=replace(RecallConfig.from_table(load_settings().recall),
                                      weight_recency=0.3))
    for overrides in quality_convo.ABLATIONS.values():
        quality_convo.ablated(rec, overrides)  # every listed ablation names real fields
    off = quality_convo.ablated(rec, {"weight_recency": 0.0})
    assert off.cfg.weight_recency == 0.0 and rec.cfg.weight_recency == 0.3
    with pytest.raises(ValueError, match="no_such_field"):
        quality_convo.ablated(rec, {"no_such_field": 1})


def _row(cat: str, ranks: dict[str, tuple[int | None, int | None]],
         verdicts: Mapping[str, str | None]) -> dict[str, Any]:
    systems: dict[str, Any] = {name: {"first": first, "all": first, "stale": stale,
                      "verdict": verdicts.get(name), "best_similarity": None, "top": []}
               for name, (first, stale) in ranks.items()}
    return {"id": cat, "category": cat, "text": cat, "evidence": [], "stale": [],
            "systems": systems}


def test_aggregate_picks_the_best_baseline_and_the_margin() -> None:
    names = ["cogd", "cogd, recency off", *quality_convo.BASELINES]

    def ranks(cogd: int | None, bm25: int | None, other: int | None = None,
              stale: int | None = None) -> dict[str, tuple[int | None, int | None]]:
        out = {n: (other, stale) for n in names}
        out["cogd"] = (cogd, stale)
        out["bm25_ctx"] = (bm25, stale)
        return out

    yes = {n: "match" for n in names if not n.startswith("bm25")}
    rows = [_row("single_hop", ranks(1, 3), yes), _row("single_hop", ranks(None, 2), yes),
            _row("adversarial", ranks(2, 1, stale=1), yes),
            _row("updated", ranks(1, 30, stale=4), yes),
            _row("never_said", ranks(None, None), {**yes, "cogd": "no_match"})]
    data = quality_convo.aggregate(rows, names)
    s, cmp_ = data["summary"], data["compare"]
    assert s["cogd"]["categories"]["single_hop"]["R@10"] == 0.5
    assert s["bm25_ctx"]["categories"]["single_hop"]["R@10"] == 1.0
    assert s["cogd"]["categories"]["adversarial"]["new_above_stale"] == 0.0
    assert s["cogd"]["categories"]["updated"]["new_above_stale"] == 1.0
    assert s["cogd"]["no_match"]["tp"] == 1 and s["cogd"]["no_match"]["fp"] == 0
    assert s["bm25"]["no_match"] is None
    assert cmp_["single_hop"]["best"] == "bm25_ctx"
    assert cmp_["single_hop"]["margin_R"] == -0.5
    assert cmp_["answerable"]["cogd_R@10"] == 0.75
    assert cmp_["updated"]["margin_R"] == 1.0  # no baseline found it
    assert data["losses"] == {"single_hop": 1}
    report = quality_convo.markdown({
        "machine": {"cpus": 2, "processor": "x86_64", "python": "3.11"}, "quick": True,
        "seed": 7, "date": "2026-01-01", "wall_s": 1.0, "conversations": 1, "turns": 5,
        "questions": len(rows), "counts": {}, "import": {"inserted": 5, "seconds": 0.1},
        "systems": names,
        "info": {"lexical_weight": 0.0, "weak_match_min_score": 0.45,
                 "strong_match_min_score": 0.51, "rrf_k": 60, "weight_recency": 0.3,
                 "recency_half_life_days": 30.0, "reranker": "disabled", "seconds": {}},
        **data})
    assert "| single_hop | 50 % | BM25, ctx | 100 % | -50 |" in report
    assert "seed 7 (dev / tuning)" in report
