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
    return cls(settings, target.url)


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
