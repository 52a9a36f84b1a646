"""`cogd profile --user U [--json] [--rebuild]`: who the user is, from their own words
(issue 42 item 1): the current profile claims with their sources, and the superseded
ones with --json (agent/services/memory/profile.py)."""

from __future__ import annotations

import json
from typing import Any

import click

from agent.commands.context import json_option, settings_from
from agent.commands.intentions import _user_conn


@click.command("profile")
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help="Whose profile (a user handle).")
@click.option("--rebuild", is_flag=True,
              help="Read every turn of the user still in the day table again first (for "
                   "a history imported with older dates after consolidation read past "
                   "them); a turn never claims a slot twice.")
@json_option
def profile(handle: str | None, rebuild: bool, as_json: bool) -> int:
    """What the user said about themself: name, where they live, work, people by
    relation, preferences and current projects, the newest statement per slot, each with
    the turn it came from and when it was said. Consolidation reads the user's own turns
    into it (the consolidation role's model when it routes to a real provider, else the
    named profile heuristic); a newer statement supersedes an older one, which is kept
    (--json lists them under "superseded"). A session's first prompt carries it."""
    from agent.runtime import Runtime

    conn, user_id = _user_conn(handle, "cogd-profile", "profile")
    try:
        service = Runtime(settings_from()).profile()
        rebuilt = None
        if rebuild:
            with conn.transaction():
                rebuilt = len(service.rebuild(conn, user_id))
        shown = service.show(conn, user_id)
    finally:
        conn.close()
    if as_json:
        out = {"user": handle, **shown}
        if rebuilt is not None:
            out["rebuilt_claims"] = rebuilt
        click.echo(json.dumps(out, default=str))
        return 0
    if rebuilt is not None:
        click.echo(f"read again: {rebuilt} claim(s) written")
    for line in profile_lines(shown, handle, "--json"):
        click.echo(line)
    return 0


def profile_lines(shown: dict[str, Any], handle: str | None, listed_by: str) -> list[str]:
    """The profile as `cogd profile` and the REPL's /profile print it: a line per current
    claim with its detector; `listed_by` names what lists the superseded ones."""
    if not shown["claims"]:
        return [f"nothing known about {handle} yet (consolidation reads their own turns)"]
    lines = [f"{c['text']}  ({c['detector']})" for c in shown["claims"]]
    if shown["superseded"]:
        lines.append(f"{len(shown['superseded'])} superseded claim(s) kept "
                     f"({listed_by} lists them)")
    return lines


COMMANDS = (profile,)
