"""bench.loop end to end at a small scale: every query of the recall pipeline it times
alone, the bare baseline and the index-recall comparison run with the parameters the
daemon's recall gives them (a renamed or added SQL parameter fails here, not minutes into
a 1M run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import reports
from bench.suites import loop as L


def assert_measured(stat: dict[str, float], n: int, report: str) -> None:
    """A timing of `n` queries (its order statistics in order), in the report's table."""
    assert stat["n"] == n, stat
    assert 0 <= stat["p50"] <= stat["p95"] <= stat["max"] and 0 <= stat["mean"] <= stat["max"]
    assert f" | {n} | {stat['p50']} | {stat['p95']} | {stat['mean']} | {stat['max']} |" in report


@pytest.mark.slow
def test_a_small_loop_run_measures_every_phase(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reports, "RESULTS", tmp_path)
    L.main(["--scales", "400", "--seed", "3", "--ef", "40", "--index-queries", "5",
            "--settle-s", "0", "--tag", "smoke"])
    (path,) = tmp_path.glob("loop-0k-smoke-*.json")
    data = json.loads(path.read_text())
    (scale,) = data["scales"]
    assert scale["memories"] == 400 and scale["tables_during_recall"]["memories"] == 400
    recall = scale["recall"]
    assert recall["queries"] == 200 and sum(recall["verdicts"].values()) == 200
    # each one ran alone, and the adjacent turns' query on written turns (they have neighbours)
    assert set(recall["sql_ms"]) == {*L.PIPELINE_QUERIES, "recall_adjacent"}
    assert all(v["n"] > 0 for v in recall["sql_ms"].values())
    assert recall["sql_rows_mean"]["recall_adjacent"] > 0
    assert "SQL alone: recall_adjacent (10 written turns" in path.with_suffix(".md").read_text()
    # how Postgres planned the pipeline's prepared statements; the memories' list is not one
    plans = recall["plan_cache"]
    assert "recall_dense_day_table (caller)" in plans
    assert not any(k.startswith("recall_dense_memories") for k in plans)
    assert all(v["generic"] + v["custom"] > 0 for v in plans.values())
    report = path.with_suffix(".md").read_text()
    # each component is timed on every query and reported (which is faster is the
    # report's to show, not a test's: no wall-clock comparison here)
    for key in ("pipeline_ms", "pipeline_embed_ms", "bare_ms", "bare_sql_ms"):
        assert_measured(recall[key], 200, report)
    # the first pass over other questions, timed apart; none of the measured ones warm up
    first = recall["first_pass"]
    assert recall["warmup_queries"] == 0 and first["queries"] == 200
    for key in ("pipeline_ms", "bare_ms", "bare_sql_ms"):
        assert_measured(first[key], 200, report)
    (row,) = scale["index_recall"]["hnsw"]
    assert row["ef_search"] == 40 and 0.0 <= row["recall_at_10"] <= 1.0
    assert scale["index_recall"]["bm25"]["queries"] > 0
    assert scale["turn_write"]["turns"] > 0 and scale["turn_write"]["total_ms"]["p50"] > 0
    assert report.startswith("#") and "first pass after the load (200 other questions" in report
