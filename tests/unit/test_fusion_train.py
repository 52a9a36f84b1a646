"""bench.fusion_train's joint fit (issue 39 item 2): each corpus's weight in the loss; and
clear errors for missing input files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.domain import fusion
from bench.suites import fusion_train
from bench.suites.fusion_train import fit, weigh


def _question(corpus: str, n: int, marks: int, decoy: int) -> dict[str, object]:
    """Four candidates; the evidence is the one with feature `marks` set, and one other
    candidate has feature `decoy` set."""
    X = np.zeros((4, len(fusion.FEATURES)))
    X[0, marks] = 1.0
    X[1, decoy] = 1.0
    X[:, 2] = np.arange(4) * 0.01 + n * 1e-4  # some spread, so no feature is constant
    return {"qid": f"{corpus}{n}", "corpus": corpus, "X": X,
            "y": np.array([1.0, 0.0, 0.0, 0.0]), "w": 1.0}


def _corpora() -> list[dict[str, object]]:
    # corpus a (10 questions): feature 0 marks the evidence, feature 1 a decoy;
    # corpus b (40 questions): the other way round
    return ([_question("a", n, 0, 1) for n in range(10)]
            + [_question("b", n, 1, 0) for n in range(40)])


def test_equal_weighting_gives_each_corpus_the_same_total_weight() -> None:
    qs = _corpora()
    weigh(qs, "equal")
    total = {c: sum(q["w"] for q in qs if q["corpus"] == c) for c in "ab"}  # type: ignore[misc]
    assert abs(total["a"] - total["b"]) < 1e-9
    weigh(qs, "questions")
    assert {q["w"] for q in qs} == {1.0}


def test_the_larger_corpus_no_longer_dominates_under_equal_weighting() -> None:
    mask = np.ones(len(fusion.FEATURES), dtype=bool)
    qs = _corpora()
    weigh(qs, "questions")
    w_q, _ = fit(qs, "listwise", 1.0, mask)
    weigh(qs, "equal")
    w_e, _ = fit(qs, "listwise", 1.0, mask)
    assert w_q[1] > w_q[0]  # one weight a question: b's 40 questions win
    assert abs(w_e[0] - w_e[1]) < 1e-3 * abs(w_q[1] - w_q[0])  # equal: a tie


def test_a_missing_pools_file_is_a_clear_error(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        fusion_train.main(["--pools", str(tmp_path / "none.jsonl"), "--cv"])
    assert exit_.value.code == 2
    assert "none.jsonl: no such file" in capsys.readouterr().err


def test_recall_pools_without_the_realtalk_data_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.suites import recall_pools

    with pytest.raises(SystemExit) as exit_:
        recall_pools.main(["--data", str(tmp_path), "--split", "dev"])
    assert exit_.value.code == 2
    assert "holds no Chat_*.json file" in capsys.readouterr().err


@pytest.mark.parametrize("suite", ["recall_pools", "quality"])
def test_swapped_speakers_on_a_synthetic_corpus_is_a_clear_error(
        suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    import importlib

    main = importlib.import_module(f"bench.suites.{suite}").main
    with pytest.raises(SystemExit) as exit_:
        main(["--corpus", "synth", "--swap-speakers"])
    assert exit_.value.code == 2
    assert "--swap-speakers needs --corpus realtalk" in capsys.readouterr().err


def test_pool_weights_need_one_number_per_pools_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.suites import fusion_train

    pools = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for p in pools:
        p.write_text("")
    for given in ("1", "1,x", "1,-0.5"):
        with pytest.raises(SystemExit) as exit_:
            fusion_train.main(["--pools", *map(str, pools), "--pool-weights", given])
        assert exit_.value.code == 2
        assert "--pool-weights needs 2 numbers >= 0" in capsys.readouterr().err
