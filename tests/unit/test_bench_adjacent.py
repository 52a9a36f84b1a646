"""bench.suites.adjacent's scoring: a hit through an attached turn counts only in the modes
that attach it, the same rule for every system."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.suites.adjacent import main, score

NEIGHBOURS = {"a:1": {1: "a:2"}, "a:2": {-1: "a:1", 1: "a:3"}, "a:3": {-1: "a:2"}}


def test_an_attached_evidence_turn_counts_in_the_modes_that_attach_it() -> None:
    captured = [
        # the evidence a:2 is the turn after the first item (next, both), and before the 2nd
        {"id": "q1", "category": "fact", "evidence": ["a:2"],
         "got": {"cogd": [("a:1",), ("x:9",)], "bm25": [("x:9",), ("a:3",)]}},
        # found on its own at rank 1 by both systems: a hit whatever the mode
        {"id": "q2", "category": "date", "evidence": ["a:3"],
         "got": {"cogd": [("a:3",)], "bm25": [("a:3",)]}},
    ]
    out = score(captured, NEIGHBOURS, ["bm25", "cogd"])
    assert out["alone"]["cogd"]["all"] == {"n": 2, "R@1": 0.5, "R@10": 0.5}
    assert out["next"]["cogd"]["all"] == {"n": 2, "R@1": 1.0, "R@10": 1.0}
    assert out["next"]["bm25"]["fact"] == {"n": 1, "R@1": 0.0, "R@10": 0.0}
    assert out["both"]["bm25"]["fact"] == {"n": 1, "R@1": 0.0, "R@10": 1.0}  # a:3's before
    assert out["both"]["bm25"]["date"]["R@1"] == 1.0


def test_a_directory_without_the_data_is_a_clear_error(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--data", str(tmp_path)])
    assert exit_.value.code == 2
    assert "holds no Chat_*.json file" in capsys.readouterr().err
