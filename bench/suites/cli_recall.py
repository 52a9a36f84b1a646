"""`cogd recall --queries FILE` against in-process recall, per query (issue 43 item 3).

    python -m bench cli_recall [--turns 3000] [--batches 10,100,500] [--rounds 3]
                               [--seed 7] [--db DATA_DIR] [--keep]

In a throwaway embedded database (or --db: a data dir that already holds an import, reused
as it is): bench.data.synth's conversation of --turns turns imported through cogd's
importer. The queries: the corpus's own questions, then bench.loop's generated ones (~70 %
about its people and things) until there are enough; every batch is the first N of them.

For each batch size N and round:
- in-process: one `Runtime(settings).recaller()` and one connection, warmed by one query
  (not timed), then the N queries through `Recaller.recall` (recall_log written, as the
  CLI does by default): the mean per query. This is what bench.loop measures.
- CLI: `cogd --data-dir DIR recall --queries FILE --as-of T` as a subprocess, the wall
  time from the spawn to its exit (Python start, imports, the schema check, the embedder's
  load, every query, the JSON lines) divided by N.
The ratio is CLI / in-process per query; the goal is at most 2. A 1-query CLI run gives
the fixed cost F; with the CLI's per-query cost c (from the largest batch) and the
in-process q, the goal holds from N >= F / (2q - c). After the timing, the suite checks
that the CLI's ranked ids equal the in-process ones: the first 100 queries through both
paths, one right after the other, with no recall_log written (same --as-of).

Writes bench/results/cli-recall-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.reports import machine, write_results

AS_OF = "2026-12-01T12:00:00+00:00"
COGD = str(Path(sys.executable).with_name("cogd"))


@contextlib.contextmanager
def database(db: Path | None, turns: int, seed: int, keep: bool
             ) -> Iterator[tuple[Any, str, dict[str, Any]]]:
    """(settings, url, what was imported): --db as it is, else a fresh import."""
    from bench.common import import_corpus, scratch_database
    from bench.data.synth import generate

    corpus = generate(n_turns=turns, seed=seed)
    if db is not None:
        from agent.config import load_settings
        from agent.db.connect import resolve

        settings = load_settings(data_dir=db)
        yield settings, resolve(settings).url, {"reused": str(db)}
        return
    with scratch_database(keep=keep) as (settings, url):
        yield settings, url, import_corpus(settings, url, corpus)


def queries(n: int, turns: int, seed: int) -> list[str]:
    from bench.data.synth import generate
    from bench.suites.loop import query_texts

    out = list(dict.fromkeys(q.text for q in generate(n_turns=turns, seed=seed).questions))
    if len(out) < n:
        out += [t for _, t in query_texts(n - len(out), seed, avoid=[("", t) for t in out])]
    return out[:n]


def in_process(recaller: Any, conn: Any, texts: list[str],
               log: bool = True) -> tuple[float, list[list[str]]]:
    """Mean ms per query, and each query's ranked ids."""
    now = dt.datetime.fromisoformat(AS_OF)
    ids: list[list[str]] = []
    start = time.perf_counter()
    for text in texts:
        out = recaller.recall(conn, text, now=now, log=log)
        ids.append([i.id for i in out.result.items])
    return (time.perf_counter() - start) * 1000 / len(texts), ids


def cli(data_dir: Path, texts: list[str], work: Path,
        log: bool = True) -> tuple[float, list[list[str]]]:
    """Wall ms of `cogd recall --queries` over `texts` (spawn to exit), and the ids."""
    file = work / f"queries-{len(texts)}.txt"
    file.write_text("\n".join(texts) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGD_")}
    start = time.perf_counter()
    proc = subprocess.run([COGD, "--data-dir", str(data_dir), "recall", "--queries", str(file),
                           "--as-of", AS_OF, *([] if log else ["--no-log"])], env=env,
                          capture_output=True, text=True,
                          check=False)
    wall = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"cogd recall --queries failed ({proc.returncode}): {proc.stderr}")
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    return wall, [[i["id"] for i in x["items"]] for x in lines]


def run(turns: int, batches: list[int], rounds: int, seed: int, db: Path | None,
        keep: bool) -> dict[str, Any]:
    from agent.db.connect import connect, resolve
    from agent.runtime import Runtime

    data: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine(),
                            "load_before": os.getloadavg(), "turns": turns, "seed": seed,
                            "rounds": rounds, "as_of": AS_OF}
    with database(db, turns, seed, keep) as (settings, _url, imported), \
            tempfile.TemporaryDirectory(prefix="cogd-bench-cli-") as tmp:
        data["import"] = imported
        texts = queries(max(batches), turns, seed)
        recaller = Runtime(settings).recaller()
        app_url = resolve(settings).app_url
        rows: dict[int, dict[str, list[float]]] = {n: {"in": [], "cli": []} for n in batches}
        fixed: list[float] = []
        with connect(app_url, app="cogd-bench", autocommit=True) as conn:
            recaller.recall(conn, "warm-up", log=False)
            for _ in range(rounds):
                fixed.append(cli(Path(settings.data_dir), texts[:1], Path(tmp))[0])
                for n in batches:
                    q, ids_in = in_process(recaller, conn, texts[:n])
                    wall, ids_cli = cli(Path(settings.data_dir), texts[:n], Path(tmp))
                    rows[n]["in"].append(q)
                    rows[n]["cli"].append(wall)
            # the results, checked apart from the timing: each path right after the other,
            # neither writing recall_log
            check = texts[:min(100, len(texts))]
            _, ids_in = in_process(recaller, conn, check, log=False)
            _, ids_cli = cli(Path(settings.data_dir), check, Path(tmp), log=False)
            differ = [(t, a[:5], b[:5]) for t, a, b in zip(check, ids_in, ids_cli, strict=True)
                      if a != b]
            data["check"] = {"queries": len(check), "differ": len(differ),
                             "first_differences": differ[:3]}
        data["load_after"] = os.getloadavg()
    f = statistics.median(fixed)
    big = max(batches)
    q_big = statistics.median(rows[big]["in"])
    c = max(0.0, (statistics.median(rows[big]["cli"]) - f) / (big - 1))
    data["fixed_ms"] = round(f, 1)
    data["cli_per_query_ms"] = round(c, 2)
    data["break_even_batch"] = (None if 2 * q_big <= c
                                else max(1, round(f / (2 * q_big - c))))
    data["batches"] = []
    for n in batches:
        q = statistics.median(rows[n]["in"])
        per = statistics.median(rows[n]["cli"]) / n
        data["batches"].append({
            "n": n, "in_process_ms": round(q, 2), "cli_wall_ms": round(per * n, 1),
            "cli_ms": round(per, 2), "ratio": round(per / q, 2), "goal_met": per / q <= 2.0,
            "in_process_rounds": [round(x, 2) for x in rows[n]["in"]],
            "cli_rounds_ms": [round(x, 1) for x in rows[n]["cli"]]})
    return data


def markdown(data: dict[str, Any], command: str) -> str:
    m = data["machine"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "?"
    lines = [
        f"# `cogd recall --queries` against in-process recall ({data['date']})", "",
        f"Command: `{command}` at commit {commit}. Machine: {m['cpus']} cores, Python "
        f"{m['python']}, {m['platform']}. Load average before {data['load_before'][0]:.1f}, "
        f"after {data['load_after'][0]:.1f} (the machine is shared with other work: wall "
        "times are noisy).", "",
        f"Corpus: bench.data.synth, {data['turns']} turns, seed {data['seed']} "
        f"({json.dumps(data['import'])}). Medians of {data['rounds']} rounds; recall_log "
        f"written in both paths; --as-of {data['as_of']}.", "",
        "| queries | in-process ms/query | CLI wall | CLI ms/query | ratio | ≤ 2x |",
        "| ---: | ---: | ---: | ---: | ---: | :---: |",
    ]
    for b in data["batches"]:
        lines.append(f"| {b['n']} | {b['in_process_ms']:.1f} | {b['cli_wall_ms'] / 1000:.2f} s "
                     f"| {b['cli_ms']:.1f} | {b['ratio']:.2f} | "
                     f"{'yes' if b['goal_met'] else 'no'} |")
    be = data["break_even_batch"]
    lines += [
        "",
        f"The CLI's fixed cost (a 1-query run, spawn to exit): {data['fixed_ms']:.0f} ms; its "
        f"cost per further query: {data['cli_per_query_ms']:.1f} ms. "
        + (f"The goal (≤ 2x in-process per query) holds from about {be} queries a batch."
           if be is not None else "The CLI's per-query cost alone is over 2x in-process."),
        "",
        f"Same results: the first {data['check']['queries']} queries, in-process then through "
        "the CLI right after, neither writing recall_log: "
        + ("the ranked ids are the same for every query."
           if not data["check"]["differ"] else
           f"{data['check']['differ']} queries rank differently (first ones in the .json)."),
        "",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--batches", default="10,100,500",
                        help="comma-separated batch sizes (queries per CLI call)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--db", type=Path, default=None,
                        help="a data dir holding an import already (reused, not changed "
                             "but for recall_log rows)")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway data dir")
    args = parser.parse_args(argv)
    batches = sorted({int(x) for x in args.batches.split(",") if x.strip()})
    data = run(args.turns, batches, args.rounds, args.seed, args.db, args.keep)
    command = "python -m bench cli_recall " + " ".join(argv if argv is not None
                                                        else sys.argv[1:])
    stem = write_results("cli-recall", data, markdown(data, command.strip()))
    data["files"] = [f"{stem.name}.md", f"{stem.name}.json"]
    return data
