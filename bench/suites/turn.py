"""One loop turn's cost: `Cognition.prepare_turn` (the user turn written, recall, and what
reaches the prompt: handoff, corrections, intentions, emotion, double takes, workflows,
principles, predictions and decisions) and the whole turn (context, then respond and commit).

    python -m bench turn [--turns 600] [--questions 40] [--seed 7]

A throwaway embedded database holding bench/data/synth.py's conversation (imported through
the live write path), then the corpus's questions asked in one new session, one turn at a
time, with the heuristic System 1/2 (so the model's time is out of the figure); the first
turn (a session start, and the warm-up) is not counted. To compare two commits, run it in
each tree on the same quiet machine, alternately. The turns come from no inbox message,
so no outbox row is written (`Cognition.commit` without `deliver`), before and after the
inbox protocol moved to agent/inbox.py (issue 41 item 3).

Writes bench/results/turn-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from typing import Any

from bench.common import import_corpus, scratch_database
from bench.data.synth import generate
from bench.reports import machine, percentile, write_results


def run(turns: int, questions: int, seed: int) -> dict[str, Any]:
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.records.sessions import ensure_session, ensure_user

    corpus = generate(turns, seed)
    started = time.perf_counter()
    with scratch_database() as (settings, url):
        imported = import_corpus(settings, url, corpus)
        settings.llm.roles["system1"] = "heuristic"
        settings.llm.roles["system2"] = "heuristic"
        cog = Runtime(settings).cognition()
        context_ms: list[float] = []
        turn_ms: list[float] = []
        with connect(url, app="cogd-bench", autocommit=True) as conn:
            sid = ensure_session(conn, ensure_user(conn, "user"), None)
            for i, q in enumerate([q.text for q in corpus.questions][: questions + 1]):
                t0 = time.perf_counter()
                ctx = cog.prepare_turn(conn, sid, q)
                t1 = time.perf_counter()
                cog.commit(conn, ctx, cog.respond(ctx))
                t2 = time.perf_counter()
                if i:  # the first turn: the session start and the warm-up
                    context_ms.append((t1 - t0) * 1000)
                    turn_ms.append((t2 - t0) * 1000)
    stats = {name: {"n": len(v), "p50": round(percentile(v, 50), 1),
                    "p95": round(percentile(v, 95), 1), "max": round(max(v), 1)}
             for name, v in (("context", context_ms), ("turn", turn_ms))}
    return {"date": dt.date.today().isoformat(), "machine": machine(), "turns": turns,
            "seed": seed, "imported": imported, "stats": stats,
            "wall_s": round(time.perf_counter() - started, 1)}


def report(d: dict[str, Any]) -> str:
    m = d["machine"]
    lines = [f"# One loop turn's cost, {d['date']}", "",
             f"`python -m bench turn --turns {d['turns']} --seed {d['seed']}` on {m['cpus']} "
             f"CPUs ({m['processor']}), Python {m['python']}; wall time {d['wall_s']} s. "
             f"{d['turns']} synthetic turns imported, then the questions asked in one new "
             "session with the heuristic System 1/2 (the first turn not counted).", "",
             "| measure (ms) | n | p50 | p95 | max |", "| --- | --- | --- | --- | --- |"]
    for name, label in (("context", "`Cognition.prepare_turn` (writes, recall, prompt parts)"),
                        ("turn", "whole turn (context, respond, commit)")):
        s = d["stats"][name]
        lines.append(f"| {label} | {s['n']} | {s['p50']} | {s['p95']} | {s['max']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=600, help="turns imported first")
    parser.add_argument("--questions", type=int, default=40, help="turns measured")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.turns < 50 or args.questions < 1:
        parser.error("--turns must be at least 50 and --questions at least 1")
    data = run(args.turns, args.questions, args.seed)
    write_results("turn", data, report(data))


if __name__ == "__main__":
    main()
