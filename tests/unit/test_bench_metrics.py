"""bench.quality's metrics and BM25, bench.speed's helpers, bench.__main__'s dispatch."""

from __future__ import annotations

import math
from typing import Any

import pytest

from agent.domain import lexical
from bench.__main__ import run_part
from bench.reports.summary import generic_headline, loop_headline
from bench.suites import quality, speed
from bench.suites.quality import (
    BM25,
    all_rank,
    first_rank,
    mrr,
    no_match_scores,
    ranks_above,
    recall_at,
    rrf_fuse,
    tokens,
)

RANKED = [("a",), ("b", "c"), (), ("d",), ("e",)]


def test_first_and_all_rank() -> None:
    assert first_rank(RANKED, ["c"]) == 2
    assert first_rank(RANKED, ["d", "b"]) == 2  # any of the wanted ids
    assert first_rank(RANKED, ["z"]) is None
    assert first_rank([], ["a"]) is None
    assert all_rank(RANKED, ["a", "d"]) == 4  # both seen by rank 4
    assert all_rank(RANKED, ["a", "z"]) is None
    assert all_rank(RANKED, []) is None


def test_recall_at_k_and_mrr() -> None:
    ranks = [1, 3, None, 12]
    assert recall_at(ranks, 1) == 0.25
    assert recall_at(ranks, 5) == 0.5
    assert recall_at(ranks, 20) == 0.75
    assert recall_at([], 5) == 0.0
    assert mrr(ranks) == pytest.approx((1 + 1 / 3 + 0 + 1 / 12) / 4)
    assert mrr([None, None]) == 0.0
    assert mrr([]) == 0.0


def test_new_above_stale() -> None:
    assert ranks_above(1, 2)
    assert not ranks_above(3, 2)
    assert ranks_above(4, None)  # the stale statement not returned at all
    assert not ranks_above(None, 1)
    assert not ranks_above(None, None)


def test_no_match_precision_and_recall() -> None:
    predicted = [True, True, False, True, False]
    actual = [True, False, True, True, False]
    got = no_match_scores(predicted, actual)
    assert (got["tp"], got["fp"], got["fn"]) == (2, 1, 1)
    assert got["precision"] == pytest.approx(2 / 3)
    assert got["recall"] == pytest.approx(2 / 3)
    none = no_match_scores([False, False], [False, False])
    assert none["precision"] is None and none["recall"] is None
    with pytest.raises(ValueError):
        no_match_scores([True], [True, False])


def test_rrf_fuse() -> None:
    fused = rrf_fuse([["x", "y", "z"], ["y", "w"]], k=60)
    assert fused[0] == "y"  # in both lists
    assert set(fused) == {"x", "y", "z", "w"}
    assert fused.index("x") < fused.index("w")  # rank 1 beats rank 2 (ties: id order)


def test_tokens_match_lexical_terms() -> None:
    for text in ("My sister lives in Lisbon, my sister's flat is nice.",
                 "What's my gym locker code? 4512 4512", "我喜欢喝咖啡 and coffee"):
        assert list(dict.fromkeys(tokens(text))) == lexical.terms(text)
    assert tokens("sister sister sisters") == ["sist", "sist", "sist"]


def test_bm25_on_a_toy_corpus() -> None:
    docs = [["cat", "sat", "mat"], ["dog", "sat"], ["cat", "cat", "hat", "bat", "rat"]]
    bm = BM25(docs)
    n, avgdl, k1, b = 3, 10 / 3, 1.2, 0.75

    def idf(df: int) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def term(tf: int, dl: int, df: int) -> float:
        return idf(df) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

    scores = bm.scores(["cat", "sat"])
    assert scores[0] == pytest.approx(term(1, 3, 2) + term(1, 3, 2))
    assert scores[1] == pytest.approx(term(1, 2, 2))
    assert scores[2] == pytest.approx(term(2, 5, 2))
    assert bm.idf("cat") == pytest.approx(idf(2))
    assert bm.idf("unseen") == pytest.approx(idf(0))
    assert [i for i, _ in bm.top(["cat", "sat"], 2)] == [0, 2]
    assert bm.scores(["unseen"]) == {}
    assert bm.scores(["dog", "dog"]) == bm.scores(["dog"])  # query repeats count once
    # rarer terms weigh more; a longer document with the same tf scores less
    assert bm.scores(["dog"])[1] > bm.scores(["sat"])[1]
    long = BM25([["x", "a"], ["x", "b", "c", "d", "e", "f"]]).scores(["x"])
    assert long[0] > long[1]


def _row(cat: str, first: int | None, verdict: str | None, stale: int | None = None,
         both: int | None = None) -> dict[str, Any]:
    per: dict[str, Any] = {"first": first, "all": both, "stale": stale, "verdict": verdict,
           "best_similarity": None, "top": []}
    systems = {name: dict(per) for name in quality.SYSTEMS}
    for name in ("bm25", "ts_rank_cd"):
        systems[name]["verdict"] = None
    return {"id": cat, "category": cat, "text": cat, "evidence": [], "stale": [],
            "systems": systems}


def test_summarise_and_markdown() -> None:
    rows = [_row("planted", 1, "strong_match"), _row("planted", 7, "no_match"),
            _row("updated", 2, "weak_match", stale=1), _row("multi_hop", 1, "strong_match",
                                                              both=12),
            _row("never_said", None, "no_match"), _row("never_said_hard", 3, "weak_match")]
    s = quality.summarise(rows)
    cogd = s["cogd"]
    assert cogd["categories"]["planted"]["R@1"] == 0.5
    assert cogd["categories"]["planted"]["R@10"] == 1.0
    assert cogd["categories"]["updated"]["new_above_stale"] == 0.0
    assert cogd["categories"]["multi_hop"]["R@10_all"] == 0.0
    assert cogd["categories"]["multi_hop"]["R@20_all"] == 1.0
    assert cogd["no_match"]["tp"] == 1 and cogd["no_match"]["fp"] == 1
    assert s["bm25"]["no_match"] is None
    assert s["bm25"]["categories"]["planted"]["no_match_rate"] is None
    data = {"date": "2026-01-01", "quick": True, "turns": 600, "seed": 7,
            "machine": {"cpus": 2, "processor": "x86_64", "python": "3.11"},
            "wall_s": 1.0, "import": {"inserted": 600, "seconds": 1.0}, "questions": 6,
            "info": {"tables": {}, "lexical_weight": 0.0, "weak_match_min_score": 0.45,
                     "strong_match_min_score": 0.51, "rrf_k": 60, "reranker": "disabled",
                     "now_cogd": "t", "now_recency_off": "t", "seconds": {}},
            "summary": s, "losses": quality.losses(rows)}
    text = quality.markdown(data)
    assert "| planted | 2 |" in text and "n/a" in text
    assert quality.headline(data)["bm25"]["no_match_precision"] is None


def test_speed_helpers() -> None:
    assert speed.stats([]) == {"n": 0}
    st = speed.stats([float(x) for x in range(1, 101)])
    assert st["n"] == 100 and st["max"] == 100.0 and 49 <= st["p50"] <= 51
    before = {"replies": 1, "thoughts": None, "llm_calls": {"dmn": {"calls": 2, "seconds": 1.0}}}
    after = {"replies": 3, "thoughts": 5,
             "llm_calls": {"dmn": {"calls": 2, "seconds": 1.0},
                           "system1": {"calls": 1, "seconds": 2.5}}}
    assert speed._delta(before, after) == {
        "replies": 2, "thoughts": None, "llm_calls": {"system1": {"calls": 1, "seconds": 2.5}}}
    assert speed._status(2**22 + 12345) == {}  # no such process


def test_main_records_a_missing_part() -> None:
    got = run_part("no_such_part_xyz", [])
    assert got["status"] == "missing"
    assert generic_headline({"a": 1, "b": "x", "c": True, "d": 2.5}) == {"a": 1, "d": 2.5}
    assert generic_headline([1]) is None
    scale = {"memories": 10000,
             "turn_write": {"total_ms": {"p50": 1, "p95": 2}},
             "recall": {"pipeline_ms": {"p50": 3, "p95": 4}, "bare_ms": {"p50": 1, "p95": 2},
                        "ratio_p50": 3.0, "ratio_p95": 2.0}}
    assert loop_headline({"scales": [scale]})["10,000 memories"]["ratio"] == [3.0, 2.0]


def test_a_quick_run_never_replaces_a_full_result(tmp_path: Any, monkeypatch: Any) -> None:
    import bench.__main__ as runner

    monkeypatch.setattr(runner, "RESULTS", tmp_path)
    (tmp_path / "night-2026-01-01.md").write_text("full")
    kept = runner._full_results("night")
    (tmp_path / "night-2026-01-01.md").write_text("quick")  # what a quick run wrote
    (tmp_path / "night-quick-2026-01-01.json").write_text("{}")
    files = runner._keep_full_results(
        "night", ["night-2026-01-01.md", "night-quick-2026-01-01.json"], kept)
    assert files == ["night-quick-2026-01-01.md", "night-quick-2026-01-01.json"]
    assert (tmp_path / "night-2026-01-01.md").read_text() == "full"
    assert (tmp_path / "night-quick-2026-01-01.md").read_text() == "quick"
