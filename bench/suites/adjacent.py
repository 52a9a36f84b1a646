"""Adjacent turns on REALTALK: every system scored on its ranked turns alone, and with the
turns said right before and after each one attached, as `[recall] adjacent_turns` returns
them (issue 39 item 2, "where a question and its answer sit in adjacent turns, return the
pair").

    python -m bench adjacent --data DIR [--split dev|heldout] [--db DIR]

The same systems and questions as `python -m bench quality --corpus realtalk` (cogd and the
BM25 / dense / hybrid baselines over bare, context-rendered and index text; the same kept
database with --db, bench/suites/recall_pools.py). Each system's top 20 is scored three
ways: its turns alone ("alone"), each turn with the one said after it in its session
("next"), and with the ones before and after it ("both"): an item counts as a hit at rank r
when it or a turn attached to it is an evidence turn. Every system gets the same
attachment, from the conversation's own order, so the comparison stays fair: attaching
helps the baselines too. cogd's recall attaches them itself within its token budget; here
no budget is applied to any system (a REALTALK turn is about 20 tokens, ten items and their
neighbours fit recall's 2,000).

Writes bench/results/adjacent-realtalk-<split>-<date>.md and .json (rates only, no text).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import itertools
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODES = ("alone", "next", "both")


def score(captured: list[dict[str, Any]], neighbours: dict[str, dict[int, str]],
          systems: Sequence[str]) -> dict[str, Any]:
    """R@1 / R@10 per system and mode, overall and per category. `neighbours`: each turn's
    external id -> {+1: the next turn's, -1: the previous turn's} in its session."""
    out: dict[str, Any] = {}
    for mode in MODES:
        steps = {"alone": (), "next": (1,), "both": (1, -1)}[mode]
        for name in systems:
            cats: dict[str, list[int]] = {}
            for q in captured:
                evidence = set(q["evidence"])
                ranked = []
                for ext in q["got"][name]:
                    ids = set(ext)
                    for step in steps:
                        ids.update(n for e in ext[:1]
                                   if (n := neighbours.get(e, {}).get(step)) is not None)
                    ranked.append(ids)
                hit1 = bool(ranked and ranked[0] & evidence)
                hit10 = any(ids & evidence for ids in ranked[:10])
                for cat in (q["category"], "all"):
                    c = cats.setdefault(cat, [0, 0, 0])
                    c[0] += hit1
                    c[1] += hit10
                    c[2] += 1
            out.setdefault(mode, {})[name] = {
                cat: {"n": c[2], "R@1": round(c[0] / c[2], 4), "R@10": round(c[1] / c[2], 4)}
                for cat, c in sorted(cats.items())}
    return out


def run(data_dir: str | None, split: str, db_dir: str | None) -> dict[str, Any]:
    import bench.suites.quality_convo as qc
    from bench.common import Lines, import_corpus, scratch_database
    from bench.data.realtalk import describe, load
    from bench.reports import machine
    from bench.suites.quality_realtalk import SPLITS
    from bench.suites.recall_pools import kept_database

    started = time.perf_counter()
    corpus = load(data_dir, SPLITS[split])
    captured: list[dict[str, Any]] = []
    row = qc.question_row

    def keep(q: Any, got: Any, verdict: Any) -> dict[str, Any]:
        captured.append({"id": q.id, "category": q.category, "evidence": list(q.evidence),
                         "got": {k: [tuple(h.external) for h in v] for k, v in got.items()}})
        return row(q, got, verdict)

    qc.question_row = keep  # type: ignore[assignment]
    try:
        with contextlib.ExitStack() as stack:
            if db_dir is None:
                settings, url = stack.enter_context(scratch_database())
                print(f"importing {len(corpus.turns)} turns", flush=True)
                import_corpus(settings, url, Lines(list(corpus.turns)))
            else:
                settings, url, _ = stack.enter_context(kept_database(Path(db_dir), corpus))
            print(f"querying {len(corpus.questions)} questions", flush=True)
            qc.run_systems(settings, url, corpus, {})
    finally:
        qc.question_row = row  # type: ignore[assignment]
    neighbours: dict[str, dict[int, str]] = {}
    for a, b in itertools.pairwise(corpus.turns):
        if a.session == b.session:
            neighbours.setdefault(a.external_id, {})[1] = b.external_id
            neighbours.setdefault(b.external_id, {})[-1] = a.external_id
    systems = sorted(captured[0]["got"]) if captured else []
    return {"date": dt.date.today().isoformat(), "split": split, "machine": machine(),
            "corpus": describe(corpus), "systems": systems,
            "scores": score(captured, neighbours, systems),
            "wall_s": round(time.perf_counter() - started, 1)}


def markdown(data: dict[str, Any]) -> str:
    scores, systems = data["scores"], data["systems"]
    cats = [c for c in next(iter(scores["alone"].values())) if c != "all"]
    lines = [f"# Adjacent turns on REALTALK {data['split']} ({data['date']})", "",
             f"`python -m bench adjacent --split {data['split']}`; "
             f"{data['machine']['cpus']} CPUs, Python {data['machine']['python']}; wall "
             f"{data['wall_s']} s; {data['corpus']['conversations']} conversations, "
             f"{data['corpus']['turns']} turns, {data['corpus']['questions']} questions.", "",
             "Every system's top 20 scored on its turns alone, and with the turn after each "
             "(`next`) or the turns before and after it (`both`) attached, the same rule for "
             "every system (no token budget applied).", "",
             "| system | " + " | ".join(f"{m}: R@1 / R@10" for m in MODES) + " | "
             + " | ".join(f"{c}, both" for c in cats) + " |",
             "| --- |" + " --- |" * (len(MODES) + len(cats))]
    for name in systems:
        cells = [f"{100 * scores[m][name]['all']['R@1']:.1f} / "
                 f"{100 * scores[m][name]['all']['R@10']:.1f}" for m in MODES]
        cells += [f"{100 * scores['both'][name][c]['R@1']:.1f} / "
                  f"{100 * scores['both'][name][c]['R@10']:.1f}" for c in cats]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## cogd against the best baseline, per mode", ""]
    for m in MODES:
        base = [s for s in systems if not s.startswith("cogd")]
        if "cogd" not in systems or not base:
            continue
        best1 = max(base, key=lambda s: scores[m][s]["all"]["R@1"])
        best10 = max(base, key=lambda s: scores[m][s]["all"]["R@10"])
        c = scores[m]["cogd"]["all"]
        lines.append(
            f"- {m}: cogd R@1 {100 * c['R@1']:.1f} against {best1} "
            f"{100 * scores[m][best1]['all']['R@1']:.1f} "
            f"({100 * (c['R@1'] - scores[m][best1]['all']['R@1']):+.1f}); R@10 "
            f"{100 * c['R@10']:.1f} against {best10} "
            f"{100 * scores[m][best10]['all']['R@10']:.1f} "
            f"({100 * (c['R@10'] - scores[m][best10]['all']['R@10']):+.1f})")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from bench.reports import write_results

    parser = argparse.ArgumentParser(
        prog="python -m bench adjacent", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="REALTALK's Chat_*.json directory "
                        "(or COGD_REALTALK_DIR)")
    parser.add_argument("--split", choices=("dev", "heldout"), default="heldout")
    parser.add_argument("--db", help="kept database dir (imported once, reused)")
    args = parser.parse_args(argv)
    from bench.data.realtalk import DataMissing, data_dir

    try:  # as `python -m bench quality --corpus realtalk` does: a clear line, no traceback
        found = data_dir(args.data)
    except DataMissing as exc:
        parser.exit(2, f"{exc}\n")
    data = run(str(found), args.split, args.db)
    write_results(f"adjacent-realtalk-{args.split}", data, markdown(data))
    return data
