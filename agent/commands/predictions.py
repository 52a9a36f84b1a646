"""`cogd predictions --user U`: a user's predictions (seed 000 §10.3), pending first, and
their calibration per domain (stated confidence against hit rate; v_calibration for one
user)."""

from __future__ import annotations

import json

import click

from agent.commands.context import json_option
from agent.commands.intentions import _user_conn


@click.command()
@click.option("--user", "handle", default=None, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help="Whose predictions (a user handle).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10000),
              help="At most this many predictions.")
@json_option
def predictions(handle: str | None, limit: int, as_json: bool) -> int:
    """A user's predictions (the user's and the agent's), pending first, with how each
    was settled (the LLM, the outcome-cue heuristic, or its deadline passing), and the
    calibration per domain and confidence bucket."""
    from agent.services.thinking.predictions import PredictionTracker

    conn, user_id = _user_conn(handle, "cogd-predictions")
    try:
        items = PredictionTracker.of_user(conn, user_id, limit)
        calibration = PredictionTracker.calibration(conn, user_id)
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps({"user": handle, "predictions": items,
                               "calibration": calibration}, default=str))
        return 0
    if not items:
        click.echo("no predictions")
    for p in items:
        how = f" by {(p['settlement'] or {}).get('detector')}" if p["status"] != "pending" else ""
        deadline = f" due {p['deadline']:%Y-%m-%d}" if p["deadline"] else ""
        click.echo(f"{p['id']}  {p['made_by']} {p['domain']} {p['confidence']:.2f} "
                   f"[{p['status']}{how}]{deadline}: {' '.join(p['statement'].split())[:140]}")
    if calibration:
        click.echo("calibration (domain, confidence, settled, stated vs hit rate):")
    for c in calibration:
        click.echo(f"  {c['domain']:<14} {c['confidence_from']:.2f}-{c['confidence_to']:.2f}  "
                   f"n={c['settled']}  stated {c['stated']:.2f}  hit {c['hit_rate']:.2f}  "
                   f"error {c['calibration_error']:+.2f}")
    return 0


COMMANDS = (predictions,)
