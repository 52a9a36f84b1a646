"""The self-model prediction test (seed 003's measurable proxy) on a throwaway database.

    python -m bench self_test [--llm local|heuristic] [--scenarios N]

A fresh embedded database (identity: the bootstrap boundaries only, no goals), the
built-in scenarios (agent/data/self_test_scenarios.json) through `SelfTest.run`, the same
code as `cogd self-test`: each predicted from identity and goals (offline: the named
identity-similarity-heuristic), then run as a System 1 turn with the normal prompt (the
default offline model: the bundled SmolLM2-135M when xllamacpp is installed, else the
extractive heuristic, whose answers are read by the named nearest-option-similarity).

Writes bench/results/self-test-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import time
from typing import Any

from bench.reports import machine, write_results


def run(llm: str, n: int | None) -> dict[str, Any]:
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.thinking.self_test import pick
    from bench.common import scratch_database

    started = time.perf_counter()
    with scratch_database() as (settings, url):
        settings.llm.roles["system1"] = llm
        tester = Runtime(settings).self_test()
        scenarios = pick(n, len(pick(None, 1000, [])), [])
        with connect(url, app="cogd-bench", autocommit=True) as conn:
            out = tester.run(conn, scenarios)
    return {"date": dt.date.today().isoformat(), "llm": llm, "machine": machine(),
            "wall_s": round(time.perf_counter() - started, 1), **out}


def markdown(d: dict[str, Any]) -> str:
    m = d["machine"]
    rows = [f"| {i['scenario']} | {i['predicted']} | {i['actual']} | "
            f"{'yes' if i['agreed'] else 'no'} | {i['run_read_by']} |" for i in d["items"]]
    return "\n".join([
        f"# Self-model prediction test, {d['date']}", "",
        f"`python -m bench self_test --llm {d['llm']}` on {m['cpus']} CPUs ({m['processor']}), "
        f"Python {m['python']}; wall time {d['wall_s']} s. A fresh embedded database: the "
        "identity is the bootstrap boundaries only, no goals.", "",
        f"**Agreement: {d['agreed']} of {d['scenarios']} ({d['agreement']:.0%})**; "
        f"{d['detector']}.", "",
        "| scenario | predicted | ran | agreed | run's answer read by |",
        "| --- | --- | --- | --- | --- |", *rows, "",
        "Offline the prediction is a heuristic (the option closest to the weighted "
        "identity texts) and the run is "
        + ("the bundled SmolLM2-135M, whose answers are read by letter, by quoted option "
           "text, or else by nearest option" if d["llm"] == "local" else
           "the extractive fallback, whose answers are mapped to their nearest option")
        + ": the figure measures the plumbing and how often a small offline model acts "
        "as its values' nearest option, not a self-model; with real models (system1 on "
        "openai or gemini) the prediction is the model's own and the trajectory over "
        "time is the measure.", ""])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    default = "local" if importlib.util.find_spec("xllamacpp") else "heuristic"
    parser.add_argument("--llm", choices=("local", "heuristic"), default=default,
                        help=f"the system1 profile [default here: {default}]")
    parser.add_argument("--scenarios", type=int, default=None,
                        help="how many built-in scenarios [default: all]")
    args = parser.parse_args(argv)
    data = run(args.llm, args.scenarios)
    stem = write_results("self-test", data, markdown(data))
    data["files"] = [f"{stem.name}.md", f"{stem.name}.json"]
    return data


if __name__ == "__main__":
    main()
