"""Fit recall's learned fusion (issue 39 item 2) on REALTALK's dev pools, offline, in seconds.

    python -m bench recall_pools --data DIR --split dev          # once: the pools file
    python -m bench fusion_train --pools /tmp/cogd-realtalk-dev-pools.jsonl --cv   # choose
    python -m bench fusion_train --pools /tmp/cogd-realtalk-dev-pools.jsonl \\
        --loss listwise --l2 1.0 --write agent/models/recall_fusion.json             # ship

Reads the candidate pools bench/suites/recall_pools.py dumped (every question's candidates as
Recaller.candidates gave them, with its evidence), builds each candidate's feature vector
with the pipeline's own code (agent.domain.recall.fused_scores and pool_features), labels a
candidate 1 when one of its external ids is an evidence turn, and fits a linear model:

- `pointwise`: L2-regularised logistic regression on every candidate;
- `listwise`: a softmax over each question's candidates (ListNet-style, the evidence as the
  target distribution), L2-regularised: what it optimises is the evidence ranking first.

Features are standardised for the fit; the written weights have the standardisation folded
in, so recall scores bias + sum(w x feature) (agent/domain/fusion.py). `--cv`: leave one
conversation out over the dev conversations (5 folds), for every loss, L2 strength and
feature group dropped (fusion.GROUPS), against the weighted RRF on the same pools; R@1 and
R@10 are counted the way bench.quality counts them (an evidence turn among the first k
items). Only dev pools are fitted on; `--evaluate` scores a model file on a pools file
(the held-out one, once, for the report) without fitting anything.

Joint fit: `--pools` takes several files (REALTALK dev plus bench.recall_pools --corpus synth /
convo at seed 7); `--weighting equal` gives each corpus the same total weight in the loss
(each question 1 / its corpus's question count, scaled to the mean), `questions` one weight a
question. Cross-validation leaves one group out, a group being a conversation (the synthetic
corpus's questions carry a `fold` instead); `--joint-cv` runs the L2 x weighting grid and
reports every corpus separately against rrf on its pools.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent.domain import fusion
from agent.domain import recall as domain
from agent.domain.timeref import TimeWindow
from bench.data.realtalk import SWAPPED

K_EVAL = (1, 5, 10, 20)
L2_GRID = (0.01, 0.1, 1.0, 10.0)
JOINT_L2_GRID = (1.0, 10.0, 100.0)
WEIGHTINGS = ("equal", "questions")


def _date(s: str | None) -> dt.datetime | None:
    return None if s is None else dt.datetime.fromisoformat(s)


def candidate(row: dict[str, Any]) -> domain.Candidate:
    fields = {k: v for k, v in row.items() if k in domain.Candidate.__dataclass_fields__}
    fields["created_at"] = _date(row.get("created_at"))
    fields["source_ids"] = tuple(row.get("source_ids") or ())
    fields["external_ids"] = tuple(row.get("external_ids") or ())
    return domain.Candidate(**fields)


def load(path: str | Path) -> list[dict[str, Any]]:
    """The pools file: per question its Candidates, QueryContext, asked time and labels."""
    out = []
    for line in Path(path).read_text().splitlines():
        q = json.loads(line)
        w = q["window"]
        window = None if w is None else TimeWindow(_date(w[0]), _date(w[1]), "")  # type: ignore[arg-type]
        cands = [candidate(c) for c in q["candidates"]]
        evidence = set(q["evidence"])
        corpus = q.get("corpus", "realtalk")
        out.append({**{k: q[k] for k in ("qid", "conversation", "category", "slice")},
                    "corpus": corpus, "w": 1.0, "answerable": bool(evidence),
                    "group": q.get("fold") or f"{corpus}/{q['conversation']}",
                    "now": _date(q["now"]), "cands": cands,
                    "ctx": domain.QueryContext(window=window, asks_current=q["asks_current"],
                                               people=frozenset(q["people"])),
                    "y": np.array([bool(set(c.external_ids) & evidence) for c in cands],
                                  dtype=np.float64)})
    return out


def featurize(questions: list[dict[str, Any]], cfg: domain.RecallConfig) -> None:
    """Each question's feature matrix X (candidates x FEATURES) and its RRF score."""
    for q in questions:
        if not q["cands"]:
            q["X"], q["rrf"] = np.zeros((0, len(fusion.FEATURES))), np.zeros(0)
            continue
        fused, newness = domain.fused_scores(q["cands"], cfg, q["ctx"])
        q["X"] = np.array(domain.pool_features(q["cands"], fused, newness, now=q["now"],
                                               cfg=cfg, ctx=q["ctx"]), dtype=np.float64)
        q["rrf"] = np.array(fused)


def pipeline_ranks(questions: list[dict[str, Any]], cfg: domain.RecallConfig,
                   model: fusion.FusionModel | None) -> list[int | None]:
    """The first evidence item's rank (1-based) in recall_pipeline's top 20, as bench.quality
    asks it (k 20, the configured token budget), with `model` (None: the weighted RRF)."""
    out: list[int | None] = []
    for q in questions:
        res = domain.recall_pipeline(q["cands"], now=q["now"], cfg=cfg, k=20,
                                     context=q["ctx"], fusion=model)
        ev = {c.id for c, y in zip(q["cands"], q["y"], strict=True) if y}
        out.append(next((n for n, i in enumerate(res.items, 1) if i.id in ev), None))
    return out


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(r is not None and r <= k for r in ranks) / max(1, len(ranks))


def summary(questions: list[dict[str, Any]], ranks: Sequence[int | None]) -> dict[str, Any]:
    cats = sorted({q["category"] for q in questions})
    out: dict[str, Any] = {}
    for cat in [*cats, "all"]:
        rs = [r for q, r in zip(questions, ranks, strict=True) if cat in ("all", q["category"])]
        out[cat] = {"n": len(rs), **{f"R@{k}": round(recall_at(rs, k), 4) for k in K_EVAL},
                    "MRR": round(sum(1 / r for r in rs if r) / max(1, len(rs)), 4)}
    return out


# ---------------------------------------------------------------- fitting

def _standardise(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


def fit(questions: list[dict[str, Any]], loss: str, l2: float,
        mask: np.ndarray) -> tuple[np.ndarray, float]:
    """(weights over FEATURES, bias) of a linear model on the unmasked features, the
    standardisation folded in. Questions without an evidence candidate teach nothing."""
    from scipy.optimize import minimize

    train = [q for q in questions if q["y"].any()]
    X_all = np.vstack([q["X"] for q in train])[:, mask]
    mean, scale = _standardise(X_all)
    Xs = [(q["X"][:, mask] - mean) / scale for q in train]
    qw = np.array([q["w"] for q in train], dtype=np.float64)
    qw = qw / qw.mean()  # the questions' weights (--weighting), mean 1
    d = int(mask.sum())
    if loss == "pointwise":
        X = np.vstack(Xs)
        y = np.concatenate([q["y"] for q in train])
        rw = np.concatenate([np.full(len(q["y"]), w) for q, w in zip(train, qw, strict=True)])
        pos_w = (len(y) - y.sum()) / max(1.0, y.sum())  # balance the classes

        def f(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w, b = theta[:d], theta[d]
            z = X @ w + b
            p = 1 / (1 + np.exp(-z))
            wt = np.where(y > 0, pos_w, 1.0) * rw
            nll = -np.sum(wt * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))
            g = wt * (p - y)
            n = wt.sum()
            return (nll / n + 0.5 * l2 * w @ w / len(train),
                    np.append(X.T @ g / n + l2 * w / len(train), g.sum() / n))
    else:
        targets = [q["y"] / q["y"].sum() for q in train]

        def f(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w = theta[:d]
            total, grad = 0.0, np.zeros(d)
            for Xq, t, wq in zip(Xs, targets, qw, strict=True):
                z = Xq @ w
                z = z - z.max()
                p = np.exp(z)
                p /= p.sum()
                total -= wq * float(t @ np.log(p + 1e-12))
                grad += wq * (Xq.T @ (p - t))
            n = len(train)
            return (total / n + 0.5 * l2 * w @ w / n,
                    np.append(grad / n + l2 * w / n, 0.0))

    res = minimize(f, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                   options={"maxiter": 500})
    w_std, b_std = res.x[:d], float(res.x[d])
    w = w_std / scale
    b = b_std - float(w @ mean)
    full = np.zeros(len(fusion.FEATURES))
    full[mask] = w
    return full, b


def model_of(weights: np.ndarray, bias: float, meta: dict[str, Any]) -> fusion.FusionModel:
    return fusion.FusionModel.from_dict({
        "kind": "linear", "bias": bias,
        "weights": {n: float(w) for n, w in zip(fusion.FEATURES, weights, strict=True)
                    if w != 0.0}, **meta})


def cross_validate(questions: list[dict[str, Any]], loss: str, l2: float,
                   mask: np.ndarray, cfg: domain.RecallConfig) -> list[int | None]:
    """Leave one group (a conversation, or a synthetic fold) out: each group's ranks in
    recall_pipeline with the model fitted on the others."""
    convs = sorted({q["group"] for q in questions})
    ranks: dict[str, int | None] = {}
    for conv in convs:
        train = [q for q in questions if q["group"] != conv]
        test = [q for q in questions if q["group"] == conv]
        w, b = fit(train, loss, l2, mask)
        model = model_of(w, b, {})
        for q, r in zip(test, pipeline_ranks(test, cfg, model), strict=True):
            ranks[q["qid"]] = r
    return [ranks[q["qid"]] for q in questions]


def weigh(questions: list[dict[str, Any]], weighting: str,
          scales: Sequence[tuple[list[dict[str, Any]], float]] = ()) -> None:
    """Each question's weight in the loss: `equal`, every corpus the same total weight;
    `questions`, 1 each; then x the scale of the pools file it came from (`scales`: its
    questions and --pool-weights' number). Questions without an evidence candidate are not
    counted."""
    counts: dict[str, int] = {}
    for q in questions:
        counts[q["corpus"]] = counts.get(q["corpus"], 0) + int(bool(q["y"].any()))
    for q in questions:
        q["w"] = 1.0 if weighting == "questions" else 1.0 / max(1, counts[q["corpus"]])
    for qs, scale in scales:
        for q in qs:
            q["w"] *= scale


def by_corpus(questions: list[dict[str, Any]], ranks: Sequence[int | None]) -> dict[str, Any]:
    """summary() of each corpus's answerable questions (as bench.quality counts them: the
    synthetic never_said questions have no evidence), and the corpora's mean R@1 / R@10."""
    out: dict[str, Any] = {}
    for name in sorted({q["corpus"] for q in questions}):
        pairs = [(q, r) for q, r in zip(questions, ranks, strict=True)
                 if q["corpus"] == name and q["answerable"]]
        out[name] = summary([q for q, _ in pairs], [r for _, r in pairs])
    out["mean of corpora"] = {k: round(float(np.mean([out[c]["all"][k] for c in out])), 4)
                              for k in ("R@1", "R@10", "MRR")}
    return out


def joint_grid(questions: list[dict[str, Any]], mask: np.ndarray, loss: str,
               cfg: domain.RecallConfig) -> dict[str, Any]:
    """Leave-one-group-out over every corpus, for each weighting and L2 (JOINT_L2_GRID);
    rrf on the same pools first."""
    rows: dict[str, Any] = {"rrf (pipeline)": by_corpus(questions,
                                                        pipeline_ranks(questions, cfg, None))}
    print("rrf", rows["rrf (pipeline)"]["mean of corpora"], file=sys.stderr, flush=True)
    for weighting in WEIGHTINGS:
        weigh(questions, weighting)
        for l2 in JOINT_L2_GRID:
            name = f"{loss} {weighting} l2={l2}"
            rows[name] = by_corpus(questions, cross_validate(questions, loss, l2, mask, cfg))
            print(name, {c: (v["all"]["R@1"], v["all"]["R@10"]) if "all" in v else v
                         for c, v in rows[name].items()}, file=sys.stderr, flush=True)
    return rows


def grid(questions: list[dict[str, Any]], cfg: domain.RecallConfig) -> dict[str, Any]:
    rrf = pipeline_ranks(questions, cfg, None)
    rows: dict[str, Any] = {"rrf (pipeline)": summary(questions, rrf)}
    full = np.ones(len(fusion.FEATURES), dtype=bool)
    for loss in ("pointwise", "listwise"):
        for l2 in L2_GRID:
            name = f"{loss} l2={l2}"
            rows[name] = summary(questions, cross_validate(questions, loss, l2, full, cfg))
            print(name, rows[name]["all"], file=sys.stderr, flush=True)
    return rows


def members(name: str) -> tuple[str, ...]:
    """The features a --drop entry names: a group's (fusion.GROUPS), or one feature's."""
    return fusion.GROUPS.get(name, (name,))


def ablation(questions: list[dict[str, Any]], loss: str, l2: float,
             cfg: domain.RecallConfig, base: Sequence[str] = ()) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for group, names in fusion.GROUPS.items():
        mask = np.array([n not in names and not any(n in members(g) for g in base)
                         for n in fusion.FEATURES])
        ranks = cross_validate(questions, loss, l2, mask, cfg)
        rows[f"without {group}"] = summary(questions, ranks)
        print(group, rows[f"without {group}"]["all"], file=sys.stderr, flush=True)
    return rows


def heldout_table(dev: list[dict[str, Any]], held: list[dict[str, Any]], loss: str, l2: float,
                  cfg: domain.RecallConfig, base: Sequence[str]) -> dict[str, Any]:
    """The report's ablation table: the weighted RRF, the shipped configuration, and that
    configuration with each remaining feature group dropped, each model fitted on `dev` only
    and ranked by recall_pipeline on `held` (nothing is chosen here)."""
    rows: dict[str, Any] = {"rrf (pipeline)": summary(held, pipeline_ranks(held, cfg, None))}
    for group in ["", *(g for g in fusion.GROUPS if g not in base)]:
        dropped = {*base, group} - {""}
        mask = np.array([not any(n in members(g) for g in dropped)
                         for n in fusion.FEATURES])
        w, b = fit(dev, loss, l2, mask)
        name = "learned" if not group else f"learned without {group}"
        rows[name] = summary(held, pipeline_ranks(held, cfg, model_of(w, b, {})))
        print(name, rows[name]["all"], file=sys.stderr, flush=True)
    return rows


def config() -> domain.RecallConfig:
    from agent.config import load_settings

    return domain.RecallConfig.from_table(load_settings().recall)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", required=True, nargs="+",
                        help="bench.recall_pools output (JSONL); several: a joint fit")
    parser.add_argument("--pool-weights", default=None,
                        help="one weight per --pools file, comma-separated: each of its "
                        "questions' weight in the loss is multiplied by it (default 1 each)")
    parser.add_argument("--weighting", choices=WEIGHTINGS, default="questions",
                        help="equal: each corpus the same total weight; questions: 1 each")
    parser.add_argument("--joint-cv", action="store_true",
                        help="leave-one-group-out, L2 x weighting, per corpus")
    parser.add_argument("--cv", action="store_true", help="leave-one-conversation-out grid")
    parser.add_argument("--ablate", action="store_true", help="CV with each group dropped")
    parser.add_argument("--cv-one", action="store_true",
                        help="CV of the one model --loss, --l2 and --drop describe")
    parser.add_argument("--loss", choices=("pointwise", "listwise"), default="listwise")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--drop", default="", help="feature groups (or single features) left "
                        "out, comma-separated")
    parser.add_argument("--write", default=None, help="fit on every pool and write the model")
    parser.add_argument("--evaluate", default=None, help="a model file to score the pools with")
    parser.add_argument("--json", default=None, help="write the figures here")
    parser.add_argument("--heldout", default=None,
                        help="pools to report on: fit on --pools, rank these (--drop: the "
                        "shipped groups left out), with each further group dropped")
    args = parser.parse_args(argv)
    for path in [*args.pools, *filter(None, (args.heldout, args.evaluate))]:
        if not Path(path).is_file():  # a clear line, not a traceback
            parser.exit(2, f"{path}: no such file (pools come from `python -m bench "
                           "recall_pools`; a model file from --write)\n")
    cfg = config()
    try:
        scales = ([1.0] * len(args.pools) if args.pool_weights is None
                  else [float(x) for x in args.pool_weights.split(",")])
    except ValueError:
        scales = []
    if len(scales) != len(args.pools) or any(x < 0 for x in scales):
        parser.error(f"--pool-weights needs {len(args.pools)} numbers >= 0, one per --pools "
                     f"file (got {args.pool_weights!r})")
    by_file = [load(path) for path in args.pools]
    questions = [q for qs in by_file for q in qs]
    featurize(questions, cfg)
    weigh(questions, args.weighting, [(qs, x) for qs, x in zip(by_file, scales, strict=True)])
    drop = [g for g in args.drop.split(",") if g]
    unknown = sorted(set(drop) - set(fusion.GROUPS) - set(fusion.FEATURES))
    if unknown:
        parser.error(f"unknown feature group(s) {unknown}; known: {sorted(fusion.GROUPS)} "
                     "or one feature of them")
    mask = np.array([not any(n in members(g) for g in drop) for n in fusion.FEATURES])
    out: dict[str, Any] = {"pools": str(args.pools), "questions": len(questions),
                           "with_evidence_in_pool": sum(bool(q["y"].any()) for q in questions)}
    if args.cv:
        out["grid"] = grid(questions, cfg)
    if args.joint_cv:
        out["joint_grid"] = joint_grid(questions, mask, args.loss, cfg)
        weigh(questions, args.weighting, [(qs, x) for qs, x in zip(by_file, scales, strict=True)])
    if args.cv_one:
        out["cv_one"] = summary(questions, cross_validate(questions, args.loss, args.l2, mask, cfg))
    if args.ablate:
        out["ablation"] = ablation(questions, args.loss, args.l2, cfg, drop)
    if args.evaluate:
        from agent.services.memory.recall import load_fusion

        model = load_fusion(args.evaluate)
        out["evaluate"] = {"rrf (pipeline)": by_corpus(questions, pipeline_ranks(
                               questions, cfg, None)),
                           "learned (pipeline)": by_corpus(questions, pipeline_ranks(
                               questions, cfg, model))}
    if args.heldout:
        held = load(args.heldout)
        featurize(held, cfg)
        out["heldout"] = {"pools": args.heldout, "questions": len(held), "table": heldout_table(
            questions, held, args.loss, args.l2, cfg, drop)}
    if args.write:
        w, b = fit(questions, args.loss, args.l2, mask)
        corpora = sorted({q["corpus"] for q in questions})
        pools_doc = {"realtalk": "python -m bench recall_pools --data DIR --split dev "
                                 "(REALTALK Chat_1-5)",
                     "synth": "python -m bench recall_pools --corpus synth --seed 7",
                     "convo": "python -m bench recall_pools --corpus convo --seed 7"}
        meta = {"trained": {
            "command": "python -m bench fusion_train --pools " + " ".join(args.pools)
                       + (f" --pool-weights {args.pool_weights}" if args.pool_weights else "")
                       + f" --weighting {args.weighting} --loss {args.loss} --l2 {args.l2}"
                       + (f" --drop {args.drop}" if drop else "") + f" --write {args.write}",
            "pools": "; ".join([pools_doc.get(c, c) for c in corpora] + (
                ["the same with --swap-speakers (REALTALK Chat_1-5's questions naming the "
                 "other speaker)"] if any(q["slice"] == SWAPPED for q in questions)
                else [])),
            "date": dt.date.today().isoformat(), "loss": args.loss, "l2": args.l2,
            "weighting": args.weighting, "dropped_groups": drop,
            "questions": out["with_evidence_in_pool"]}}
        model = model_of(w, b, meta)
        Path(args.write).write_text(json.dumps({
            "kind": "linear", "bias": round(b, 6),
            "weights": {n: round(float(x), 6) for n, x in zip(fusion.FEATURES, w, strict=True)
                        if mask[fusion.FEATURES.index(n)]}, **meta}, indent=1) + "\n")
        out["written"] = {"file": args.write, "fit (dev, in-sample)": by_corpus(
            questions, pipeline_ranks(questions, cfg, model))}
    text = json.dumps(out, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
