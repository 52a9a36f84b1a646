"""Commands for other assistants (issue 16, seed 002): `cogd watch` remembers what is said
in Claude Code sessions; `cogd hook` prints what the memory holds for a prompt."""

from __future__ import annotations

import getpass
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
import psycopg

from agent.commands.context import json_option, settings_from
from agent.errors import CogdError, DatabaseError, InputError

log = logging.getLogger("agent.watch")

USER_OPTION = click.option(
    "--user", default=lambda: getpass.getuser(), envvar="COGD_USER", show_envvar=True,
    help="Whose memory: the watched sessions belong to this user, the hook recalls "
    "their memories [default: your login name].")


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@USER_OPTION
@click.option("--once", is_flag=True, help="Import what is there now and exit.")
@click.option("--interval", "interval_s", default=2.0, show_default=True,
              type=click.FloatRange(0.1, 3600), help="Seconds between polls.")
@json_option
def watch(paths: tuple[Path, ...], user: str, once: bool, interval_s: float,
          as_json: bool) -> int:
    """Tail Claude Code session transcripts and remember each new turn.

    PATHS: transcript files, or directories searched for *.jsonl [default: Claude Code's
    ~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects]. Every user and assistant message
    with text goes through the live write path (as `cogd import`), in session
    `claude:<sessionId>` of --user; tool calls, tool results and meta lines are skipped.
    Idempotent on each line's uuid, and each file's read offset is kept in the database,
    so stopping and starting again (or --once from cron) never adds a turn twice.
    Runs until Ctrl-C / SIGTERM; --once reads once and exits.
    """
    from agent.commands.context import ready_url
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.access.transcripts import TranscriptWatcher, WatchReport, default_claude_dir

    targets = list(paths) or [default_claude_dir()]
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        raise InputError(f"no such file or directory: {', '.join(missing)}")
    settings = settings_from()
    url = ready_url(settings)
    writer = Runtime(settings).turn_writer()
    stop = threading.Event()
    if not once:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
    total = WatchReport()
    if not once:
        log.info("watching %s for %s (every %.1f s)", ", ".join(str(p) for p in targets),
                 user, interval_s)
    while not stop.is_set():
        try:
            with connect(url, app="cogd-watch", autocommit=True) as conn:
                watcher = TranscriptWatcher(conn, writer, user, targets)
                while True:
                    report = watcher.poll()
                    total.add(report)
                    if report.imported.inserted or report.errors:
                        log.info("imported %d turns (%d already there, %d bad lines)",
                                 report.imported.inserted, report.imported.duplicates,
                                 len(report.errors))
                        for err in report.errors[:5]:
                            log.warning("skipped %s", err)
                    if once or stop.wait(interval_s):
                        break
            break
        except (psycopg.OperationalError, DatabaseError) as exc:
            if once:
                raise
            # the database restarted or went away: what was read and not imported is
            # read again (the offset is saved after the import)
            log.warning("database connection lost (%s); reconnecting",
                        " ".join(str(exc).split())[:160])
            stop.wait(min(30.0, max(1.0, interval_s)))
    data = total.as_dict()
    if as_json:
        click.echo(json.dumps(data))
    elif once:
        click.echo(f"imported {data['inserted']} turns from {data['files']} files, "
                   f"{data['duplicates']} already present, {data['skipped']} lines not a "
                   f"message, {data['errors']} bad lines")
    return 0


@click.command()
@USER_OPTION
@click.option("--prompt", default=None, help="The prompt (default: read stdin: Claude "
              "Code's hook JSON, or plain text).")
@click.option("--session", default=None, help="The assistant's session id (default: the "
              "hook JSON's session_id).")
@click.option("--timeout", "timeout_s", default=10.0, show_default=True,
              type=click.FloatRange(0.5, 600),
              help="Print nothing rather than answer later than this many seconds after "
              "the process started (wall time: Python's start and imports count).")
@click.option("--max-tokens", "max_tokens", default=None, type=click.IntRange(50, 20000),
              help="The printed block's budget in tokens [default: config hook.max_tokens, "
              "400].")
@json_option
def hook(user: str, prompt: str | None, session: str | None, timeout_s: float,
         max_tokens: int | None, as_json: bool) -> int:
    """Print what the memory holds for a prompt (Claude Code's UserPromptSubmit hook).

    \b
    In this order, within --max-tokens:
      corrections that apply to the prompt ("fails when ..., fine when ...");
      on the session's first prompt, the handoff: the gap, the last session's note,
        open intentions, the morning brief's blocks, overnight thoughts;
      what the idle DMN thought of for this session since the last prompt;
      a learned workflow the prompt starts (its remaining steps);
      strong recall matches, not from the prompt's own session (at most [idle]
        max_injected_thoughts);
      the active goals (at most [goals] max_in_prompt).
    Searches use the compound query: the session's last [hook] buffer_turns (3) user
    turns (as `cogd watch` imports them) and the prompt. Each piece is printed at most
    once per [idle] topic_cooldown_minutes (10) in a session; a prompt with nothing new
    prints nothing.
    No model is called. The hook never blocks the prompt: an error prints one line on
    stderr and exits 1 (Claude Code shows it and goes on), never 2 (which would block the
    prompt). See the README for the settings.json lines.
    """
    result: dict[str, Any] = {}
    settings = settings_from()  # click's context is per thread: read it here

    # the budget runs from the process's start, not from here: Python's start and the
    # imports before this line (0.3-5 s on a busy machine) count against --timeout
    budget = timeout_s - process_age()
    if budget <= 0:
        click.echo(f"cogd hook: no answer within {timeout_s:g} s; printed nothing", err=True)
        return 0
    deadline = time.monotonic() + budget * 0.8  # past it, nothing is committed

    def work() -> None:
        try:
            result["items"] = _hook_items(settings, user, prompt, session, deadline,
                                          max_tokens)
        except BaseException as exc:  # reported by the main thread
            result["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(budget)
    if worker.is_alive():
        click.echo(f"cogd hook: no answer within {timeout_s:g} s; printed nothing", err=True)
        return 0
    exc = result.get("error")
    if exc is not None:
        reason = str(exc) if isinstance(exc, CogdError) else (
            f"internal error: {exc.__class__.__name__}: {exc}")
        click.echo(f"cogd hook: {reason}", err=True)
        return 1
    items = [{k: v for k, v in i.items() if k != "meta"} for i in result["items"]]
    if as_json:
        click.echo(json.dumps({"items": items, "ms": round((time.monotonic() - started)
                                                           * 1000, 1)}, default=str))
    else:
        from agent.services.access.hook import render

        text = render(items)
        if text:
            click.echo(text)
    return 0


def process_age() -> float:
    """Seconds since this process started (Linux: /proc/self/stat's start time against
    /proc/uptime, 10 ms steps); where /proc is missing, seconds since agent was imported."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            stat = f.read()
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        # field 22 (starttime, clock ticks after boot); the command name (field 2) may
        # hold spaces, so count from its closing parenthesis
        start_ticks = int(stat[stat.rindex(")") + 2:].split()[19])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        import agent

        return max(0.0, time.monotonic() - agent.IMPORTED_AT)


def _hook_items(settings: Any, user: str, prompt: str | None, session: str | None,
                deadline: float, max_tokens: int | None) -> list[dict[str, Any]]:
    from agent.db.connect import connect, preflight, resolve
    from agent.runtime import Runtime
    from agent.services.access.hook import hook_input

    if prompt is None:
        prompt, given = hook_input(sys.stdin.read())
        session = session or given
    # no migration on a prompt's path (`cogd up`, `cogd migrate` do it): the embedded
    # server is started if needed, and the app role connects
    target = resolve(settings)
    preflight(target.url)
    hook_pass = Runtime(settings).prompt_hook(max_tokens)
    with connect(target.app_url, app="cogd-hook", autocommit=True) as conn:
        return hook_pass.prompt(conn, user, prompt, session, deadline=deadline)


COMMANDS = (watch, hook)
