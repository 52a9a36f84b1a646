"""`cogd cognitive-models --user U` and `cogd principles --user U`: a user's cognitive
models (beliefs with their evidence and confidence, seed 000 §10.2) and principles
(seed 000 §10.4). (`cogd models` lists the LLM/embedding models.)"""

from __future__ import annotations

import json

import click

from agent.commands.context import json_option
from agent.commands.intentions import _user_conn


@click.command("cognitive-models")
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help="Whose models (a user handle).")
@json_option
def cognitive_models(handle: str | None, as_json: bool) -> None:
    """A user's cognitive models: statement, domain, confidence, status, evidence count,
    and what made each (the LLM, or the pattern-heuristic)."""
    from agent.services.thinking.models_principles import list_models

    conn, _ = _user_conn(handle, "cogd-models", "cognitive models")
    try:
        items = list_models(conn, (handle or "").strip())
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps({"user": handle, "models": items}, default=str))
        return
    if not items:
        click.echo("no cognitive models")
    for m in items:
        click.echo(f"{m['model_id']}  {m['domain']} [{m['status']}] {m['confidence']:.2f} "
                   f"evidence {m['evidence']} (+{m['strengthen_count']}/-{m['weaken_count']}, "
                   f"{m['detector']}): {' '.join(m['statement'].split())[:140]}")


@click.command("principles")
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help="Whose principles (a user handle).")
@json_option
def principles(handle: str | None, as_json: bool) -> None:
    """A user's principles: statement, confidence, status (a proposed one waits for its
    Layer 0 proposal), and the memories and models it crystallised from."""
    from agent.services.thinking.models_principles import list_principles

    conn, _ = _user_conn(handle, "cogd-principles", "principles")
    try:
        items = list_principles(conn, (handle or "").strip())
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps({"user": handle, "principles": items}, default=str))
        return
    if not items:
        click.echo("no principles")
    for p in items:
        wait = f" proposal {p['proposal_id']}" if p["status"] == "proposed" else ""
        click.echo(f"{p['principle_id']}  [{p['status']}{wait}] {p['confidence']:.2f} "
                   f"from {len(p['source_ids'])} ({p['detector']}): "
                   f"{' '.join(p['statement'].split())[:140]}")


COMMANDS = (cognitive_models, principles)
