"""`cogd bench`: a thin wrapper over `python -m bench` (issue #7).

The benchmarks live in bench/ at the repository root, which the wheel does not ship: this
command works from a source checkout (or an editable install) only, and says so otherwise.
Every benchmark builds its own throwaway embedded database; none touches the configured one.
"""

from __future__ import annotations

import click

from agent.errors import CogdError


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("part", default="all")
@click.option("--quick", is_flag=True, help="The smaller variant (`all --quick`: minutes).")
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
def bench(part: str, quick: bool, extra: tuple[str, ...]) -> int:
    """Run the benchmarks: PART is all (default), quality, speed, loop, night, calibrate,
    providers... Extra arguments go to the part (e.g. `cogd bench quality --turns 600`).
    Results: bench/results/<part>-<date>.md and .json; `all` also writes summary-<date>.md.
    """
    try:
        from bench.__main__ import main
    except ImportError as exc:
        raise CogdError(
            f"the benchmarks are not installed ({exc}): run `cogd bench` from a source "
            "checkout with an editable install, or `python -m bench` in the repository root"
        ) from None
    return main([part, *(["--quick"] if quick else []), *extra])


COMMANDS = (bench,)
