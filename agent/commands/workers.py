"""Worker processes: what `cogd up` supervises and compose services run."""

from __future__ import annotations

import click

from agent.commands.context import settings_from


def _run_worker(kind: str) -> int:
    from agent.db.connect import preflight, resolve
    from agent.workers.base import Worker
    from agent.workers.stubs import ConsolidationWorker, IdleWorker

    cls: type[Worker]
    if kind == "loop":
        from agent.workers.loop import LoopWorker

        cls = LoopWorker
    else:
        cls = {"consolidate": ConsolidationWorker, "idle": IdleWorker}[kind]
    settings = settings_from()
    target = resolve(settings)
    preflight(target.url)
    worker = cls(settings, target.url)
    worker.install_signal_handlers()
    return worker.run()


@click.command()
def loop() -> int:
    """Run the cognitive loop worker: answers inbox messages, writes the day table."""
    return _run_worker("loop")


@click.command()
def consolidate() -> int:
    """Run the consolidation worker (STUB until issue #5: lifecycle only)."""
    return _run_worker("consolidate")


@click.command()
def idle() -> int:
    """Run the idle default-mode network worker (STUB until issue #5: lifecycle only)."""
    return _run_worker("idle")


@click.command("night-cycle")
@click.option("--stage", type=click.IntRange(1, 9), help="Run only this stage (1-9).")
@click.option("--resume", is_flag=True, help="Continue the last interrupted run.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
def night_cycle(stage: int | None, resume: bool, as_json: bool) -> int:
    """Run the nightly consolidation batch (cron: 0 3 * * * cogd night-cycle).

    NOT IMPLEMENTED YET: the nine stages arrive with issue #6. Exits 3 so cron
    and compose report it instead of pretending it ran.
    """
    click.echo(
        "cogd night-cycle: not implemented yet (issue #6); nothing was changed", err=True
    )
    return 3


COMMANDS = (loop, consolidate, idle, night_cycle)
