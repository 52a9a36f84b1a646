"""`cogd intentions --user U`: a user's intentions (plans, promises, reminders, unfinished
work) with their lifecycle; `cogd intentions drop ID --user U` drops one."""

from __future__ import annotations

import json
from typing import Any

import click

from agent.commands.context import json_option, settings_from
from agent.errors import InputError

USER_HELP = "Whose intentions (a user handle)."


def _user_conn(handle: str | None, app: str, what: str = "intentions") -> tuple[Any, Any]:
    from agent.commands.context import ready_url
    from agent.db.connect import connect
    from agent.services.records.sessions import user_by_handle

    if not handle or not handle.strip():
        raise InputError(f"give --user HANDLE (whose {what})")
    conn = connect(ready_url(settings_from()), app=app, autocommit=True)
    try:
        return conn, user_by_handle(conn, handle.strip())
    except BaseException:
        conn.close()
        raise


@click.group(invoke_without_command=True)
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help=USER_HELP)
@click.option("--all", "show_all", is_flag=True, help="Include fulfilled and dropped ones.")
@json_option
@click.pass_context
def intentions(ctx: click.Context, handle: str | None, show_all: bool, as_json: bool) -> None:
    """A user's open intentions (overdue ones flagged); with --all, the resolved ones too
    and how each was resolved (the LLM, the completion heuristic, or the user)."""
    if ctx.invoked_subcommand is not None:
        return
    from agent.runtime import Runtime

    conn, user_id = _user_conn(handle, "cogd-intentions")
    try:
        items = Runtime(settings_from()).intention_tracker().list(
            conn, user_id, include_resolved=show_all)
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps({"user": handle, "intentions": items}, default=str))
        return
    if not items:
        click.echo("no open intentions" if not show_all else "no intentions")
    for i in items:
        flag = " OVERDUE" if i["overdue"] else ""
        how = f" ({(i['resolution'] or {}).get('detector')})" if i["status"] != "open" else ""
        click.echo(f"{i['id']}  {i['kind']} [{i['status']}{how}]{flag} carried {i['carried']}: "
                   f"{' '.join(i['content'].split())[:140]}")


@intentions.command("drop")
@click.argument("intention_id")
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help=USER_HELP)
@click.pass_context
def drop_intention(ctx: click.Context, intention_id: str, handle: str | None) -> int:
    """Drop one of the user's open intentions (it never surfaces again)."""
    from agent.services.reach.intentions import drop

    if handle is None and ctx.parent is not None:  # `cogd intentions --user U drop ID`
        handle = ctx.parent.params.get("handle")
    conn, user_id = _user_conn(handle, "cogd-intentions")
    try:
        click.echo(drop(conn, user_id, intention_id, via="cli"))
    finally:
        conn.close()
    return 0


COMMANDS = (intentions,)
