"""Calibrate the recall verdict (strong_match / weak_match / no_match) on cogd's own benchmark.

    python -m bench calibrate [--turns 2000] [--seed 7] [--quick]

Generates the synthetic long conversation of bench/data/synth.py, imports it through
the live write path into a throwaway embedded database, runs every question
through `cogd recall`'s pipeline, and records for each question the best item's
cosine similarity and IDF-weighted term coverage. It then chooses, on this data:

- the strong threshold S: maximise balanced accuracy of "best match >= S" for
  answerable questions (planted, paraphrase, updated) against hard never-said
  ones ("what's my cat called?" when only a dog was mentioned);
- the weak threshold W: maximise balanced accuracy of answerable against plainly
  never-said questions (a hard never-said question may be a weak match: related
  content exists, but it is not the answer);
- the lexical weight w (match = (1 - w) cosine + w coverage): the one with the best
  sum of both balanced accuracies;
- the verification threshold V: the lowest score at which >= 95 % of the
  questions at or above it are answerable.

Writes bench/results/calibration-<date>.md and .json. The chosen values go into
config/default.toml [recall] by hand, citing the report.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
from typing import Any

from bench.common import import_corpus, scratch_database
from bench.reports import machine, percentile, write_results

ANSWERABLE = ("planted", "paraphrase", "updated")
NEVER = ("never_said", "never_said_hard")
WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6)


def collect(settings: Any, url: str, corpus: Any, k: int) -> list[dict[str, Any]]:
    """Per question: the top-k items' similarity, coverage and whether each is evidence."""
    from agent.db.connect import connect
    from agent.runtime import Runtime

    recaller = Runtime(settings).recaller()
    recaller.compute_coverage = True  # recorded for every weight tried, even 0
    rows = []
    with connect(url, app="cogd-bench", autocommit=True) as conn:
        for q in corpus.questions:
            out = recaller.recall(conn, q.text, k=k, log=False)
            items = [{"similarity": i.similarity or 0.0,
                      "coverage": i.coverage or 0.0,
                      "evidence": bool(set(i.external_ids) & set(q.evidence)),
                      "external": list(i.external_ids)}
                     for i in out.result.items]
            rows.append({"id": q.id, "category": q.category, "text": q.text,
                         "evidence": list(q.evidence), "items": items,
                         "latency_ms": out.latency_ms})
    return rows


def best(row: dict[str, Any], w: float) -> float:
    scores = [(1 - w) * i["similarity"] + w * i["coverage"] for i in row["items"]]
    return max(scores, default=0.0)


def balanced_accuracy(pos: list[float], neg: list[float], t: float) -> float:
    tpr = sum(s >= t for s in pos) / max(1, len(pos))
    tnr = sum(s < t for s in neg) / max(1, len(neg))
    return (tpr + tnr) / 2


def best_threshold(pos: list[float], neg: list[float]) -> tuple[float, float]:
    grid = [round(x / 100, 2) for x in range(5, 96)]
    scored = [(balanced_accuracy(pos, neg, t), t) for t in grid]
    top = max(a for a, _ in scored)
    ties = [t for a, t in scored if a == top]
    return top, ties[len(ties) // 2]  # the middle of the best plateau


def choose(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def scores(cats: tuple[str, ...], w: float) -> list[float]:
        return [best(r, w) for r in rows if r["category"] in cats]

    trials = []
    for w in WEIGHTS:
        pos = scores(ANSWERABLE, w)
        s_acc, strong = best_threshold(pos, scores(("never_said_hard",), w))
        w_acc, weak = best_threshold(pos, scores(("never_said",), w))
        trials.append({"lexical_weight": w, "strong": strong, "weak": min(weak, strong),
                       "strong_balanced_accuracy": round(s_acc, 4),
                       "weak_balanced_accuracy": round(w_acc, 4)})
    pick = max(trials, key=lambda t: (t["strong_balanced_accuracy"]
                                      + t["weak_balanced_accuracy"], -t["lexical_weight"]))
    w = pick["lexical_weight"]
    labelled = sorted(((best(r, w), r["category"] in ANSWERABLE) for r in rows
                       if r["category"] in ANSWERABLE + NEVER), reverse=True)
    verify = pick["strong"]
    for t in sorted({s for s, _ in labelled}):
        above = [ok for s, ok in labelled if s >= t]
        if above and sum(above) / len(above) >= 0.95:
            verify = max(pick["strong"], round(t + 0.005, 2))
            break
    return {**pick, "verify": verify, "trials": trials}


def outcome(rows: list[dict[str, Any]], chosen: dict[str, Any]) -> dict[str, Any]:
    w, s, wk = chosen["lexical_weight"], chosen["strong"], chosen["weak"]
    out: dict[str, Any] = {}
    for cat in sorted({r["category"] for r in rows}):
        scores = [best(r, w) for r in rows if r["category"] == cat]
        hits = [next((n for n, i in enumerate(r["items"], 1) if i["evidence"]), None)
                for r in rows if r["category"] == cat]
        out[cat] = {
            "n": len(scores),
            "strong": sum(x >= s for x in scores), "weak": sum(wk <= x < s for x in scores),
            "no_match": sum(x < wk for x in scores),
            "best_match_p10": round(percentile(scores, 10), 3),
            "best_match_median": round(statistics.median(scores), 3),
            "best_match_p90": round(percentile(scores, 90), 3),
            "evidence_at_1": sum(h == 1 for h in hits if h),
            "evidence_at_10": sum(1 for h in hits if h),
        }
    return out


def _outcome_rows(table: dict[str, Any]) -> list[str]:
    return [f"| {cat} | {o['n']} | {o['strong']} | {o['weak']} | {o['no_match']} | "
            f"{o['best_match_p10']} / {o['best_match_median']} / {o['best_match_p90']} | "
            f"{o['evidence_at_1']} | {o['evidence_at_10']} |" for cat, o in table.items()]


def markdown(data: dict[str, Any]) -> str:
    c = data["chosen"]
    lines = [
        f"# Recall verdict calibration, {data['date']}", "",
        f"`python -m bench calibrate --turns {data['turns']} --seed {data['seed']}` on "
        f"{data['machine']['cpus']} CPUs, Python {data['machine']['python']}. Corpus: "
        f"{data['import']['inserted']} turns imported in {data['import']['seconds']} s "
        f"through the live write path; {data['questions']} questions; top {data['k']} items.",
        "", "## Chosen", "",
        "| key | value |", "| --- | --- |",
        f"| lexical_weight | {c['lexical_weight']} |",
        f"| strong_match_min_score | {c['strong']} (balanced accuracy "
        f"{c['strong_balanced_accuracy']}: answerable vs hard never-said) |",
        f"| weak_match_min_score | {c['weak']} (balanced accuracy "
        f"{c['weak_balanced_accuracy']}: answerable vs plainly never-said) |",
        f"| verification_min_score | {c['verify']} (>= 95 % answerable at or above) |",
        "", "## Trials (thresholds per lexical weight)", "",
        "| lexical_weight | strong | its balanced accuracy | weak | its balanced accuracy |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {t['lexical_weight']} | {t['strong']} | {t['strong_balanced_accuracy']} | "
              f"{t['weak']} | {t['weak_balanced_accuracy']} |" for t in c["trials"]]
    lines += ["", "## Verdicts per category with the chosen values", "",
              "| category | n | strong | weak | no_match | best match p10 / median / p90 |"
              " evidence @1 | evidence @10 |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += _outcome_rows(data["outcome"])
    lines += ["", f"## Held out: the same values on seed {data['validate_seed']}", "",
              "| category | n | strong | weak | no_match | best match p10 / median / p90 |"
              " evidence @1 | evidence @10 |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += _outcome_rows(data["held_out"])
    lines += ["", "Temporal and multi-hop questions are listed for information; they are "
              "not used to choose thresholds (issue #7 measures them).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    from bench.data.synth import generate

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--validate-seed", type=int, default=11,
                        help="a second corpus the chosen values are checked on (held out)")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="600 turns")
    args = parser.parse_args(argv)
    turns = 600 if args.quick else args.turns
    corpus = generate(n_turns=turns, seed=args.seed)
    with scratch_database() as (settings, url):
        # no thresholds are needed here: raw similarity and coverage are recorded
        imported = import_corpus(settings, url, corpus)
        rows = collect(settings, url, corpus, args.k)
    chosen = choose(rows)
    held_out = generate(n_turns=turns, seed=args.validate_seed)
    with scratch_database() as (settings, url):
        import_corpus(settings, url, held_out)
        check_rows = collect(settings, url, held_out, args.k)
    data = {"date": dt.date.today().isoformat(), "machine": machine(), "turns": turns,
            "seed": args.seed, "validate_seed": args.validate_seed, "k": args.k,
            "questions": len(rows), "import": imported, "chosen": chosen,
            "outcome": outcome(rows, chosen), "held_out": outcome(check_rows, chosen),
            "rows": rows}
    write_results("calibration", data, markdown(data))


if __name__ == "__main__":
    main()


