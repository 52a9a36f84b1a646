"""The night cycle (issue #6) on a real Postgres and a real LanceDB directory."""

from __future__ import annotations

import io
import json
import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.bus import Channel
from agent.config import Settings, load_settings
from agent.cortex.lance import BLOCKS, CLUSTERS, LanceCortex
from agent.db.locks import advisory_key
from agent.errors import AlreadyRunning, InputError
from agent.runtime import Runtime
from agent.services.access.importer import Importer, ImportReport, read_lines
from agent.services.records.sessions import ensure_user
from bench.data.synth import generate
from night_cycle.progress import NullProgress
from night_cycle.runner import NightCycle, NightCycleStopped
from tests.conftest import _with_db, create_db, drop_db

NOW = datetime.now(UTC).replace(microsecond=0)
HANDLES = {0: ("nora", "normal"), 1: ("mia", "meso"), 2: ("eli", "elder")}
RETENTION_DAYS = {"normal": 1, "meso": 3, "elder": 7}


def corpus_jsonl(n_turns: int, days: int, now: datetime, seed: int = 11) -> str:
    """bench.synth's conversation over `days` days before `now`, its sessions spread over
    three users (normal, meso, elder). Turns fall between 2 h and 18 h after `now`'s clock
    time each day, so no turn lies near now - k days: every age test is far from its line."""
    start = now - timedelta(days=days) + timedelta(hours=2)
    corpus = generate(n_turns, seed, start.isoformat(), days, n_facts=20)
    lines = []
    for t in corpus.turns:
        row = json.loads(t.as_json())
        if row["role"] == "user":
            row["speaker"] = HANDLES[int(row["session"].rsplit("-s", 1)[1]) % 3][0]
        lines.append(json.dumps(row))
    return "\n".join(lines) + "\n"


def import_jsonl(url: str, settings: Settings, jsonl: str) -> None:
    writer = Runtime(settings).turn_writer()
    with psycopg.connect(url, autocommit=True) as conn:
        for handle, tier in HANDLES.values():
            ensure_user(conn, handle, tier)
        report = ImportReport()
        Importer(conn, writer, "nora").run(read_lines(io.StringIO(jsonl), "nora", report, False),
                                           report)
    assert report.inserted == jsonl.count("\n") and not report.errors


def night_settings(url: str, data_dir: Path, **night: Any) -> Settings:
    settings = load_settings(data_dir=data_dir, database_url=url)
    settings.llm.roles["night_cycle"] = "heuristic"  # the extractive fallback, for speed
    # ~18 cortex blocks here: clusters of 3 (the seed's 5 is checked on 600 turns in
    # tests/acceptance/test_night_cli.py)
    settings.night_cycle["hdbscan_min_cluster_size"] = 3
    settings.night_cycle.update(night)
    return settings


@pytest.fixture(scope="module")
def corpus_db(pg_admin_url: str, template_db: str,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database holding 240 turns over 8 days of three users, imported once."""
    name, url = create_db(pg_admin_url, template_db)
    settings = night_settings(url, tmp_path_factory.mktemp("corpus"))
    import_jsonl(url, settings, corpus_jsonl(240, 8, NOW))
    yield name
    drop_db(pg_admin_url, name)


@pytest.fixture(scope="module")
def ran(pg_admin_url: str, corpus_db: str,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, dict[str, Any]]]:
    """The corpus after one uninterrupted night: (database name, data dir, run summary)."""
    name, url = create_db(pg_admin_url, corpus_db)
    data = tmp_path_factory.mktemp("ran") / "data"
    result = NightCycle(night_settings(url, data), url).run()
    yield name, data, result
    drop_db(pg_admin_url, name)


def clone(pg_admin_url: str, template: str, request: pytest.FixtureRequest) -> str:
    name, url = create_db(pg_admin_url, template)
    request.addfinalizer(lambda: drop_db(pg_admin_url, name))
    return url


def cortex_of(data: Path) -> LanceCortex:
    return LanceCortex(str(data / "cortex"), 384, 384)


def counts(url: str, data: Path) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        out: dict[str, Any] = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
                               for t in ("holographic_blocks", "block_relationships",
                                         "day_table", "preoccupation_centroids")}
        out["block_ids"] = sorted(r[0] for r in conn.execute(
            "SELECT block_id::text FROM holographic_blocks"))
    cortex = cortex_of(data)
    out.update(cortex.counts())
    out["cluster_ids"] = sorted(r["cluster_id"] for r in cortex.rows(CLUSTERS, columns=[
        "cluster_id"]))
    return out


def test_a_night_turns_the_day_table_into_blocks_cortex_clusters_and_cleans_by_tier(
    pg_admin_url: str, corpus_db: str, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    url = clone(pg_admin_url, corpus_db, request)
    settings = night_settings(url, tmp_path / "data")
    with psycopg.connect(url, autocommit=True) as listener:
        listener.execute(f'LISTEN "{Channel.NIGHT_CYCLE.value}"')
        before = dict(listener.execute(
            "SELECT u.tier, count(*) FROM day_table d JOIN users u USING (user_id) "
            "GROUP BY 1").fetchall())
        result = NightCycle(settings, url, progress=NullProgress()).run()
        notes = list(listener.notifies(timeout=1.0, stop_after=5))
    assert [json.loads(n.payload) for n in notes] == [{"type": "run_done",
                                                        "id": str(result["run_id"])}]
    stages = result["stages"]
    assert sorted(stages, key=int) == [str(i) for i in range(1, 12)]
    # stage 11 (issue 42): every block of the run is in one episode, none twice
    assert stages["11"]["episodes"] >= 1 and stages["11"]["blocks"] >= stages["11"]["episodes"]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM holographic_blocks b WHERE NOT EXISTS "
                            "(SELECT 1 FROM episode_blocks e WHERE e.block_id = b.block_id) "
                            "AND b.flux_metrics->>'kind' IS DISTINCT FROM 'metablock'"
                            ).fetchone() == (0,)
    assert stages["1"]["turns"] == 240 and stages["1"]["signals"] == {
        "embedding_novelty_proxy": 240}
    assert stages["4"]["summarizer"] == "extractive fallback (heuristic)"
    with psycopg.connect(url) as conn:
        blocks = conn.execute(
            "SELECT block_id::text, session_id::text, flux_metrics, prose, arc_start_time, "
            "arc_end_time, migrated_at FROM holographic_blocks "
            "WHERE flux_metrics->>'kind' <> 'metablock'").fetchall()
        entries = [e for b in blocks for e in b[2]["entry_ids"]]
        assert len(entries) == len(set(entries)) == 240  # every turn in exactly one block
        assert len({(b[1], b[2]["cycle"]) for b in blocks}) == stages["1"]["stretches"]
        for b in blocks:  # a block never crosses a cycle boundary (03:00 UTC)
            first, last = (t.astimezone(UTC) - timedelta(hours=3) for t in (b[4], b[5]))
            assert first.date().isoformat() == last.date().isoformat() == b[2]["cycle"]
        dead = [z for b in blocks for z in b[3]["dead_zone_summaries"]]
        assert dead and all(z["summary"].startswith("[heuristic fallback] ") for z in dead)
        assert any(b[3]["live_zones"] for b in blocks)
        rows = conn.execute(
            "SELECT u.tier, extract(epoch FROM now() - d.created_at) / 86400, "
            "EXISTS (SELECT 1 FROM holographic_blocks b "
            "        WHERE b.flux_metrics->'entry_ids' ? d.entry_id::text) "
            "FROM day_table d JOIN users u USING (user_id)").fetchall()
        migrated = conn.execute("SELECT count(*) FROM holographic_blocks "
                                "WHERE migrated_at IS NOT NULL").fetchone()
    # cleanup: nothing covered is older than its tier's retention; younger rows stay
    for tier, age_days, covered in rows:
        assert covered and age_days < RETENTION_DAYS[tier], (tier, age_days)
    deleted = stages["9"]["deleted_by_tier"]
    assert set(deleted) == {"normal", "meso", "elder"}
    left = {t: sum(1 for r in rows if r[0] == t) for t in RETENTION_DAYS}
    assert left["elder"] > left["meso"] > left["normal"] >= 0
    assert {t: deleted[t] + left[t] for t in deleted} == before
    # the cortex: migrated blocks, and a RAPTOR tree of at least two levels
    cortex = cortex_of(tmp_path / "data")
    assert cortex.count(BLOCKS) == migrated[0] == stages["7"]["migrated"] > 0  # type: ignore[index]
    clusters = cortex.rows(CLUSTERS)
    ids = {c["cluster_id"]: c for c in clusters}
    levels = {c["level"] for c in clusters}
    assert {1, 2} <= levels
    for c in clusters:
        if c["parent_cluster_id"] is not None:
            parent = ids[c["parent_cluster_id"]]
            assert parent["level"] == c["level"] + 1
            assert c["cluster_id"] in json.loads(parent["member_ids"])
    assert any(c["parent_cluster_id"] for c in clusters if c["level"] == 1)
    leaves = {r["block_id"] for r in cortex.rows(BLOCKS, columns=["block_id"])}
    for c in clusters:
        if c["level"] == 1:
            assert set(json.loads(c["member_ids"])) <= leaves
    brief = Path(result["brief"]).read_text()
    assert "Morning brief" in brief and "extractive fallback (heuristic)" in brief


def test_uncovered_rows_are_never_deleted_whatever_their_age(
    pg_admin_url: str, ran: tuple[str, Path, dict[str, Any]], tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    url = clone(pg_admin_url, ran[0], request)
    with psycopg.connect(url, autocommit=True) as conn:
        sid = conn.execute("SELECT session_id FROM sessions LIMIT 1").fetchone()[0]  # type: ignore[index]
        conn.execute("INSERT INTO day_table (session_id, role, content, created_at) "
                     "VALUES (%s, 'user', 'a very old turn no block covers', "
                     "now() - interval '90 days')", (sid,))
    result = NightCycle(night_settings(url, tmp_path / "data"), url).run(only_stage=9)
    assert result["stages"]["9"]["deleted"] == 0
    assert result["stages"]["9"]["kept_not_in_any_block"] == 1


def test_a_second_night_forms_blocks_only_for_new_turns(
    pg_admin_url: str, ran: tuple[str, Path, dict[str, Any]], tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    url = clone(pg_admin_url, ran[0], request)
    data = tmp_path / "data"
    shutil.copytree(ran[1], data)
    first = counts(url, data)
    settings = night_settings(url, data)
    again = NightCycle(settings, url).run()
    assert again["stages"]["1"]["turns"] == 0 and again["stages"]["6"]["blocks_written"] == 0
    assert counts(url, data) == first  # a re-run changes nothing
    new = "".join(
        json.dumps({"session": "later", "speaker": "eli", "role": role,
                    "content": text, "timestamp": (NOW - timedelta(hours=5 - i / 10)).isoformat(),
                    "external_id": f"later-{i}"}) + "\n"
        for i, (role, text) in enumerate([
            ("user", "I want to plan a trip to Kyoto in April."),
            ("assistant", "April is cherry blossom season; book early."),
            ("user", "Which temples should I see first?"),
            ("assistant", "Kiyomizu-dera and Fushimi Inari are good starts.")]))
    import_jsonl(url, settings, new)
    third = NightCycle(settings, url).run()
    assert third["stages"]["1"]["turns"] == 4
    after = counts(url, data)
    assert after["holographic_blocks"] == first["holographic_blocks"] + third["stages"]["6"][
        "blocks_written"] + third["stages"]["6"]["metablocks"]
    assert set(first["block_ids"]) < set(after["block_ids"])


def test_a_stopped_run_resumes_to_the_same_rows_even_without_its_artifacts(
    pg_admin_url: str, corpus_db: str, ran: tuple[str, Path, dict[str, Any]], tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    class StopAt(NullProgress):
        def __init__(self, stop: threading.Event, at: int) -> None:
            self.stop_event, self.at = stop, at

        def stage(self, number: int, name: str, total: int | None) -> None:
            if number == self.at:
                self.stop_event.set()  # like SIGTERM: finish this stage, then stop

    url = clone(pg_admin_url, corpus_db, request)
    data = tmp_path / "data"
    settings = night_settings(url, data)
    stop = threading.Event()
    with pytest.raises(NightCycleStopped, match="--resume"):
        NightCycle(settings, url, progress=StopAt(stop, 4), stop=stop).run()
    with psycopg.connect(url) as conn:
        status, stage, checkpoints = conn.execute(
            "SELECT status, stage, checkpoints FROM night_cycle_runs").fetchone()  # type: ignore[misc]
        assert (status, stage) == ("failed", 4) and sorted(checkpoints["stages"]) == list("1234")
        assert conn.execute("SELECT count(*) FROM holographic_blocks").fetchone() == (0,)
    shutil.rmtree(Path(checkpoints["dir"]) / "work")  # artifacts lost: restart at stage 1
    resumed = NightCycle(settings, url).run(resume=True)
    assert resumed["resumed"] and resumed["run_id"] == 1
    assert counts(url, data) == counts(_with_db(pg_admin_url, ran[0]), ran[1])


def test_one_run_at_a_time_and_clear_errors(settings: Settings, db_url: str) -> None:
    settings.llm.roles["night_cycle"] = "heuristic"
    with pytest.raises(InputError, match="needs the output of stage 2"):
        NightCycle(settings, db_url).run(only_stage=3)
    with pytest.raises(InputError, match="nothing to resume: no night cycle has run yet"):
        NightCycle(settings, db_url).run(resume=True)
    with psycopg.connect(db_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (advisory_key("night-cycle"),))
        with pytest.raises(AlreadyRunning, match="only one may run at a time"):
            NightCycle(settings, db_url).run()
    empty = NightCycle(settings, db_url).run()  # an empty day table is a quiet night
    assert empty["stages"]["2"]["blocks"] == 0 and empty["stages"]["9"]["deleted"] == 0


def _session(name: str, user: str, start: datetime, turns: list[tuple[str, str]]) -> str:
    return "".join(json.dumps({
        "session": name, "speaker": user if role == "user" else "cogd", "role": role,
        "content": text, "timestamp": (start + timedelta(minutes=2 * i)).isoformat(),
        "external_id": f"{name}-{i}"}) + "\n" for i, (role, text) in enumerate(turns))


PASTA = [
    ("user", "What pasta shape works best with a creamy sauce?"),
    ("assistant", "Tagliatelle or fettuccine hold creamy sauces well."),
    ("user", "How long should I boil fresh tagliatelle?"),
    ("assistant", "Fresh tagliatelle cooks in about two to three minutes."),
    ("user", "Should I salt the pasta water a lot?"),
    ("assistant", "Salt the pasta water generously."),
    ("user", "Can I finish the pasta in the sauce pan?"),
    ("assistant", "Yes, toss the pasta in the sauce with a splash of pasta water."),
    ("user", "Why do black holes evaporate through Hawking radiation?"),
    ("assistant", "Quantum effects at the event horizon make black holes radiate and lose mass."),
]
BLACK_HOLES = [
    ("user", "I keep thinking about Hawking radiation: how do black holes lose mass?"),
    ("assistant", "Near the event horizon black holes radiate energy, so they slowly lose mass "
                  "[memory:{cited}]."),
    ("user", "Do small black holes evaporate faster than big black holes?"),
    ("assistant", "Yes, small black holes are hotter and evaporate faster."),
    ("user", "Could a black hole evaporate completely?"),
    ("assistant", "In theory a black hole radiates until it evaporates completely."),
]


def test_a_session_that_picks_up_an_open_arc_is_linked_into_a_metablock(
    settings: Settings, db_url: str,
) -> None:
    settings.llm.roles["night_cycle"] = "heuristic"
    settings.night_cycle["bootstrap_preoccupations"] = ["How do I cook better pasta at home?"]
    start = NOW - timedelta(hours=3)
    cycle = datetime(start.year, start.month, start.day, 3, tzinfo=UTC) - timedelta(days=1)
    garden = [("user", "My tomato plants have yellow leaves."),
              ("assistant", "Yellow leaves often mean too much water."),
              ("user", "Should I add compost?"), ("assistant", "A little compost helps.")]
    import_jsonl(db_url, settings, _session("garden", "ada", cycle - timedelta(hours=20), garden))
    NightCycle(settings, db_url).run()
    with psycopg.connect(db_url) as conn:
        cited = conn.execute("SELECT block_id::text FROM holographic_blocks LIMIT 1").fetchone()[0]  # type: ignore[index]
        labels = [r[0] for r in conn.execute("SELECT label FROM preoccupation_centroids")]
    assert labels == ["How do I cook better pasta at home? (config)"]
    later = [(r, t.format(cited=cited)) for r, t in BLACK_HOLES]
    import_jsonl(db_url, settings, _session("pasta", "ada", cycle + timedelta(hours=2), PASTA)
                 + _session("holes", "ada", cycle + timedelta(hours=4), later))
    result = NightCycle(settings, db_url).run()
    assert result["stages"]["2"]["continuations"] == 1 and result["stages"]["6"]["metablocks"] == 1
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT b.block_id::text, s.external_id, b.session_continuity_flag, "
            "b.continues_from::text, b.continued_by::text, b.parent_metablock_id::text, "
            "b.citations, b.flux_metrics->>'kind' FROM holographic_blocks b "
            "JOIN sessions s USING (session_id) WHERE b.run_id = %s ORDER BY b.arc_start_time",
            (result["run_id"],)).fetchall()
        edges = conn.execute("SELECT relationship_type, source_block_id::text, "
                             "target_block_id::text FROM block_relationships").fetchall()
    meta = [r for r in rows if r[7] == "metablock"]
    pasta_last = [r for r in rows if r[1] == "pasta" and r[7] != "metablock"][-1]
    holes_first = next(r for r in rows if r[1] == "holes")
    assert pasta_last[2] is True  # the pasta session ended mid-arc (seed 001 §4.2)
    assert pasta_last[4] == holes_first[0] and holes_first[3] == pasta_last[0]
    assert len(meta) == 1 and pasta_last[5] == holes_first[5] == meta[0][0]
    assert ("continues", holes_first[0], pasta_last[0]) in edges
    assert cited in holes_first[6]  # the memory tag became a citation and an edge
    assert ("cites", holes_first[0], cited) in edges
