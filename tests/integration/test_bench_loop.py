"""bench.loop end to end at a small scale: every query of the recall pipeline it times
alone, the bare baseline and the index-recall comparison run with the parameters the
daemon's recall gives them (a renamed or added SQL parameter fails here, not minutes into
a 1M run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import common
from bench import loop as L


@pytest.mark.slow
def test_a_small_loop_run_measures_every_phase(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    L.main(["--scales", "400", "--seed", "3", "--ef", "40", "--index-queries", "5",
            "--settle-s", "0", "--tag", "smoke"])
    (path,) = tmp_path.glob("loop-0k-smoke-*.json")
    data = json.loads(path.read_text())
    (scale,) = data["scales"]
    assert scale["memories"] == 400 and scale["tables_during_recall"]["memories"] == 400
    recall = scale["recall"]
    assert recall["queries"] == 200 and sum(recall["verdicts"].values()) == 200
    assert set(recall["sql_ms"]) == set(L.PIPELINE_QUERIES)  # each one ran alone
    assert all(v["n"] > 0 for v in recall["sql_ms"].values())
    # how Postgres planned the pipeline's prepared statements; the memories' list is not one
    plans = recall["plan_cache"]
    assert "recall_dense_day_table (caller)" in plans
    assert not any(k.startswith("recall_dense_memories") for k in plans)
    assert all(v["generic"] + v["custom"] > 0 for v in plans.values())
    assert recall["pipeline_ms"]["p50"] > recall["pipeline_embed_ms"]["p50"] > 0
    assert recall["bare_ms"]["p50"] > recall["bare_sql_ms"]["p50"] > 0
    # the first pass over other questions, timed apart; none of the measured ones warm up
    first = recall["first_pass"]
    assert recall["warmup_queries"] == 0 and first["queries"] == 200
    assert first["pipeline_ms"]["n"] == first["bare_ms"]["n"] == 200
    assert first["bare_ms"]["p50"] > first["bare_sql_ms"]["p50"] > 0
    (row,) = scale["index_recall"]["hnsw"]
    assert row["ef_search"] == 40 and 0.0 <= row["recall_at_10"] <= 1.0
    assert scale["index_recall"]["bm25"]["queries"] > 0
    assert scale["turn_write"]["turns"] > 0 and scale["turn_write"]["total_ms"]["p50"] > 0
    report = path.with_suffix(".md").read_text()
    assert report.startswith("#") and "first pass after the load (200 other questions" in report
