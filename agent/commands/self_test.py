"""`cogd self-test`: the self-model prediction test (seed 003's measurable proxy): the
agent predicts its own choices from its identity and goals, then the same scenarios are
run through System 1; the agreement rate is stored (`v_self_test` shows it over time)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from agent.commands.context import json_option, settings_from


@click.command("self-test")
@click.option("--scenarios", "n", type=int, default=None, metavar="N",
              help="How many scenarios (the file's first, then the built-in ones) "
                   "[default: [self_test] scenarios].")
@click.option("--scenarios-file", type=click.Path(path_type=Path, dir_okay=False),
              default=None, metavar="FILE.json",
              help='More scenarios: a JSON list of {"text", "options": [2-6 strings], "id"}.')
@json_option
def self_test(n: int | None, scenarios_file: Path | None, as_json: bool) -> None:
    """Predict your own choices from identity and goals, then run the same scenarios as
    real System 1 turns (nothing written to the day table); report the agreement rate."""
    from agent.commands.context import ready_url
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.thinking.self_test import file_scenarios, pick

    settings = settings_from()
    extra = file_scenarios(scenarios_file) if scenarios_file is not None else []
    tester = Runtime(settings).self_test()
    scenarios = pick(n, tester.default_n, extra)
    with connect(ready_url(settings), app="cogd-self-test", autocommit=True) as conn:
        out = tester.run(conn, scenarios)
    if as_json:
        click.echo(json.dumps({k: out[k] for k in ("run_id", "scenarios", "agreed",
                                                   "agreement", "model", "detector",
                                                   "items")}, default=str))
        return
    click.echo(f"self-test run {out['run_id']}: {out['agreed']} of {out['scenarios']} "
               f"predictions agreed ({out['agreement']:.0%}); {out['detector']}")
    for it in out["items"]:
        mark = "=" if it["agreed"] else "≠"
        click.echo(f"  {it['scenario']}: predicted {it['predicted']} {mark} ran "
                   f"{it['actual']} ({it['run_read_by']})")


COMMANDS = (self_test,)
