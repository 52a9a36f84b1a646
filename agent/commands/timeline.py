"""`cogd contradictions`, `cogd resolve ID keep-a|keep-b|merge` (issue 42 item 3; seed 000
§4.5.3) and `cogd timeline --user U` (item 4; seed 000 §4.3, §4.6.3)."""

from __future__ import annotations

import json
from typing import Any

import click

from agent.commands.context import json_option, settings_from
from agent.errors import InputError


def _conn(app: str) -> Any:
    from agent.commands.context import ready_url
    from agent.db.connect import connect

    return connect(ready_url(settings_from()), app=app, autocommit=True)


def _user_id(conn: Any, handle: str | None) -> Any:
    from agent.services.records.sessions import user_by_handle

    return None if handle is None else user_by_handle(conn, handle.strip())


def contradiction_lines(items: list[dict[str, Any]],
                        resolve_with: str = "cogd resolve ID") -> list[str]:
    """Open contradictions as `cogd contradictions` and the REPL's /contradictions print
    them: id, when and by whom flagged (and why), then a (older) and b (newer), then how
    to resolve one (`resolve_with`: the command, or the REPL's /resolve)."""
    if not items:
        return ["no open contradictions"]
    out: list[str] = []
    for c in items:
        who = f" user {c['user']}," if c.get("user") else ""
        why = f": {c['flagged']['reason']}" if c["flagged"].get("reason") else ""
        out.append(f"#{c['id']}{who} flagged {str(c['flagged_at'])[:16].replace('T', ' ')} "
                   f"by {c['flagged']['by']}{why}")
        for side in ("a", "b"):
            m = c[side]
            text = " ".join(m["content"].split())
            out.append(f"  {side}  {str(m['created_at'])[:10]}  memory {m['memory_id']} "
                       f"({m['status']}): {text[:160]}")
    text = "[--text \"...\"]" if resolve_with.startswith("cogd") else "[merged text]"
    out.append(f"resolve: {resolve_with} keep-a | keep-b | merge {text}")
    return out


def resolution_line(r: dict[str, Any]) -> str:
    lost = ", ".join(r["superseded"])
    how = f"; merged text by: {r['how']}" if r["action"] == "merge" else ""
    return (f"contradiction {r['contradiction_id']} resolved ({r['action']}, resolution "
            f"{r['resolution_id']}): memory {r['kept']} stands; superseded (kept, not "
            f"deleted): {lost}{how}")


@click.command("contradictions")
@click.option("--user", "handle", default=None, metavar="HANDLE",
              help="Whose contradictions (a user handle) [default: every user's].")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 1000),
              help="At most this many contradictions.")
@json_option
def contradictions(handle: str | None, limit: int, as_json: bool) -> int:
    """The open contradictions: two memories that disagree, flagged by consolidation's
    classifier or the exit gate (seed 000 §4.5.3). Each shows its id, both statements
    (a: the older, b: the newer) with their memory ids and dates, and who flagged it
    and why. Resolve one with `cogd resolve ID keep-a|keep-b|merge`."""
    from agent.runtime import Runtime

    conn = _conn("cogd-contradictions")
    try:
        items = Runtime(settings_from()).contradictions().open(
            conn, _user_id(conn, handle), limit=limit)
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps({"user": handle, "contradictions": items}, default=str))
    else:
        click.echo("\n".join(contradiction_lines(items)))
    return 0


@click.command("resolve")
@click.argument("contradiction_id")
@click.argument("action", type=click.Choice(["keep-a", "keep-b", "merge"]))
@click.option("--text", default=None,
              help="With merge: the merged statement [default: the consolidation LLM's "
              "when configured, else the newer statement (a named heuristic)].")
@click.option("--user", "handle", default=None, metavar="HANDLE",
              help="Resolve only if the contradiction is this user's.")
@json_option
def resolve(contradiction_id: str, action: str, text: str | None, handle: str | None,
            as_json: bool) -> int:
    """Resolve a contradiction (an id from `cogd contradictions`): keep-a keeps the older
    memory, keep-b the newer; merge writes a new memory from both. The losing memory (or
    both, for merge) is superseded by the one that stands, never deleted: `cogd why` on
    it shows the resolution. Audit-logged; a contradiction is resolved once."""
    from agent.runtime import Runtime

    conn = _conn("cogd-resolve")
    try:
        got = Runtime(settings_from()).contradictions().resolve(
            conn, contradiction_id, action, user_id=_user_id(conn, handle), text=text,
            actor="cli" + (f":{handle}" if handle else ""))
    finally:
        conn.close()
    click.echo(json.dumps(got, default=str) if as_json else resolution_line(got))
    return 0


@click.command("timeline")
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help="Whose timeline (a user handle).")
@click.option("--from", "start", default=None, metavar="DATE",
              help="From this date (YYYY-MM-DD, or an ISO date-time).")
@click.option("--to", "end", default=None, metavar="DATE",
              help="Up to this date, included (YYYY-MM-DD, or an ISO date-time).")
@click.option("--limit", default=200, show_default=True, type=click.IntRange(1, 500),
              help="At most this many episodes: with more in the range, the newest are "
              "kept, the oldest left out, and the output says so (JSON: `truncated`).")
@json_option
def timeline(handle: str | None, start: str | None, end: str | None, limit: int,
             as_json: bool) -> int:
    """A user's timeline: the episodes the night cycle marked (a coherent span of a
    session or a day about one topic) with their dates, titles and milestones (first
    mentions, decisions, moves, important events; key ones marked *), oldest first,
    grouped by month; each with its sources (turn and block ids). With more than
    --limit in the range, the newest are shown and a first line says older ones were
    left out."""
    from agent.services.memory import timeline as tl

    if not handle or not handle.strip():
        raise InputError("give --user HANDLE (whose timeline)")
    lo, hi = tl.parse_day(start, "--from"), tl.parse_day(end, "--to", end=True)
    conn = _conn("cogd-timeline")
    try:
        items, truncated = tl.page(conn, _user_id(conn, handle), lo, hi, limit=limit)
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps({"user": handle, "from": start, "to": end, "episodes": items,
                               "truncated": truncated}, default=str))
    elif not items:
        click.echo("no episodes" + (" in that range" if start or end else "")
                   + ": the night cycle marks them (`cogd night-cycle`)")
    else:
        click.echo("\n".join(tl.lines(items, truncated)))
    return 0


COMMANDS = (contradictions, resolve, timeline)
