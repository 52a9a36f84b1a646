"""`cogd`: one console script, one subcommand per process or task.

Errors a user can act on print as one line and exit 2; no tracebacks unless
COGD_DEBUG=1.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import click

from agent.errors import CogdError, DatabaseError

# pgserver's platformdirs warns when XDG_RUNTIME_DIR is unset (containers, cron)
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")


class _RichWhenUsed(logging.Handler):
    """rich's log handler, built on the first record: a command that logs nothing (`cogd
    hook`, `cogd recall` in a script) does not pay rich's import (0.1-0.2 s a process)."""

    def __init__(self) -> None:
        super().__init__()
        self._inner: logging.Handler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self._inner is None:
            from rich.logging import RichHandler

            self._inner = RichHandler(show_path=False, console=_stderr_console())
            self._inner.setFormatter(self.formatter)
        self._inner.handle(record)


def _setup_logging(verbose: int) -> None:
    # libraries stay at WARNING unless -vv; cogd's own loggers say what they do
    logging.basicConfig(
        level=logging.DEBUG if verbose >= 2 else logging.WARNING,
        format="%(message)s",
        datefmt="%H:%M:%S",
        handlers=[_RichWhenUsed()],
    )
    logging.getLogger("agent").setLevel(logging.DEBUG if verbose else logging.INFO)


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="COGD_DATA_DIR",
    show_envvar=True,
    help="Where the embedded Postgres and the LanceDB cortex live "
    "[default: $XDG_DATA_HOME/cogd or ~/.local/share/cogd].",
)
@click.option(
    "--database-url",
    envvar="DATABASE_URL",
    show_envvar=True,
    help="Use this Postgres (with pgvector) instead of the embedded server.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="COGD_CONFIG",
    show_envvar=True,
    help="A TOML file whose values override config/default.toml.",
)
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.pass_context
def cli(
    ctx: click.Context,
    data_dir: Path | None,
    database_url: str | None,
    config_file: Path | None,
    verbose: int,
) -> None:
    """cogd: a Postgres-backed cognitive daemon that gives an LLM agent a layered,
    self-maintaining memory.

    With no DATABASE_URL, cogd runs an embedded PostgreSQL 18 + pgvector under the
    data dir; it keeps running between commands until `cogd down`.
    Every option can also come from the environment variable shown in its help.
    """
    _setup_logging(verbose)
    if config_file is not None:
        os.environ["COGD_CONFIG"] = str(config_file)
    overrides: dict[str, Any] = {}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    if database_url:
        overrides["database_url"] = database_url
    ctx.ensure_object(dict)
    ctx.obj["overrides"] = overrides


def _register() -> None:
    from agent.commands import ops, workers

    for command in (*ops.COMMANDS, *workers.COMMANDS):
        cli.add_command(command)
    try:
        from agent.commands import models
    except ImportError:  # pragma: no cover - providers not installed
        return
    for command in getattr(models, "COMMANDS", ()):
        cli.add_command(command)
    from agent.commands import assist, bench, chat, intentions, mcp, memory, problems, serve
    from agent.commands import profile as profile_cmd

    for command in _predictions_commands():  # issue 18: predictions and calibration
        cli.add_command(command)
    for command in _self_test_commands():  # issue 18: the self-model prediction test
        cli.add_command(command)
    for command in _timeline_commands():  # issue 42: contradictions, resolve, timeline
        cli.add_command(command)
    for command in (*chat.COMMANDS, *memory.COMMANDS, *intentions.COMMANDS, *mcp.COMMANDS,
                    *assist.COMMANDS, *serve.COMMANDS, *bench.COMMANDS, *problems.COMMANDS,
                    *profile_cmd.COMMANDS,
                    *_thinking_commands()):
        cli.add_command(command)


def _timeline_commands() -> tuple[Any, ...]:
    from agent.commands.timeline import COMMANDS

    return COMMANDS


def _thinking_commands() -> tuple[Any, ...]:
    from agent.commands.thinking import COMMANDS  # cognitive models, principles

    return COMMANDS


def _self_test_commands() -> tuple[Any, ...]:
    from agent.commands.self_test import COMMANDS

    return COMMANDS


def _predictions_commands() -> tuple[Any, ...]:
    from agent.commands.predictions import COMMANDS

    return COMMANDS


_register()


# exit codes a command must never return, and what it returns instead: Claude Code reads
# exit 2 from a UserPromptSubmit hook as "block this prompt"; a broken config or a bad
# option of `cogd hook` must not stop the user's every prompt
NEVER = {"hook": {2: 1}}
GLOBAL_WITH_VALUE = ("--data-dir", "--database-url", "--config")


def _subcommand(args: list[str]) -> str | None:
    """The subcommand's name in a command line (after the global options)."""
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in GLOBAL_WITH_VALUE:
            skip = True
        elif not a.startswith("-"):
            return a
    return None


def main(argv: list[str] | None = None) -> None:
    remap = NEVER.get(_subcommand(sys.argv[1:] if argv is None else argv) or "", {})

    def leave(code: int) -> None:
        sys.exit(remap.get(code, code))

    try:
        rv = cli.main(args=argv, prog_name="cogd", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        leave(exc.exit_code)
    except CogdError as exc:
        click.echo(f"cogd: error: {exc}", err=True)
        leave(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("COGD_DEBUG"):
            raise
        import psycopg

        if isinstance(exc, psycopg.OperationalError):
            # the server went away mid-command (crashed, restarted, network): the work of
            # the open transaction is rolled back; what committed stays
            reason = " ".join(str(exc).split()).rstrip(".") or exc.__class__.__name__
            click.echo(
                f"cogd: error: the database connection was lost ({reason}). What this "
                "command had not committed was rolled back; run it again once the server "
                "is back (`cogd night-cycle --resume` continues a night cycle)", err=True)
            leave(DatabaseError.exit_code)
        click.echo(
            f"cogd: internal error: {exc.__class__.__name__}: {exc} "
            "(re-run with COGD_DEBUG=1 for the traceback)",
            err=True,
        )
        sys.exit(1)
    leave(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
