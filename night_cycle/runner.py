"""The night-cycle run: one at a time (advisory lock), eleven checkpointed stages (seed 001
§8.2's nine, seed 000 §9.5-9.6's overnight thinking, and episodes and milestones, seed 000
§4.3, which runs before the cleanup), the morning briefs (the
operator's on disk, each user's own in night_briefs), one NOTIFY at the end.

A run owns the day_table rows created before its start (its cutoff); its "now" is that
start time too, so a resumed run judges ages exactly as the uninterrupted one would have.
Stages 1, 3, 6, 7, 8, 9 and 11 write the hippocampus in one transaction with their
checkpoint; stages 7 and 8 also write the cortex by key (upserts, derived ids) and are
safe to repeat; stage 10 writes each result in a transaction of its own, under an id
derived from what it is about (so a crash mid-stage never writes one twice). When the
cortex refuses a write (read-only, full), the stage's Postgres writes roll back and the
run fails with one line saying where, why and what to do.
`--resume` continues the newest unfinished run after its last checkpoint; a plain run
marks unfinished runs failed and starts afresh, which is also safe: rows already in
blocks are never formed again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from datetime import datetime
from types import ModuleType
from typing import Any

import psycopg

from agent.bus import Channel, Kind, notify
from agent.config import Settings
from agent.cortex.lance import CortexWriteError
from agent.db import locks
from agent.db.connect import app_role, application_name, connect
from agent.db.pool import side_pool
from agent.domain.tables import need
from agent.errors import CogdError, InputError
from agent.heartbeat import Beater
from night_cycle import brief, runs
from night_cycle.artifacts import RunDir
from night_cycle.context import RunContext
from night_cycle.hooks import fault_hook
from night_cycle.progress import NullProgress, Progress
from night_cycle.stages import (
    blocks,
    cleanup,
    clustering,
    compression,
    embedding,
    episodes,
    flux,
    migration,
    salience,
    storage,
    thinking,
)

logger = logging.getLogger(__name__)
LOCK_NAME = "night-cycle"
# in the order they run: stage 11 (episodes, issue 42) was added after the others and
# keeps its number, but reads the turns the cleanup (9) may delete, so it runs before it
STAGES: dict[int, ModuleType] = {
    1: flux, 2: blocks, 3: salience, 4: compression, 5: embedding, 6: storage,
    7: migration, 8: clustering, 11: episodes, 9: cleanup, 10: thinking,
}
# stages 2-6 read the previous stage's artifact; these stand alone on the stores
STANDALONE = (1, 7, 8, 9, 10, 11)


class NightCycleStopped(CogdError):
    """The run stopped early (signal or time limit); `--resume` continues it."""


class NightCycle:
    def __init__(self, settings: Settings, url: str, *, progress: Progress | None = None,
                 stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.url = url
        self.progress = progress or NullProgress()
        self.stop = stop or threading.Event()
        self.clock = clock

    def run(self, *, resume: bool = False, only_stage: int | None = None) -> dict[str, Any]:
        if only_stage is not None and only_stage not in STANDALONE:
            raise InputError(
                f"--stage {only_stage} needs the output of stage {only_stage - 1} of the same "
                f"run; stages that run alone: {', '.join(map(str, STANDALONE))}. Run "
                "`cogd night-cycle` (all stages) or `cogd night-cycle --resume`")
        if only_stage is not None and resume:
            raise InputError("--stage and --resume cannot be combined")
        conn = connect(self.url, app=application_name(self.settings, LOCK_NAME), autocommit=True,
                       role=app_role(self.settings))
        try:
            with locks.singleton_lock(conn, LOCK_NAME, see="`select * from v_night_cycle`"):
                return self._run_locked(conn, resume, only_stage)
        finally:
            if not conn.closed:
                conn.close()  # releases the advisory lock

    def _run_locked(self, conn: psycopg.Connection[Any], resume: bool,
                    only_stage: int | None) -> dict[str, Any]:
        run, resumed = self._open_run(conn, resume, only_stage)
        only_stage = run.checkpoints.get("only_stage")  # a resumed --stage run stays one
        # the row is beaten on connections of the run's pool: a stage may hold a
        # transaction for minutes; v_processes shows the night cycle and its stage
        info: dict[str, Any] = {"run_id": run.run_id}
        pool = side_pool(self.settings, self.url, LOCK_NAME)
        beater = Beater(pool.connection, LOCK_NAME, self.settings.process,
                        lambda: dict(info)).open()
        try:
            return self._execute(conn, run, resumed, only_stage, info)
        except BaseException as exc:
            if not conn.closed and not isinstance(exc, KeyboardInterrupt | SystemExit):
                runs.fail(conn, run.run_id, f"{exc.__class__.__name__}: {exc}")
            elif not conn.closed:
                runs.fail(conn, run.run_id, "interrupted; `cogd night-cycle --resume` "
                          "continues it")
            raise
        finally:
            beater.close()
            pool.close()

    def _open_run(self, conn: psycopg.Connection[Any], resume: bool,
                  only_stage: int | None) -> tuple[runs.Run, bool]:
        pending = runs.unfinished(conn)
        if resume:
            if not pending:
                last = runs.last(conn)
                state = (f"the last run ({last.run_id}) finished" if last
                         else "no night cycle has run yet")
                raise InputError(f"nothing to resume: {state}; run `cogd night-cycle`")
            run = pending[0]
            for older in pending[1:]:
                runs.fail(conn, older.run_id, f"superseded by run {run.run_id} (resumed)")
            return run, True
        run = runs.start(conn, {"only_stage": only_stage, "stages": {}})
        run.checkpoints["cutoff"] = run.started_at.isoformat()
        runs.update_checkpoints(conn, run)
        for old in pending:
            runs.fail(conn, old.run_id, f"not resumed; superseded by run {run.run_id} (its "
                      "rows are taken up by the new run)")
        return run, False

    def _first_stage_inputs(self, run: runs.Run, rundir: RunDir) -> Any:
        """The artifact the first pending stage needs; restart at 1 when it is gone."""
        pending = [n for n in STAGES if not run.done(n)]
        if not pending or pending[0] not in range(2, 7):
            return None
        prev = pending[0] - 1
        data = rundir.read_artifact(prev, run.stages[str(prev)].get("artifact_sha256"))
        if data is None:
            logger.warning("night cycle run %s: stage %s output is missing or altered; "
                           "restarting at stage 1 (stages 1-5 are safe to repeat)",
                           run.run_id, prev)
            for n in range(1, 6):
                run.stages.pop(str(n), None)
        return data

    def _execute(self, conn: psycopg.Connection[Any], run: runs.Run, resumed: bool,
                 only_stage: int | None, info: dict[str, Any]) -> dict[str, Any]:
        cutoff = datetime.fromisoformat(run.checkpoints["cutoff"])
        rundir = RunDir.for_run(self.settings.data_dir, run.run_id, run.started_at)
        run.checkpoints["dir"] = str(rundir.path)
        ctx = RunContext(self.settings, conn, run, cutoff, cutoff, self.progress)
        limit_s = float(need(ctx.cfg, "max_run_hours")) * 3600
        started = self.clock()
        todo = [only_stage] if only_stage is not None else list(STAGES)
        data = None if only_stage is not None else self._first_stage_inputs(run, rundir)
        for number in todo:
            if run.done(number):
                continue
            if self.stop.is_set():
                raise NightCycleStopped(f"night cycle run {run.run_id} stopped by a signal "
                                        f"before stage {number}; `--resume` continues it")
            if self.clock() - started > limit_s:
                raise NightCycleStopped(
                    f"night cycle run {run.run_id} stopped before stage {number}: it ran past "
                    "max_run_hours; `cogd night-cycle --resume` continues it")
            module = STAGES[number]
            info["stage"] = number
            t0 = self.clock()
            try:
                with conn.transaction() if module.TRANSACTIONAL else nullcontext():
                    out = module.run(ctx, data)
                    sha = (rundir.write_artifact(number, out.artifact)
                           if out.artifact is not None and number < 6 else None)
                    summary = dict(out.summary, seconds=round(self.clock() - t0, 3))
                    if sha:
                        summary["artifact_sha256"] = sha
                    runs.checkpoint(conn, run, number, summary)
            except CortexWriteError as exc:
                rolled_back = " (the stage's Postgres writes were rolled back)"
                raise exc.within(
                    f"night cycle run {run.run_id}, stage {number} ({module.NAME})",
                    "run `cogd night-cycle --resume`"
                    + (rolled_back if module.TRANSACTIONAL else "")) from exc
            data = out.artifact
            fault_hook(number, "after")
        self.progress.close()
        result = {"run_id": run.run_id, "status": "done", "resumed": resumed,
                  "only_stage": only_stage, "cutoff": cutoff.isoformat(),
                  "stages": {k: run.stages[k] for k in sorted(run.stages, key=int)}}
        result["brief"] = brief.write(ctx, rundir, result)  # the operator's, on disk
        with conn.transaction():
            result["user_briefs"] = brief.write_for_users(ctx, result)
            runs.finish(conn, run, result)
            notify(conn, Channel.NIGHT_CYCLE, Kind.RUN_DONE, run.run_id)  # once per run
        rundir.drop_work()
        return result
