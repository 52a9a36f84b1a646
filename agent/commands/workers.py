"""Worker processes: what `cogd up` supervises and compose services run."""

from __future__ import annotations

import click

from agent.commands.context import settings_from


def _worker(kind: str) -> object:
    from agent.db.connect import preflight, resolve
    from agent.workers.base import Worker

    cls: type[Worker]
    if kind == "loop":
        from agent.workers.loop import LoopWorker

        cls = LoopWorker
    elif kind == "consolidate":
        from agent.workers.consolidate import ConsolidationWorker

        cls = ConsolidationWorker
    else:
        from agent.workers.idle import IdleWorker

        cls = IdleWorker
    settings = settings_from()
    target = resolve(settings)
    preflight(target.url)
    return cls(settings, target.app_url)


def _run_worker(kind: str) -> int:
    from agent.workers.base import Worker

    worker = _worker(kind)
    assert isinstance(worker, Worker)
    worker.install_signal_handlers()
    return worker.run()


def _run_once(kind: str, as_json: bool) -> int:
    import json

    from agent.workers.base import Worker

    worker = _worker(kind)
    assert isinstance(worker, Worker)
    result = worker.run_once()
    if as_json:
        click.echo(json.dumps(result, default=str))
    else:
        _print_once(kind, result)
    return 0


def _print_once(kind: str, result: dict[str, object]) -> None:
    if kind == "consolidate":
        ops = result.get("operations") or {}
        assert isinstance(ops, dict)
        if not ops:
            click.echo("consolidation pass: nothing to do (no new input)")
        for name, detail in ops.items():
            out = detail.get("outputs", {}) if isinstance(detail, dict) else {}
            summary = ", ".join(f"{k}: {len(v) if isinstance(v, list | dict) else v}"
                                for k, v in out.items())
            click.echo(f"{name:<15} {summary}")
        return
    proactive = result.get("proactive") or []
    surfaced = result.get("surfaced") or {}
    gut = result.get("gut") or {}
    assert isinstance(proactive, list) and isinstance(surfaced, dict) and isinstance(gut, dict)
    click.echo(f"proactive recall: {len(proactive)} thought(s)")
    for t in proactive:
        click.echo(f"  [{t['theme']}] {t['content']}")
    click.echo(f"surfaced: {surfaced.get('kind') or surfaced.get('reason') or 'nothing'}"
               + (f" ({surfaced.get('theme')})" if surfaced.get("theme") else ""))
    click.echo(f"gut signal: |delta| = {gut.get('delta_norm')}")


@click.command()
def loop() -> int:
    """Run the cognitive loop worker: answers inbox messages, writes the day table."""
    return _run_worker("loop")


@click.command()
@click.option("--once", is_flag=True, help="Run one pass now, print what it did, and exit.")
@click.option("--json", "as_json", is_flag=True, help="With --once: the pass as JSON.")
def consolidate(once: bool, as_json: bool) -> int:
    """Run the consolidation worker: drain the scratch buffer, merge related memories
    into insights (sources kept, superseded), decay, strengthen, flag contradictions,
    promote goals and propose values, carry intentions, tune the gate. Every operation
    is logged in consolidation_log; a pass with no new input changes nothing.
    """
    return _run_once("consolidate", as_json) if once else _run_worker("consolidate")


@click.command()
@click.option("--once", is_flag=True, help="Run one DMN tick now, print it, and exit.")
@click.option("--json", "as_json", is_flag=True, help="With --once: the tick as JSON.")
def idle(once: bool, as_json: bool) -> int:
    """Run the idle default-mode network: proactive recall into `thoughts` (shown in the
    loop's next prompt), stochastic surfacing (self-prompts, creative impulses), and the
    gut signal, on a heartbeat that slows as the agent stays idle.
    """
    return _run_once("idle", as_json) if once else _run_worker("idle")


@click.command("night-cycle")
@click.option("--stage", type=click.IntRange(1, 11), envvar="COGD_NIGHT_CYCLE_STAGE",
              show_envvar=True,
              help="Run only this stage, as a run of its own (1, 7, 8, 9, 10 or 11: the "
              "stages that need no earlier stage's output).")
@click.option("--resume", is_flag=True, envvar="COGD_NIGHT_CYCLE_RESUME", show_envvar=True,
              help="Continue the newest interrupted run after its last checkpoint.")
@click.option("--json", "as_json", is_flag=True, envvar="COGD_JSON", show_envvar=True,
              help="Print the run's summary as JSON.")
def night_cycle(stage: int | None, resume: bool, as_json: bool) -> int:
    """Run the night cycle once and exit (cron: 0 3 * * * cogd night-cycle).

    Eleven stages, in this order: seed 001 §8.2's flux detection, block formation,
    salience, compression, dual embedding, holographic_blocks, migration to the LanceDB
    cortex and RAPTOR clustering with the antechamber (1-8); episodes and milestones
    (11, seed 000 §4.3: the timeline); day-table cleanup by user tier (9); then
    overnight thinking (10, seed 000 §9.5-9.6: the problem queue worked by the
    night_cycle model, creative drift between distant cortex themes). Each stage is
    checkpointed in night_cycle_runs; one run at a time; a morning brief is written
    under the data dir.
    """
    import json
    import signal
    import sys
    import threading

    from agent.db.connect import preflight, resolve
    from agent.db.migrate import upgrade
    from night_cycle.progress import NullProgress, Progress, RichProgress
    from night_cycle.runner import NightCycle

    settings = settings_from()
    target = resolve(settings)
    preflight(target.url)
    upgrade(target.url, settings)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())  # finish the stage in hand, then stop
    progress: Progress = RichProgress() if sys.stderr.isatty() and not as_json else NullProgress()
    try:
        result = NightCycle(settings, target.app_url, progress=progress, stop=stop).run(
            resume=resume, only_stage=stage)
    finally:
        progress.close()
    if as_json:
        click.echo(json.dumps(result, default=str))
        return 0
    click.echo(f"night cycle run {result['run_id']} done"
               + (" (resumed)" if result["resumed"] else ""))
    for number, info in result["stages"].items():
        shown = ", ".join(f"{k}: {v}" for k, v in info.items()
                          if k not in ("artifact_sha256",) and not isinstance(v, dict | list))
        click.echo(f"  stage {number}: {shown}")
    click.echo(f"morning brief: {result['brief']}")
    return 0


COMMANDS = (loop, consolidate, idle, night_cycle)
