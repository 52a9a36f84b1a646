"""bench.warm end to end on a small database laid out as bench.loop keeps one: each
condition restarts the embedded server, runs that many warm-up searches and bench.loop's
recall phase; a directory that is not such a database is refused with a clear message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench import common, reports
from bench.suites import loop as L
from bench.suites import warm as W


def assert_numbers(stat: dict[str, float], n: int) -> None:
    """A timing of `n` queries, its order statistics in order."""
    assert stat["n"] == n, stat
    assert 0 <= stat["p50"] <= stat["p95"] <= stat["max"] and 0 <= stat["mean"] <= stat["max"]


@pytest.mark.slow
def test_bench_warm_restarts_warms_and_measures(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.db.connect import connect
    from agent.providers import factory
    from agent.services.records.sessions import ensure_user

    monkeypatch.setattr(reports, "RESULTS", tmp_path / "results")
    with common.scratch_database(keep=True) as (settings, url):
        data_dir = Path(settings.data_dir)
        embedder = factory.build_universal_embedder(settings)
        with connect(url, autocommit=True) as conn:
            owners = [str(ensure_user(conn, "bench")), str(ensure_user(conn, "bench-other-0"))]
            L.load_memories(conn, embedder, L.memory_sentences(300, 3), 0, None, [], 300,
                            owners)
    try:
        W.main([str(data_dir), "--searches", "0,20", "--rounds", "1", "--seed", "3",
                "--settle-s", "0", "--tag", "smoke"])
        (path,) = (tmp_path / "results").glob("warm-smoke-*.json")
        data = json.loads(path.read_text())
        assert [(r["searches"], r["warm_searches_run"]) for r in data["runs"]] == [(0, 0),
                                                                                 (20, 20)]
        report = path.with_suffix(".md").read_text()
        for r in data["runs"]:
            assert r["memories"] == 300
            assert r["first_pass"]["queries"] == 200
            # timed and reported, not compared (no wall-clock assertion in a test)
            assert_numbers(r["pipeline_ms"], 200)
            for key in ("pipeline_ms", "bare_ms", "bare_sql_ms"):
                assert_numbers(r["first_pass"][key], 200)
            fp = r["first_pass"]
            assert (f"{fp['pipeline_ms']['p50']} / {fp['pipeline_ms']['p95']} / "
                    f"{fp['pipeline_ms']['max']} | {fp['bare_ms']['p50']} / "
                    f"{fp['bare_ms']['p95']} | {r['pipeline_ms']['p50']} / "
                    f"{r['pipeline_ms']['p95']} | ") in report
        assert "| 1 | 20 (" in report
    finally:
        from agent.db.embedded import stop_server

        stop_server(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


def test_bench_warm_refuses_a_directory_that_bench_loop_did_not_keep(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no pg/ inside"):
        W.run(tmp_path, [0], 1, 11, 0.0, 0)
