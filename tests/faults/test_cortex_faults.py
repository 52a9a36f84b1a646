"""The LanceDB cortex read-only or full during `cogd night-cycle` (issue #8).

Real faults on a real filesystem, each scenario made two ways:

- `unprivileged` (runs everywhere): read-only is a cortex directory without write
  permission (mode 0555, files 0444), the night run without CAP_DAC_OVERRIDE when the
  tests run as root (chmod stops nothing otherwise); full is a file-size limit
  (RLIMIT_FSIZE, set on the night process when it reaches stage 7, so that only the
  cortex writes meet it);
- `mount` (where mounting is permitted: root with CAP_SYS_ADMIN): the cortex directory
  is a tmpfs mounted read-only (or remounted read-only after a good night), or a small
  tmpfs filled up with a filler file. Where mounting is denied these skip, and say so
  (allow-listed in tests/skip-allowlist.txt: the unprivileged variants run instead).

Each scenario runs the real CLI and checks:

- exit 2 with one clear line on stderr (where the cortex is, what is wrong, what to do),
  no traceback;
- Postgres holds nothing half-written: the failed stage's writes are rolled back (no
  block is marked migrated unless the cortex holds it), the earlier stages' checkpoints
  stay (they are resumable by design), day-table cleanup (stage 9) never ran, and the
  run row says `failed` with the same reason;
- once the fault is gone (writable again, filler deleted, no limit), `cogd night-cycle
  --resume` finishes the run and ends with exactly the rows of an uninterrupted night.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import resource
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import psycopg
import pytest

from agent.cortex.lance import ANTECHAMBER, ARCHIVE, BLOCKS, CLUSTERS, LanceCortex
from tests.acceptance.test_cli import COGD, assert_clean_error, run
from tests.conftest import cogd_env, create_db, drop_db, wait_for
from tests.faults.conftest import Reliability
from tests.integration.test_night_cycle import HANDLES, NOW, corpus_jsonl

# several full nights through the CLI per test
pytestmark = [pytest.mark.timeout(1200)]
# how each fault is made (see the module's docstring)
HOWS = ["unprivileged", "mount"]

# the Postgres tables the night cycle writes (stage 1: day_table flux columns; 3 and 8:
# centroids; 6: blocks and relationships; 7: migrated_at; 9: day_table deletes)
PG_TABLES = ("day_table", "holographic_blocks", "block_relationships",
             "preoccupation_centroids", "night_cycle_runs")
# four turns of a normal-tier user three days old: on the second night their block is past
# the user's retention, so stage 7 must write it to the cortex, then stage 9 may delete them
LATER = "".join(
    json.dumps({"session": "later", "speaker": "nora", "role": role, "content": text,
                "timestamp": (NOW - timedelta(days=3, hours=-i)).isoformat(),
                "external_id": f"later-{i}"}) + "\n"
    for i, (role, text) in enumerate([
        ("user", "I want to plan a trip to Kyoto in April."),
        ("assistant", "April is cherry blossom season; book early."),
        ("user", "Which temples should I see first?"),
        ("assistant", "Kiyomizu-dera and Fushimi Inari are good starts.")]))


# --- mounts ------------------------------------------------------------------------------
def _sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60)


@functools.cache
def _mount_denied(probe: str) -> str | None:
    """Why a tmpfs cannot be mounted here (None: it can); tried once per session."""
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("mount") is None:
        return "no `mount` command"
    Path(probe).mkdir(parents=True, exist_ok=True)
    got = _sh("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe)
    if got.returncode != 0:
        return got.stderr.strip() or f"mount exited {got.returncode}"
    _sh("umount", probe)
    return None


@contextmanager
def tmpfs(path: Path, options: str) -> Iterator[Path]:
    """A tmpfs at `path` for the duration; skips the test when mounting is not permitted."""
    path.mkdir(parents=True, exist_ok=True)
    denied = _mount_denied(str(path.parent / "mount-probe"))
    if denied:
        pytest.skip(f"mounting a tmpfs for the cortex needs CAP_SYS_ADMIN ({denied}); the "
                    "unprivileged variant of this scenario runs instead")
    got = _sh("mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path))
    assert got.returncode == 0, got.stderr
    try:
        yield path
    finally:
        if _sh("umount", str(path)).returncode != 0:
            _sh("umount", "-l", str(path))


def remount(path: Path, mode: str) -> None:
    got = _sh("mount", "-o", f"remount,{mode}", str(path))
    assert got.returncode == 0, got.stderr


def fill(path: Path) -> Path:
    """Fill the filesystem at `path` to the last byte with a filler file."""
    filler = path / "filler"
    with filler.open("wb", buffering=0) as f, suppress(OSError):
        while f.write(b"\0" * 4096):
            pass
    assert shutil.disk_usage(path).free == 0
    return filler


# --- the same faults without privileges ----------------------------------------------------
def set_writable(path: Path, writable: bool) -> None:
    """The cortex directory and everything in it with write permission, or without."""
    for entry in [path, *path.rglob("*")]:
        mode = stat.S_IMODE(entry.stat().st_mode)
        entry.chmod(mode | stat.S_IWUSR if writable else mode & ~0o222)


@functools.cache
def _unprivileged_prefix() -> tuple[str, ...]:
    """What runs a command so that file permissions bind it: as root, setpriv without
    CAP_DAC_OVERRIDE in its bounding set (CAP_DAC_READ_SEARCH stays: the test server's
    socket directory belongs to its own OS user)."""
    if os.geteuid() != 0:
        return ()
    prefix = ("setpriv", "--bounding-set=-dac_override", "--")
    if shutil.which("setpriv") is None:
        pytest.fail("as root, the unprivileged cortex faults need setpriv (util-linux) to "
                    "drop CAP_DAC_OVERRIDE")
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"cogd-dac-probe-{os.getpid()}"
    probe.mkdir(mode=0o555, exist_ok=True)
    try:
        got = subprocess.run([*prefix, "sh", "-c", f"touch {probe}/x"], capture_output=True,
                             text=True, timeout=60)
    finally:
        with suppress(OSError):
            (probe / "x").unlink()
        probe.rmdir()
    assert got.returncode != 0 and "Permission denied" in got.stderr, (
        "without CAP_DAC_OVERRIDE a write to a 0555 directory still succeeded", got)
    return prefix


@contextmanager
def unwritable(path: Path) -> Iterator[Path]:
    set_writable(path, False)
    try:
        yield path
    finally:
        set_writable(path, True)


def night_under_file_limit(url: str, data: Path, cortex: Path, limit: int,
                           tmp: Path) -> subprocess.CompletedProcess[str]:
    """`cogd night-cycle` whose file-size limit (RLIMIT_FSIZE) drops to `limit` bytes when
    it reaches stage 7: the artifacts of stages 1-5 are written without it, every cortex
    write meets it (a write past it fails with EFBIG; Python ignores SIGXFSZ)."""
    flag = tmp / "at-stage-7"
    env = {**env_for(url, data, cortex), "COGD_TEST_HOOK": f"pause:night-6-after:{flag}"}
    proc = subprocess.Popen([COGD, "night-cycle"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: flag.exists() or proc.poll() is not None, 900, every=0.05)
        assert flag.exists(), proc.communicate()[1][-3000:]
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (limit, limit))
        flag.unlink()
        out, err = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)  # reaped, its pipes closed
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# --- the CLI and the state it leaves --------------------------------------------------------
def env_for(url: str, data: Path, cortex: Path | None = None) -> dict[str, str]:
    extra = {} if cortex is None else {"COGD_CORTEX__URI": str(cortex)}
    # ~20 cortex blocks: clusters of 3, as in tests/integration/test_night_cycle.py
    return cogd_env(COGD_DATABASE_URL=url, COGD_DATA_DIR=str(data),
                    COGD_LLM__ROLES__NIGHT_CYCLE="heuristic",
                    COGD_NIGHT_CYCLE__HDBSCAN_MIN_CLUSTER_SIZE="3", **extra)


def import_turns(url: str, data: Path, jsonl: str, tmp: Path) -> None:
    src = tmp / f"turns-{abs(hash(jsonl))}.jsonl"
    src.write_text(jsonl)
    proc = run("import", str(src), "--json", env=env_for(url, data), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["inserted"] == jsonl.count("\n")


def night(url: str, data: Path, cortex: Path | None = None, *args: str,
          unprivileged: bool = False) -> Any:
    if not unprivileged:
        return run("night-cycle", *args, env=env_for(url, data, cortex), timeout=900)
    return subprocess.run([*_unprivileged_prefix(), COGD, "night-cycle", *args],
                          env=env_for(url, data, cortex), capture_output=True, text=True,
                          timeout=900)


def pg_state(url: str) -> dict[str, Any]:
    """Every row the night cycle writes, by identity (runs are compared apart)."""
    with psycopg.connect(url) as conn:
        def rows(sql: str) -> list[Any]:
            return sorted(tuple(r) for r in conn.execute(sql).fetchall())

        return {
            "day_table": rows("SELECT d.entry_id::text, coalesce(f.flux_state, ''), "
                              "f.surprise IS NOT NULL FROM day_table d "
                              "LEFT JOIN day_flux f USING (entry_id)"),
            "blocks": rows("SELECT block_id::text, coalesce(parent_metablock_id::text, ''), "
                           "migrated_at IS NOT NULL FROM holographic_blocks"),
            "relationships": rows("SELECT source_block_id::text, target_block_id::text, "
                                  "relationship_type FROM block_relationships"),
            "centroids": rows("SELECT centroid_id::text, kind, status "
                              "FROM preoccupation_centroids"),
        }


def pg_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                for t in PG_TABLES}


def cortex_state(path: Path) -> dict[str, Any]:
    cortex = LanceCortex(str(path), 384, 384)
    return {
        "counts": cortex.counts(),
        "blocks": sorted(r["block_id"] for r in cortex.rows(BLOCKS, columns=["block_id"])),
        "archive": sorted(r["block_id"] for r in cortex.rows(ARCHIVE, columns=["block_id"])),
        "clusters": sorted((r["cluster_id"], r["level"], r["parent_cluster_id"] or "")
                           for r in cortex.rows(CLUSTERS, columns=[
                               "cluster_id", "level", "parent_cluster_id"])),
        "antechamber": sorted(r["entry_id"] for r in cortex.rows(ANTECHAMBER,
                                                                 columns=["entry_id"])),
    }


def runs(url: str) -> list[tuple[int, str, int, list[str], str | None]]:
    with psycopg.connect(url) as conn:
        got = conn.execute("SELECT run_id, status, stage, checkpoints, error "
                           "FROM night_cycle_runs ORDER BY run_id").fetchall()
    return [(r[0], r[1], r[2], sorted(r[3].get("stages", {}), key=int), r[4]) for r in got]


# --- fixtures ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus(pg_admin_url: str, template_db: str,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """240 turns over 8 days of a normal, a meso and an elder user, through `cogd import`."""
    name, url = create_db(pg_admin_url, template_db)
    tmp = tmp_path_factory.mktemp("cortex-faults")
    import_turns(url, tmp / "data", corpus_jsonl(240, 8, NOW), tmp)
    with psycopg.connect(url, autocommit=True) as conn:
        for handle, tier in HANDLES.values():
            conn.execute("UPDATE users SET tier = %s WHERE handle = %s", (tier, handle))
    yield name
    drop_db(pg_admin_url, name)


@pytest.fixture(scope="module")
def uninterrupted(pg_admin_url: str, corpus: str,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """What faultless nights give. "first": the corpus after one night; "second": that,
    plus LATER, after a second night. "after_first_db" / "first_cortex": the database
    after the first night with LATER imported, and that night's cortex directory (turns get
    random ids on import, so a scenario that needs LATER clones this database)."""
    name, url = create_db(pg_admin_url, corpus)
    tmp = tmp_path_factory.mktemp("uninterrupted")
    data = tmp / "first"  # the cortex at its default place, DATA_DIR/cortex
    done = night(url, data, None, "--json")
    assert done.returncode == 0, done.stderr
    first = {**pg_state(url), "cortex": cortex_state(data / "cortex"),
             "migrated": json.loads(done.stdout)["stages"]["7"]["migrated"]}
    assert first["cortex"]["counts"][BLOCKS] > 0 and first["cortex"]["clusters"]
    import_turns(url, data, LATER, tmp)
    second_name, second_url = create_db(pg_admin_url, name)
    shutil.copytree(data / "cortex", tmp / "second" / "cortex")
    done = night(second_url, tmp / "second", None, "--json")
    assert done.returncode == 0, done.stderr
    second = {**pg_state(second_url), "cortex": cortex_state(tmp / "second" / "cortex"),
              "migrated": json.loads(done.stdout)["stages"]["7"]["migrated"]}
    assert second["migrated"] >= 1  # LATER's block is due: stage 7 has to write the cortex
    assert len(second["day_table"]) < len(first["day_table"]) + 4  # stage 9 deleted LATER
    yield {"first": first, "second": second, "after_first_db": name,
           "first_cortex": data / "cortex"}
    drop_db(pg_admin_url, second_name)
    drop_db(pg_admin_url, name)


# --- the checks every scenario shares ----------------------------------------------------
STAGE_NAMES = {7: "cortex migration", 8: "RAPTOR clustering"}
REMEDIES = {errno.EROFS: "Make it writable (remount its filesystem read-write)",
            errno.ENOSPC: "Free space on its filesystem",
            errno.EACCES: "Give the user cogd runs as write access to it",
            errno.EFBIG: "Raise the file-size limit cogd runs under (ulimit -f)"}
# the error each way of making the fault gives
READ_ONLY = {"mount": ("read-only file system", errno.EROFS),
             "unprivileged": ("permission denied", errno.EACCES)}
FULL = {"mount": ("no space left on device", errno.ENOSPC),
        "unprivileged": ("file too large", errno.EFBIG)}
MADE = {("read-only", "mount"): "read-only (tmpfs mounted read-only)",
        ("read-only", "unprivileged"): "read-only (directory without write permission)",
        ("full", "mount"): "full (tmpfs filled)",
        ("full", "unprivileged"): "full (RLIMIT_FSIZE)"}


def assert_failed_cleanly(proc: Any, url: str, cortex_dir: Path, before: dict[str, Any],
                          cortex_before: dict[str, Any] | None, cause: str, errno: int,
                          stage: int = 7) -> str:
    """The failed night: one clear line, exit 2, nothing half-written. `cortex_before` is
    the cortex as the failed run found it (None: not read, the fault is in the way).
    Returns the line."""
    assert_clean_error(proc, "cogd: error: night cycle run",
                       f"stage {stage} ({STAGE_NAMES[stage]})",
                       f"LanceDB cortex at {cortex_dir}: {cause} (errno {errno}). "
                       f"{REMEDIES[errno]}, then run `cogd night-cycle --resume`")
    line = str(proc.stderr).strip()
    after = pg_state(url)
    if stage == 7:  # stages 1-6 ran and stay done: this night's blocks are there
        assert {b for b, _, _ in after["blocks"]} > {b for b, _, _ in before["blocks"]}
    # the failed stage rolled back: a block is marked migrated only if it was before ...
    migrated = {b for b, _, m in after["blocks"] if m}
    assert migrated == {b for b, _, m in before["blocks"] if m}
    # ... and every block Postgres calls migrated is in the cortex (or its archive), which
    # the failed run left as it found it
    if cortex_before is not None:
        state = cortex_state(cortex_dir)
        assert migrated <= set(state["blocks"]) | set(state["archive"])
        assert state == cortex_before
    # stage 8 never finished: no satellite (mitosis) or fused centroid appeared
    made = {(c, k) for c, k, _ in after["centroids"]} - {(c, k) for c, k, _ in before["centroids"]}
    assert not [c for c, k in made if k in ("satellite", "fused")]
    # stage 9 never ran: every turn is still in the day table
    assert {e for e, _, _ in after["day_table"]} == {e for e, _, _ in before["day_table"]}
    # the earlier stages keep their checkpoints (resumable by design), the run says why
    last = runs(url)[-1]
    assert last[1:4] == ("failed", stage - 1, [str(i) for i in range(1, stage)]), last
    assert last[4] is not None and f"{cause} (errno {errno})" in last[4]
    assert str(cortex_dir) in last[4]
    return line


def assert_resumed_to(proc: Any, url: str, cortex_dir: Path, expected: dict[str, Any],
                      run_id: int) -> None:
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["resumed"] and result["run_id"] == run_id
    assert sorted(result["stages"], key=int) == [str(i) for i in range(1, 12)]
    got = {**pg_state(url), "cortex": cortex_state(cortex_dir),
           "migrated": result["stages"]["7"]["migrated"]}
    assert got == expected
    assert runs(url)[-1][1:3] == ("done", 11)  # max stage number (11 runs before 9)


# --- scenarios ---------------------------------------------------------------------------
@contextmanager
def cortex_dir(tmp_path: Path, how: str, options: str) -> Iterator[Path]:
    """The cortex directory of a scenario: a tmpfs (`mount`), or a plain directory."""
    if how == "mount":
        with tmpfs(tmp_path / "cortex", options) as cortex:
            yield cortex
    else:
        _unprivileged_prefix()  # fail before the nights where it cannot be had
        (tmp_path / "cortex").mkdir()
        yield tmp_path / "cortex"


@contextmanager
def read_only(cortex: Path, how: str) -> Iterator[None]:
    """The cortex read-only for the duration (remounted, or its write permission taken)."""
    if how == "mount":
        remount(cortex, "ro")
        try:
            yield
        finally:
            remount(cortex, "rw")
    else:
        with unwritable(cortex):
            yield


@pytest.mark.parametrize("how", HOWS)
def test_cortex_read_only_before_the_first_night(
    pg_admin_url: str, corpus: str, uninterrupted: dict[str, Any], tmp_path: Path,
    request: pytest.FixtureRequest, reliability: Reliability, how: str,
) -> None:
    name, url = create_db(pg_admin_url, corpus)
    request.addfinalizer(lambda: drop_db(pg_admin_url, name))
    data = tmp_path / "data"
    plain = how == "unprivileged"
    with cortex_dir(tmp_path, how, "size=64m") as cortex:
        with read_only(cortex, how):
            before, counts, cortex_before = pg_state(url), pg_counts(url), cortex_state(cortex)
            failed = night(url, data, cortex, unprivileged=plain)
            line = assert_failed_cleanly(failed, url, cortex, before, cortex_before,
                                         *READ_ONLY[how])
            assert list(cortex.iterdir()) == []  # the read-only cortex really held nothing
            counts_after = pg_counts(url)
        resumed = night(url, data, cortex, "--resume", "--json", unprivileged=plain)
        assert_resumed_to(resumed, url, cortex, uninterrupted["first"], run_id=1)
    reliability.add("cortex_fault", fault=MADE["read-only", how], scenario="read-only "
                    "before the first night", exit_code=failed.returncode, error=line,
                    pg_rows_before=sum(counts.values()), pg_rows_after=sum(counts_after.values()),
                    resumed_ok=True)


@pytest.mark.parametrize("how", HOWS)
def test_cortex_turned_read_only_after_a_good_night(
    pg_admin_url: str, uninterrupted: dict[str, Any], tmp_path: Path,
    request: pytest.FixtureRequest, reliability: Reliability, how: str,
) -> None:
    """After a good night (its database and cortex) and new turns, the cortex turns
    read-only; the second night cannot migrate the new block."""
    name, url = create_db(pg_admin_url, uninterrupted["after_first_db"])
    request.addfinalizer(lambda: drop_db(pg_admin_url, name))
    data = tmp_path / "data"
    plain = how == "unprivileged"
    with cortex_dir(tmp_path, how, "size=64m") as cortex:
        shutil.copytree(uninterrupted["first_cortex"], cortex, dirs_exist_ok=True)
        assert cortex_state(cortex) == uninterrupted["first"]["cortex"]
        with read_only(cortex, how):
            before, counts, cortex_before = pg_state(url), pg_counts(url), cortex_state(cortex)
            failed = night(url, data, cortex, unprivileged=plain)
            line = assert_failed_cleanly(failed, url, cortex, before, cortex_before,
                                         *READ_ONLY[how])
            counts_after = pg_counts(url)
        resumed = night(url, data, cortex, "--resume", "--json", unprivileged=plain)
        assert_resumed_to(resumed, url, cortex, uninterrupted["second"], run_id=2)
    reliability.add("cortex_fault", fault=MADE["read-only", how], scenario="turned "
                    "read-only after a good night; new turns", exit_code=failed.returncode,
                    error=line, pg_rows_before=sum(counts.values()),
                    pg_rows_after=sum(counts_after.values()), resumed_ok=True)


@pytest.mark.parametrize("how", HOWS)
def test_cortex_turned_read_only_between_migration_and_clustering(
    pg_admin_url: str, corpus: str, uninterrupted: dict[str, Any], tmp_path: Path,
    request: pytest.FixtureRequest, reliability: Reliability, how: str,
) -> None:
    """Stage 7 done (the process is SIGKILLed right after its checkpoint), the cortex turns
    read-only, and `--resume` runs into it in stage 8."""
    name, url = create_db(pg_admin_url, corpus)
    request.addfinalizer(lambda: drop_db(pg_admin_url, name))
    data = tmp_path / "data"
    plain = how == "unprivileged"
    with cortex_dir(tmp_path, how, "size=64m") as cortex:
        env = env_for(url, data, cortex)
        env["COGD_TEST_HOOK"] = "kill:night-7-after"
        assert run("night-cycle", env=env, timeout=900).returncode == -9
        assert runs(url)[-1][1:4] == ("running", 7, [str(i) for i in range(1, 8)])
        with read_only(cortex, how):
            before, counts, cortex_before = pg_state(url), pg_counts(url), cortex_state(cortex)
            assert cortex_before["counts"][BLOCKS] > 0 and not cortex_before["clusters"]
            failed = night(url, data, cortex, "--resume", unprivileged=plain)
            line = assert_failed_cleanly(failed, url, cortex, before, cortex_before,
                                         *READ_ONLY[how], stage=8)
            counts_after = pg_counts(url)
        resumed = night(url, data, cortex, "--resume", "--json", unprivileged=plain)
        assert_resumed_to(resumed, url, cortex, uninterrupted["first"], run_id=1)
    reliability.add("cortex_fault", fault=MADE["read-only", how], scenario="turned "
                    "read-only between stage 7 and stage 8", exit_code=failed.returncode,
                    error=line, pg_rows_before=sum(counts.values()),
                    pg_rows_after=sum(counts_after.values()), resumed_ok=True)


@pytest.mark.parametrize("how", HOWS)
def test_cortex_full_after_the_new_block_is_written(
    pg_admin_url: str, uninterrupted: dict[str, Any], tmp_path: Path,
    request: pytest.FixtureRequest, reliability: Reliability, how: str,
) -> None:
    """After a good night and new turns, the cortex has room for the new block but not for
    the compaction stage 7 runs after writing it (LanceDB rewrites the table's fragments
    into one): 96 KiB left on its filesystem, or a 96 KiB file-size limit. The cortex is
    ahead of Postgres, never behind: it holds the new block, and no block is marked
    migrated, since the stage's Postgres writes rolled back."""
    name, url = create_db(pg_admin_url, uninterrupted["after_first_db"])
    request.addfinalizer(lambda: drop_db(pg_admin_url, name))
    data = tmp_path / "data"
    first_blocks = set(uninterrupted["first"]["cortex"]["blocks"])
    with cortex_dir(tmp_path, how, "size=8m") as cortex:
        shutil.copytree(uninterrupted["first_cortex"], cortex, dirs_exist_ok=True)
        before, counts = pg_state(url), pg_counts(url)
        if how == "mount":
            filler = fill(cortex)
            with filler.open("r+b") as f:  # the new block needs ~30 KiB, compaction ~200 KiB
                f.truncate(filler.stat().st_size - 96 * 1024)
            failed = night(url, data, cortex)
            filler.unlink()
        else:
            failed = night_under_file_limit(url, data, cortex, 96 * 1024, tmp_path)
        line = assert_failed_cleanly(failed, url, cortex, before, None, *FULL[how])
        counts_after = pg_counts(url)
        ahead = cortex_state(cortex)
        new = set(ahead["blocks"]) - first_blocks
        assert new, "the new block was not written: the fault hit before it, not after"
        assert first_blocks <= set(ahead["blocks"])
        assert not new & {b for b, _, m in pg_state(url)["blocks"] if m}
        resumed = night(url, data, cortex, "--resume", "--json")
        assert_resumed_to(resumed, url, cortex, uninterrupted["second"], run_id=2)
    reliability.add("cortex_fault", fault=MADE["full", how], scenario="cortex full after "
                    "the new block was written (compaction)", exit_code=failed.returncode,
                    error=line, pg_rows_before=sum(counts.values()),
                    pg_rows_after=sum(counts_after.values()), resumed_ok=True)


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("free_kib", [0, 48], ids=["no-space-at-all", "room-for-a-table"])
def test_cortex_filesystem_full(
    pg_admin_url: str, corpus: str, uninterrupted: dict[str, Any], tmp_path: Path,
    request: pytest.FixtureRequest, reliability: Reliability, free_kib: int, how: str,
) -> None:
    """0 KiB free (or a 0-byte file-size limit): creating the first table fails (LanceDB
    leaves an empty table directory behind). 48 KiB: the empty table is created, the
    blocks' data file does not fit."""
    name, url = create_db(pg_admin_url, corpus)
    request.addfinalizer(lambda: drop_db(pg_admin_url, name))
    data = tmp_path / "data"
    with cortex_dir(tmp_path, how, "size=4m") as cortex:
        before, counts = pg_state(url), pg_counts(url)
        if how == "mount":
            filler = fill(cortex)
            if free_kib:
                with filler.open("r+b") as f:
                    f.truncate(filler.stat().st_size - free_kib * 1024)
            failed = night(url, data, cortex)
            filler.unlink()
        else:
            failed = night_under_file_limit(url, data, cortex, free_kib * 1024, tmp_path)
        line = assert_failed_cleanly(failed, url, cortex, before, None, *FULL[how])
        counts_after = pg_counts(url)
        raw = lancedb.connect(str(cortex))  # a look only (LanceCortex repairs what it finds)
        assert raw.list_tables().tables == [BLOCKS]
        if free_kib:  # the empty table was committed; its first rows were not
            assert raw.open_table(BLOCKS).count_rows() == 0
        else:  # the table's directory is there, with no committed version
            with pytest.raises(ValueError, match="not found"):
                raw.open_table(BLOCKS)
        resumed = night(url, data, cortex, "--resume", "--json")
        assert_resumed_to(resumed, url, cortex, uninterrupted["first"], run_id=1)
    reliability.add("cortex_fault", fault=MADE["full", how], scenario=f"cortex full, "
                    f"{free_kib} KiB free", exit_code=failed.returncode, error=line,
                    pg_rows_before=sum(counts.values()), pg_rows_after=sum(counts_after.values()),
                    resumed_ok=True)
