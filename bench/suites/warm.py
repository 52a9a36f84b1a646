"""Recall right after a server restart, with and without cogd's recall warm-up.

    python -m bench warm DATA_DIR [--searches 0,200] [--rounds 2] [--seed 11]

DATA_DIR is a database bench.loop kept (`python -m bench loop ... --keep`; it prints no
path: the kept dir is /tmp/cogd-bench-*). For each round, for each --searches value: stop
the embedded server, start it again (shared_buffers empty; the OS page cache keeps what it
holds), run agent/services/memory/recall.py's `warm` with that many searches (0: none), then
bench.loop's recall phase: its first pass over other questions than the measured ones
(what a user's first recalls after a restart meet), then the measured pass. The loop
worker runs the same warm-up when it starts ([recall] warm_queries).

The first condition of the first round may find the OS page cache without the database's
files (after another large run, say) and read them from the disk; the rounds are reported
in the order they ran.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from pathlib import Path
from typing import Any

from bench.reports import machine, write_results
from bench.suites.loop import (
    BUSY_CORES,
    FIRST_PASS_SEED,
    STEAL_CORES,
    CpuWatch,
    _tag,
    bench_recall,
    measured,
    query_texts,
    recall_clients,
)


def condition(data_dir: Path, searches: int, seed: int, settle_s: float,
              retries: int) -> dict[str, Any]:
    """One restart, the warm-up, bench.loop's recall phase."""
    from agent.config import load_settings
    from agent.db.connect import connect, resolve
    from agent.db.embedded import stop_server
    from agent.db.queries import query
    from agent.services.memory.recall import warm

    stop_server(data_dir)
    settings = load_settings(data_dir=data_dir)
    url = resolve(settings).url  # starts it again
    recaller, side, timer, bare = recall_clients(settings, url, "bench-warm")
    queries = query_texts(200, seed + 1)
    first = query_texts(200, seed + FIRST_PASS_SEED, avoid=queries)
    watch = CpuWatch(data_dir / "pg")
    try:
        with connect(url, app="cogd-bench", autocommit=True) as conn:
            row = conn.execute("SELECT user_id FROM users WHERE handle = 'bench'").fetchone()
            if row is None:
                raise SystemExit(f"{data_dir}: no user 'bench': not a database bench.loop kept")
            # the planner's count, as recall reads it: a count(*) would read the table first
            size = conn.execute(query("recall_memories_estimate")).fetchone()
            start = time.perf_counter()
            done = warm(conn, recaller.cfg, searches)
            warm_s = time.perf_counter() - start
            rec, other = measured(watch, settle_s, retries, lambda: bench_recall(
                conn, recaller, timer, queries, row[0], bare, first))
    finally:
        side.close()
    return {"searches": searches, "warm_searches_run": done, "warm_s": round(warm_s, 2),
            "memories": int(size[0]) if size else 0,
            "ef_search": recaller.cfg.ef_search_for(int(size[0]) if size else 0),
            "first_pass": rec["first_pass"], "pipeline_ms": rec["pipeline_ms"],
            "bare_ms": rec["bare_ms"], "bare_sql_ms": rec["bare_sql_ms"],
            "other_cpu": other}


def run(data_dir: Path, searches: list[int], rounds: int, seed: int, settle_s: float,
        retries: int) -> dict[str, Any]:
    if not (data_dir / "pg").is_dir():
        raise SystemExit(f"{data_dir}: no pg/ inside: give a data dir bench.loop kept (--keep)")
    started = time.perf_counter()
    runs = []
    for r in range(rounds):
        for n in searches:
            print(f"round {r + 1}: restart, warm-up of {n} searches, recall", flush=True)
            runs.append({"round": r + 1, **condition(data_dir, n, seed, settle_s, retries)})
    return {"date": dt.date.today().isoformat(), "seed": seed, "machine": machine(),
            "data_dir": str(data_dir), "busy_cores_limit": BUSY_CORES,
            "steal_cores_limit": STEAL_CORES, "runs": runs,
            "wall_s": round(time.perf_counter() - started, 1)}


def markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    lines = [
        f"# Recall after a restart, with and without the warm-up, {data['date']}",
        "",
        f"`python -m bench warm` (seed {data['seed']}) on {m['cpus']} CPUs "
        f"({m['processor']}), Python {m['python']}; a database bench.loop kept "
        f"(about {data['runs'][0]['memories']:,} memories, the planner's count; recall at "
        f"hnsw.ef_search "
        f"{data['runs'][0]['ef_search']}); wall time {data['wall_s']} s.",
        "",
        "Each row: the embedded server stopped and started again (shared_buffers empty), "
        "cogd's recall warm-up with that many searches (0: none), then bench.loop's recall "
        "phase: its first pass over 200 other questions than the measured ones, then the "
        "200 measured ones. Milliseconds.",
        "",
        "| round | warm-up searches (s) | first pass: recall p50 / p95 / max | first pass: "
        "bare embed + HNSW p50 / p95 | then measured: recall p50 / p95 | measured: bare "
        "p50 / p95 | other cores, steal |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in data["runs"]:
        fp, att = r["first_pass"], r["other_cpu"]["attempts"][r["other_cpu"]["kept"]]
        lines.append(
            f"| {r['round']} | {r['warm_searches_run']} ({r['warm_s']}) | "
            f"{fp['pipeline_ms']['p50']} / {fp['pipeline_ms']['p95']} / "
            f"{fp['pipeline_ms']['max']} | {fp['bare_ms']['p50']} / {fp['bare_ms']['p95']} | "
            f"{r['pipeline_ms']['p50']} / {r['pipeline_ms']['p95']} | "
            f"{r['bare_ms']['p50']} / {r['bare_ms']['p95']} | "
            f"{att['other_cores']}, {att['steal_cores']} |")
    lines += ["", "A phase runs again where other processes used over "
              f"{data['busy_cores_limit']} cores or the hypervisor stole over "
              f"{data['steal_cores_limit']}; a run again is no longer right after the "
              "restart (`other_cpu` in the JSON says which attempt was kept).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path, help="a data dir bench.loop kept (--keep)")
    parser.add_argument("--searches", type=lambda v: [int(x) for x in v.split(",")],
                        default=[0, 200], help="warm-up sizes to compare (0: no warm-up)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11,
                        help="bench.loop's seed of that run (its questions)")
    parser.add_argument("--settle-s", type=float, default=120.0,
                        help="wait up to this long for other processes to go quiet")
    parser.add_argument("--retries", type=int, default=0,
                        help="run a phase again when the machine was busy (0: report it as "
                             "it ran; a rerun is no longer right after the restart)")
    parser.add_argument("--tag", type=_tag, default="", help="added to the result file's name")
    args = parser.parse_args(argv)
    if any(n < 0 for n in args.searches) or args.rounds < 1:
        parser.error("--searches must be 0 or more, --rounds at least 1")
    data = run(args.data_dir, args.searches, args.rounds, args.seed, args.settle_s,
               args.retries)
    write_results("warm" + (f"-{args.tag}" if args.tag else ""), data, markdown(data))


if __name__ == "__main__":
    main()
