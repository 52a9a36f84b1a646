"""`cogd import` then `cogd night-cycle` as cron runs them (issue #6), a run killed with
SIGKILL and resumed, and `cogd recall --level N`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.cortex.lance import ARCHIVE, BLOCKS, CLUSTERS, LanceCortex
from agent.db.locks import advisory_key
from tests.acceptance.test_cli import assert_clean_error, run
from tests.conftest import cogd_env, create_db, drop_db
from tests.integration.test_night_cycle import HANDLES, NOW, RETENTION_DAYS, corpus_jsonl

TABLES = ("holographic_blocks", "block_relationships", "day_table", "preoccupation_centroids",
          "night_cycle_runs")


def env_for(url: str, data: Path, **extra: str) -> dict[str, str]:
    return cogd_env(COGD_DATABASE_URL=url, COGD_DATA_DIR=str(data),
                    COGD_LLM__ROLES__NIGHT_CYCLE="heuristic", **extra)


@pytest.fixture(scope="module")
def imported(pg_admin_url: str, template_db: str,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """600 turns over 12 days through `cogd import`; users set to normal, meso, elder."""
    name, url = create_db(pg_admin_url, template_db)
    tmp = tmp_path_factory.mktemp("night-cli")
    jsonl = tmp / "turns.jsonl"
    jsonl.write_text(corpus_jsonl(600, 12, NOW, seed=7))
    proc = run("import", str(jsonl), "--json", env=env_for(url, tmp / "data"), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["inserted"] == 600
    with psycopg.connect(url, autocommit=True) as conn:
        for handle, tier in HANDLES.values():
            conn.execute("UPDATE users SET tier = %s WHERE handle = %s", (tier, handle))
    yield name
    drop_db(pg_admin_url, name)


def snapshot(url: str, data: Path) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        out: dict[str, Any] = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
                               for t in TABLES}
        out["blocks"] = sorted(r[0] for r in conn.execute(
            "SELECT block_id::text || coalesce(parent_metablock_id::text, '') "
            "|| (migrated_at IS NOT NULL)::text FROM holographic_blocks"))
        out["day_table"] = sorted(r[0] for r in conn.execute(
            "SELECT d.entry_id::text || coalesce(f.flux_state, '') FROM day_table d "
            "LEFT JOIN day_flux f USING (entry_id)"))
    cortex = LanceCortex(str(data / "cortex"), 384, 384)
    out["cortex"] = cortex.counts()
    out["cortex_blocks"] = sorted(r["block_id"] for r in cortex.rows(BLOCKS, columns=["block_id"]))
    out["clusters"] = sorted((r["cluster_id"], r["level"], r["parent_cluster_id"] or "")
                             for r in cortex.rows(CLUSTERS))
    return out


def test_a_night_after_import_and_a_killed_night_resumed_end_the_same(
    pg_admin_url: str, imported: str, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    urls = {}
    for key in ("whole", "killed"):
        name, urls[key] = create_db(pg_admin_url, imported)
        request.addfinalizer(lambda n=name: drop_db(pg_admin_url, n))
    whole_data, killed_data = tmp_path / "whole", tmp_path / "killed"

    done = run("night-cycle", "--json", env=env_for(urls["whole"], whole_data), timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "done" and not result["resumed"]
    whole = snapshot(urls["whole"], whole_data)
    assert whole["holographic_blocks"] > 0 and whole["cortex"]["cortex_blocks"] > 0
    levels = {level for _, level, _ in whole["clusters"]}
    assert {1, 2} <= levels  # seed 001 §5.4 HDBSCAN(min_cluster_size=5) on ~50 blocks
    ids = {cid for cid, _, _ in whole["clusters"]}
    assert any(parent for _, level, parent in whole["clusters"] if level == 1)
    assert all(parent in ids for _, _, parent in whole["clusters"] if parent)
    with psycopg.connect(urls["whole"]) as conn:
        ages = conn.execute(
            "SELECT u.tier, max(extract(epoch FROM now() - d.created_at) / 86400) "
            "FROM day_table d JOIN users u USING (user_id) GROUP BY 1").fetchall()
    for tier, oldest in ages:  # cleanup kept only what each tier's retention allows
        assert oldest < RETENTION_DAYS[tier], (tier, oldest)
    assert {"meso", "elder"} <= {t for t, _ in ages}  # ... and kept what it allows
    assert set(result["stages"]["9"]["deleted_by_tier"]) == {"normal", "meso", "elder"}
    assert Path(result["brief"]).is_file()

    # killed twice (mid stage 1, inside its transaction; mid stage 7, between the cortex
    # write and the hippocampus update), resumed each time
    env = env_for(urls["killed"], killed_data, COGD_TEST_HOOK="kill:night-1-mid")
    assert run("night-cycle", env=env, timeout=600).returncode == -9
    with psycopg.connect(urls["killed"]) as conn:
        assert conn.execute("SELECT status, stage FROM night_cycle_runs").fetchall() == [
            ("running", 0)]
        assert conn.execute("SELECT count(*) FROM day_flux"
                            ).fetchone() == (0,)  # the stage's transaction died with it
    env["COGD_TEST_HOOK"] = "kill:night-7-mid"
    assert run("night-cycle", "--resume", env=env, timeout=600).returncode == -9
    with psycopg.connect(urls["killed"]) as conn:
        assert conn.execute("SELECT status, stage FROM night_cycle_runs").fetchall() == [
            ("running", 6)]
        assert conn.execute("SELECT count(*) FROM holographic_blocks WHERE migrated_at "
                            "IS NOT NULL").fetchone() == (0,)
    assert LanceCortex(str(killed_data / "cortex"), 384, 384).count(BLOCKS) > 0
    resumed = run("night-cycle", "--resume", "--json", env=env_for(urls["killed"], killed_data),
                  timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    assert again["resumed"] and again["run_id"] == 1
    assert snapshot(urls["killed"], killed_data) == whole

    # recall by RAPTOR level on the finished night
    env = env_for(urls["whole"], whole_data)
    for level in (0, 1):
        proc = run("recall", "what should I pack for a trip?", "--level", str(level), "--json",
                   env=env)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["level"] == level and out["items"]
        assert all(i["level"] == level for i in out["items"])
        if level == 1:
            assert all(i["parent"] in ids for i in out["items"] if i["parent"])
        if level == 0:
            assert {e["block_id"] for e in out["reconsolidation"]} == {
                i["id"] for i in out["items"]}
    plain = run("recall", "what should I pack for a trip?", "--level", "2", env=env)
    assert plain.returncode == 0 and plain.stdout.startswith("level 2: "), plain.stderr

    # --user scopes level 0 to that user's blocks and blocks of no user; --no-log leaves
    # the blocks' vector history (reconsolidation) as it was
    cortex = LanceCortex(str(whole_data / "cortex"), 384, 384)
    cols = ["block_id", "user_id", "vector_history"]
    rows = [*cortex.rows(BLOCKS, columns=cols),
            *(cortex.rows(ARCHIVE, columns=cols) if cortex.exists(ARCHIVE) else [])]
    owner = {r["block_id"]: r["user_id"] for r in rows}
    with psycopg.connect(urls["whole"]) as conn:
        nora = str(conn.execute("SELECT user_id FROM users WHERE handle = 'nora'"
                                ).fetchone()[0])  # type: ignore[index]
    ask = ("recall", "what should I pack for a trip?", "--level", "0", "-k", "50", "--json")
    everyone = json.loads(run(*ask, "--no-log", env=env).stdout)["items"]
    assert any(owner[i["id"]] not in (None, nora) for i in everyone)  # the scope matters
    proc = run(*ask, "--user", "nora", "--no-log", env=env)
    assert proc.returncode == 0, proc.stderr
    scoped = json.loads(proc.stdout)
    assert scoped["items"] and "reconsolidation" not in scoped
    assert all(owner[i["id"]] in (None, nora) for i in scoped["items"])
    after = LanceCortex(str(whole_data / "cortex"), 384, 384)
    assert {r["block_id"]: r["vector_history"]
            for r in [*after.rows(BLOCKS, columns=cols),
                      *(after.rows(ARCHIVE, columns=cols) if after.exists(ARCHIVE) else [])]
            } == {r["block_id"]: r["vector_history"] for r in rows}


def test_night_cycle_errors_are_one_clear_line(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path / "data")
    assert_clean_error(run("night-cycle", "--stage", "4", env=env),
                       "cogd: error: --stage 4 needs the output of stage 3")
    assert_clean_error(run("night-cycle", "--resume", env=env), "nothing to resume")
    assert_clean_error(run("recall", "anything", "--level", "1", env=env), "no cortex at")
    assert_clean_error(run("recall", "anything", "--level", "1", "--user", "nora", env=env),
                       "--level 1 with --user")
    for extra in (["--verify"], ["--as-of", "2026-01-01T00:00:00Z"]):
        assert_clean_error(run("recall", "anything", "--level", "0", *extra, env=env),
                           "--verify and --as-of apply to the recall pipeline")
    with psycopg.connect(db_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (advisory_key("night-cycle"),))
        assert_clean_error(run("night-cycle", env=env), "only one may run at a time")
