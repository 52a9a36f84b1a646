"""Choose the recall pipeline's fusion weights on the dev seed of bench/data/convo.py.

    python -m bench tune [--seed 7] [--quick]

Never run it on the held-out seed (11) or on a public benchmark: the report's seed is
chosen here and checked there (`python -m bench quality --corpus convo --seed 11`).

Imports the conversations once, then coordinate descent: for each field of GRID in turn,
every value is tried with the others held at the best so far; a value is kept when it
raises answerable R@10 (ties: MRR) and lowers no category's R@10 by more than
MAX_CATEGORY_DROP. Only cogd is asked (the baselines do not depend on these weights).
Writes bench/results/tune-<date>.md and .json with every trial.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from typing import Any

from bench.reports import machine, write_results

# the fields the dev seed chooses, in the order they are tried; config/default.toml cites
# the resulting report
GRID: dict[str, tuple[Any, ...]] = {
    "sparse_list_weight": (0.25, 0.5, 0.75, 1.0, 1.5, 2.0),
    "dense_list_weight": (0.5, 0.75, 1.0, 1.5, 2.0),
    "bare_list_weight": (0.0, 0.25, 0.5, 1.0),
    "window_list_weight": (0.0, 0.5, 1.0, 2.0),
    "time_boost": (0.0, 0.25, 0.5, 1.0),
    "person_boost": (0.0, 0.15, 0.3, 0.6),
    "person_mention_boost": (0.0, 0.15, 0.3),
    "person_boost_min_terms": (0, 1, 2, 3),
    "current_state_weight": (0.0, 0.15, 0.3, 0.6, 1.0),
    "tiebreak_weight": (0.0, 0.05, 0.1, 0.2),
    "heuristic_fallback": (False, True),
}
MAX_CATEGORY_DROP = 0.02


def evaluate(recaller: Any, conn: Any, corpus: Any, users: dict[str, Any]) -> dict[str, Any]:
    """cogd alone over every question: answerable R@10, MRR, R@10 per category."""
    from bench.suites.quality import first_rank, mrr, recall_at

    per_cat: dict[str, list[int | None]] = {}
    for q in corpus.questions:
        if not q.evidence:
            continue
        out = recaller.recall(conn, q.text, k=20, log=False,
                              now=dt.datetime.fromisoformat(q.asked_at),
                              user_id=users[q.conversation])
        ranked = [i.external_ids for i in out.result.items]
        per_cat.setdefault(q.category, []).append(first_rank(ranked, q.evidence))
    ranks = [r for rs in per_cat.values() for r in rs]
    return {"R@10": round(recall_at(ranks, 10), 4), "MRR": round(mrr(ranks), 4),
            "categories": {c: round(recall_at(rs, 10), 4) for c, rs in per_cat.items()}}


def better(new: dict[str, Any], best: dict[str, Any]) -> bool:
    if any(new["categories"][c] < v - MAX_CATEGORY_DROP for c, v in best["categories"].items()):
        return False
    return (new["R@10"], new["MRR"]) > (best["R@10"], best["MRR"])


def run(seed: int, quick: bool, grid: dict[str, tuple[Any, ...]] = GRID) -> dict[str, Any]:
    import dataclasses

    from agent.db.connect import connect
    from agent.runtime import Runtime
    from bench.common import Lines, import_corpus, scratch_database
    from bench.data.convo import generate

    started = time.perf_counter()
    corpus = generate(3 if quick else 10, seed=seed)
    trials: list[dict[str, Any]] = []
    with scratch_database() as (settings, url):
        print(f"importing {len(corpus.turns)} turns", flush=True)
        imported = import_corpus(settings, url, Lines(list(corpus.turns)))
        recaller = Runtime(settings).recaller()
        start_cfg = recaller.cfg
        with connect(url, app="cogd-bench", autocommit=True) as conn:
            users = {h: u for h, u in conn.execute("SELECT handle, user_id FROM users")}
            best = evaluate(recaller, conn, corpus, users)
            trials.append({"field": None, "value": None, **best, "kept": True})
            print(f"start: R@10 {best['R@10']} MRR {best['MRR']}", flush=True)
            for name, values in grid.items():
                current = getattr(recaller.cfg, name)
                for value in values:
                    if value == current:
                        continue
                    recaller.cfg = dataclasses.replace(recaller.cfg, **{name: value})
                    got = evaluate(recaller, conn, corpus, users)
                    kept = better(got, best)
                    trials.append({"field": name, "value": value, **got, "kept": kept})
                    print(f"{name}={value}: R@10 {got['R@10']} MRR {got['MRR']}"
                          f"{'  kept' if kept else ''}", flush=True)
                    if kept:
                        best, current = got, value
                    else:
                        recaller.cfg = dataclasses.replace(recaller.cfg, **{name: current})
                recaller.cfg = dataclasses.replace(recaller.cfg, **{name: current})
    chosen = {f: getattr(recaller.cfg, f) for f in grid}
    return {"date": dt.date.today().isoformat(), "seed": seed, "quick": quick,
            "machine": machine(), "turns": len(corpus.turns), "import": imported,
            "start": {f: getattr(start_cfg, f) for f in grid}, "chosen": chosen,
            "best": best, "trials": trials, "wall_s": round(time.perf_counter() - started, 1)}


def markdown(data: dict[str, Any]) -> str:
    lines = [f"# Recall weights chosen on the dev seed, {data['date']}", "",
             f"`python -m bench tune --seed {data['seed']}{' --quick' if data['quick'] else ''}`"
             f" on {data['machine']['cpus']} CPUs; {data['turns']} turns; wall "
             f"{data['wall_s']} s. Coordinate descent over GRID (bench/suites/tune.py); a value is "
             f"kept when answerable R@10 rises (ties: MRR) and no category's R@10 drops by "
             f"more than {MAX_CATEGORY_DROP:.0%}.", "",
             "| field | start | chosen |", "| --- | --- | --- |"]
    lines += [f"| {f} | {data['start'][f]} | {data['chosen'][f]} |" for f in data["chosen"]]
    cats = list(data["best"]["categories"])
    lines += ["", "| trial | R@10 | MRR | " + " | ".join(cats) + " | kept |",
              "| --- | --- | --- | " + " | ".join("---" for _ in cats) + " | --- |"]
    for t in data["trials"]:
        name = "start" if t["field"] is None else f"{t['field']} = {t['value']}"
        cells = " | ".join(f"{t['categories'].get(c, 0):.2f}" for c in cats)
        kept = "yes" if t["kept"] else ""
        lines.append(f"| {name} | {t['R@10']:.3f} | {t['MRR']:.3f} | {cells} | {kept} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 conversations")
    parser.add_argument("--fields", nargs="+", choices=sorted(GRID), metavar="FIELD",
                        help="Only these fields of GRID (the others stay as configured).")
    args = parser.parse_args(argv)
    if args.seed == 11:
        parser.error("seed 11 is the held-out report seed: tune on another")
    grid = {f: GRID[f] for f in args.fields} if args.fields else GRID
    data = run(args.seed, args.quick, grid)
    # a run over some fields does not overwrite the full run's report
    write_results("tune" if not args.fields else "tune-partial", data, markdown(data),
                  quick=args.quick)
    return data


if __name__ == "__main__":
    main()
