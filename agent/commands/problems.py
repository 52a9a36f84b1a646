"""`cogd problems --user U`: a user's problem queue (what the night cycle's overnight
thinking works on, seed 000 §9.5) with each worked problem's result; `cogd problems add
"TEXT" --user U` queues a problem of the user's own."""

from __future__ import annotations

import json

import click

from agent.commands.context import json_option, settings_from
from agent.commands.intentions import _user_conn

USER_HELP = "Whose problems (a user handle)."


@click.group(invoke_without_command=True)
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help=USER_HELP)
@click.option("--all", "show_all", is_flag=True, help="Include resolved and dropped ones.")
@json_option
@click.pass_context
def problems(ctx: click.Context, handle: str | None, show_all: bool, as_json: bool) -> None:
    """A user's problem queue: open questions, unresolved contradictions, failed
    predictions and their own problems; worked ones with the night's result (its
    confidence: low and heuristic when no real model worked on it)."""
    if ctx.invoked_subcommand is not None:
        return
    from agent.services.thinking import problems as service

    settings_from()
    conn, user_id = _user_conn(handle, "cogd-problems", what="problems")
    try:
        items = service.listing(conn, user_id, show_all=show_all)
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps({"user": handle, "problems": items}, default=str))
        return
    if not items:
        click.echo("no problems queued")
    for p in items:
        click.echo(f"{p['problem_id']}  {p['kind']} [{p['status']}]: "
                   f"{' '.join(p['content'].split())[:140]}")
        if p["result"]:
            conf = "" if p["confidence"] is None else f" (confidence {p['confidence']:.2f})"
            click.echo(f"    result{conf}: {' '.join(p['result'].split())[:300]}")


@problems.command("add")
@click.argument("text")
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help=USER_HELP)
@json_option
@click.pass_context
def add_problem(ctx: click.Context, text: str, handle: str | None, as_json: bool) -> int:
    """Queue a problem for the next night's overnight thinking."""
    from agent.services.thinking import problems as service

    if ctx.parent is not None:  # `cogd problems --user U [--json] add TEXT`
        handle = handle or ctx.parent.params.get("handle")
        as_json = as_json or bool(ctx.parent.params.get("as_json"))
    conn, user_id = _user_conn(handle, "cogd-problems", what="problems")
    try:
        added = service.add(conn, user_id, text)
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps(added))
    else:
        click.echo(f"queued {added['problem_id']}: the next night cycle works on it "
                   "(`cogd problems --user U` shows the result)")
    return 0


COMMANDS = (problems,)
