"""Retrieval quality on bench/data/convo.py's dated two-speaker conversations: cogd vs baselines.

    python -m bench quality --corpus convo [--seed 7] [--quick]   # seed 11: held-out report

Generates the conversations of bench/data/convo.py (10, or 3 with --quick), imports their turns
through the live write path into a throwaway embedded database
(bench.calibrate.import_corpus), and asks every question within its own conversation (the
user the turns belong to), each system returning its top 20 turns:

- **cogd**: `Runtime(settings).recaller().recall(conn, q, k=20, log=False, now=asked_at,
  user_id=<the conversation's user>)`: the loop's pipeline, asked when the question is asked;
- **cogd ablations**: the same with RecallConfig fields overridden (ABLATIONS);
- **BM25**: Okapi BM25 (quality.BM25, lexical tokenisation) over the conversation's turns;
- **dense**: exact cosine of the universal embedder's query vector to every turn's;
- **hybrid RRF**: dense top 60 and BM25 top 60 fused by reciprocal rank (k 60);

each baseline three times: over the bare turn text, over the turn rendered with its date
and speaker, "(8 May 2023) Ana said, <content>" (the `_ctx` systems), and over cogd's own
contextual index text, which also quotes the turn a short reply answers (the `_idx`
systems: what cogd gains over these is its retrieval, not its rendering).

Per category: R@1/5/10/20 (any evidence turn in the top k; multi_hop also "all"), MRR; for
updated and adversarial the share where the evidence ranks above the `stale` turn (the older
statement; the other speaker's). No-match precision / recall (positives: never_said): cogd
from its query verdict, dense and hybrid from "best cosine < the pipeline's
weak_match_min_score", BM25 n/a. Then the best baseline per category and cogd's margin.

Writes bench/results/quality-convo-<date>.md and .json (quality-convo-quick-<date> with
--quick; quality-convo-seed<N>-<date> for a seed other than 7).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import time
from collections.abc import Sequence
from typing import Any

from bench.data.convo import CATEGORIES, ConvoCorpus, Turn, generate
from bench.reports import machine, pct, write_results
from bench.suites.quality import (
    BM25,
    DEPTH,
    K_LIST,
    POOL,
    Hit,
    question_row,
    rrf_fuse,
    summarise,
    tokens,
)

# RecallConfig field overrides, one cogd variant each (more as the pipeline gains parts)
ABLATIONS: dict[str, dict[str, Any]] = {
    "rrf fusion (before issue 39 item 2)": {"fusion": "rrf"},  # [recall] fusion
    "no dense": {"dense_list_weight": 0.0, "bare_list_weight": 0.0},
    "no contextual dense": {"dense_list_weight": 0.0},
    "no bare dense": {"bare_list_weight": 0.0},
    "no BM25": {"sparse_list_weight": 0.0},
    "no window lists": {"window_list_weight": 0.0},
    "no time boost": {"time_boost": 0.0},
    "no person boost": {"person_boost": 0.0, "person_mention_boost": 0.0},
    "said-by boost for every reply": {"person_boost_min_terms": 0},
    "person shift unbounded (before issue 39)": {"person_max_shift": -1},
    "no assistant weight": {"assistant_weight": 1.0},
    "no tie-breaks": {"tiebreak_weight": 0.0},
    "no current-state": {"current_state_weight": 0.0},
    "with heuristic fallback": {"heuristic_fallback": True},  # off by default: an addition
    "recency off": {"weight_recency": 0.0},
}
BASELINES = ("bm25", "bm25_ctx", "bm25_idx", "dense", "dense_ctx", "dense_idx", "hybrid",
             "hybrid_ctx", "hybrid_idx")
NEVER = ("never_said",)
STALE_CATS = ("updated", "adversarial")
LABELS = {"cogd": "cogd", "bm25": "BM25", "bm25_ctx": "BM25, ctx", "dense": "dense",
          "dense_ctx": "dense, ctx", "hybrid": "hybrid", "hybrid_ctx": "hybrid, ctx",
          "bm25_idx": "BM25, idx", "dense_idx": "dense, idx", "hybrid_idx": "hybrid, idx"}
QUICK_CONVERSATIONS = 3


def systems() -> list[str]:
    return ["cogd", *(f"cogd, {name}" for name in ABLATIONS), *BASELINES]


def label(name: str) -> str:
    return LABELS.get(name, name)


def index_texts(turns: Sequence[Turn], settings: Any) -> list[str]:
    """Each turn as cogd indexes it (agent/domain/contextual.py: speaker, date, and for a
    short reply the turn it answers): the `_idx` baselines get cogd's own index text, so
    what cogd gains over them is its retrieval, not its rendering."""
    from agent.domain.contextual import IndexConfig, Said, turn_text

    cfg = IndexConfig.from_table(settings.recall)
    last: dict[str, Said] = {}
    out = []
    for t in turns:
        said = Said(t.content, t.role, t.speaker, dt.datetime.fromisoformat(t.timestamp))
        out.append(turn_text(said, last.get(t.session), cfg))
        last[t.session] = said
    return out


def render(turn: Turn) -> str:
    """The turn as a reader sees it in context: "(8 May 2023) Ana said, <content>"."""
    d = dt.datetime.fromisoformat(turn.timestamp)
    return f"({d.day} {d:%B} {d.year}) {turn.speaker} said, {turn.content}"


def ablated(recaller: Any, overrides: dict[str, Any]) -> Any:
    """A copy of `recaller` whose RecallConfig has `overrides`; unknown fields are refused."""
    known = {f.name for f in dataclasses.fields(recaller.cfg)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"unknown RecallConfig field(s) {unknown}; known: {sorted(known)}")
    out = copy.copy(recaller)
    out.cfg = dataclasses.replace(recaller.cfg, **overrides)
    return out



# ---------------------------------------------------------------- retrieval runs

def run_systems(settings: Any, url: str, corpus: ConvoCorpus,
                ablations: dict[str, dict[str, Any]] | None = None,
                ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every question through every system, within its conversation (`ablations`: the cogd
    variants, ABLATIONS by default)."""
    import numpy as np

    from agent.db.connect import connect
    from agent.providers.factory import build_universal_embedder
    from agent.providers.rerank import reranker_status
    from agent.runtime import Runtime

    recaller = Runtime(settings).recaller()
    ablations = ABLATIONS if ablations is None else ablations
    variants = {"cogd": recaller} | {f"cogd, {name}": ablated(recaller, o)
                                     for name, o in ablations.items()}
    weak = float(recaller.cfg.weak_match_min_score)
    embedder = build_universal_embedder(settings)
    timing = dict.fromkeys([*variants, *BASELINES, "embed_turns"], 0.0)
    t0 = time.perf_counter()
    texts = {"": [t.content for t in corpus.turns], "_ctx": [render(t) for t in corpus.turns],
             "_idx": index_texts(corpus.turns, settings)}
    vecs = {}
    for suffix, docs in texts.items():
        m = np.asarray(embedder.embed_documents(docs), dtype=np.float32)
        vecs[suffix] = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    timing["embed_turns"] = time.perf_counter() - t0
    rows: list[dict[str, Any]] = []
    stored: dict[str, int] = {}
    with connect(url, app="cogd-bench", autocommit=True) as conn:
        for conv in corpus.conversations:
            found = conn.execute(
                "SELECT u.user_id, count(d.entry_id) FROM users u LEFT JOIN day_table d "
                "USING (user_id) WHERE u.handle = %s GROUP BY u.user_id", (conv.handle,)
            ).fetchone()
            if found is None:
                raise RuntimeError(f"no user {conv.handle!r} after the import")
            uid, stored[conv.handle] = found[0], int(found[1])
            idx = [i for i, t in enumerate(corpus.turns) if t.user == conv.handle]
            ext = [corpus.turns[i].external_id for i in idx]
            bm = {s: BM25([tokens(texts[s][i]) for i in idx]) for s in texts}
            mat = {s: vecs[s][idx] for s in texts}
            for q in (q for q in corpus.questions if q.conversation == conv.handle):
                got: dict[str, list[Hit]] = {}
                verdict: dict[str, str | None] = {}
                asked = dt.datetime.fromisoformat(q.asked_at)
                for name, rec in variants.items():
                    t0 = time.perf_counter()
                    out = rec.recall(conn, q.text, k=DEPTH, log=False, now=asked, user_id=uid)
                    timing[name] += time.perf_counter() - t0
                    got[name] = [Hit(tuple(i.external_ids), i.similarity)
                                 for i in out.result.items]
                    verdict[name] = out.result.verdict
                t0 = time.perf_counter()
                qv = np.asarray(embedder.embed_query(q.text), dtype=np.float32)
                qv /= max(float(np.linalg.norm(qv)), 1e-12)
                qterms = tokens(q.text)
                embed_s = time.perf_counter() - t0
                for s in texts:
                    t0 = time.perf_counter()
                    sims = mat[s] @ qv
                    dense = [int(i) for i in np.argsort(-sims, kind="stable")[:POOL]]
                    got["dense" + s] = [Hit((ext[i],), float(sims[i])) for i in dense[:DEPTH]]
                    timing["dense" + s] += time.perf_counter() - t0 + embed_s
                    t0 = time.perf_counter()
                    top = bm[s].top(qterms, POOL)
                    got["bm25" + s] = [Hit((ext[i],), None) for i, _ in top[:DEPTH]]
                    timing["bm25" + s] += time.perf_counter() - t0
                    t0 = time.perf_counter()
                    fused = rrf_fuse([[f"{i:06d}" for i in dense],
                                      [f"{i:06d}" for i, _ in top]])[:DEPTH]
                    got["hybrid" + s] = [Hit((ext[int(k)],), float(sims[int(k)]))
                                         for k in fused]
                    timing["hybrid" + s] += time.perf_counter() - t0  # + dense and BM25
                    for name in ("dense" + s, "hybrid" + s):
                        best = max((h.similarity or 0.0 for h in got[name]), default=0.0)
                        verdict[name] = "no_match" if best < weak else "match"
                    verdict["bm25" + s] = None
                row = question_row(q, got, verdict)
                row.update(conversation=q.conversation, about=q.about, answer=q.answer,
                           window=q.window, asked_at=q.asked_at)
                rows.append(row)
    info = {"weak_match_min_score": weak,
            "strong_match_min_score": float(recaller.cfg.strong_match_min_score),
            "lexical_weight": float(recaller.cfg.lexical_weight),
            "recency_half_life_days": float(recaller.cfg.recency_half_life_days),
            "weight_recency": float(recaller.cfg.weight_recency),
            "rrf_k": int(recaller.cfg.rrf_k), "reranker": reranker_status(settings),
            "ablations": ablations, "stored_turns": stored,
            "seconds": {k: round(v, 2) for k, v in timing.items()}}
    return rows, info


# ---------------------------------------------------------------- aggregation (pure)

def compare(summary: dict[str, Any], baselines: Sequence[str] = BASELINES,
            k: int = 10) -> dict[str, Any]:
    """Best baseline per category and overall (by R@k, then MRR) and cogd's margin over it."""
    out: dict[str, Any] = {}
    cats = [c for c in summary["cogd"]["categories"] if c not in NEVER]
    for cat in [*cats, "answerable"]:
        def entry(name: str, cat: str = cat) -> dict[str, Any]:
            s = summary[name]
            return s["answerable"] if cat == "answerable" else s["categories"][cat]
        best = max(baselines, key=lambda b: (entry(b)[f"R@{k}"], entry(b)["MRR"]))
        cogd, top = entry("cogd"), entry(best)
        out[cat] = {"best": best, f"best_R@{k}": top[f"R@{k}"], "best_MRR": top["MRR"],
                    f"cogd_R@{k}": cogd[f"R@{k}"], "cogd_MRR": cogd["MRR"],
                    "margin_R": round(cogd[f"R@{k}"] - top[f"R@{k}"], 4),
                    "margin_MRR": round(cogd["MRR"] - top["MRR"], 4)}
    return out


def losses(rows: list[dict[str, Any]], k: int = 10) -> dict[str, int]:
    """Per category: questions where cogd misses the evidence in its top k and a baseline
    has it."""
    out: dict[str, int] = {}
    for r in rows:
        if r["category"] in NEVER:
            continue
        c = r["systems"]["cogd"]["first"]
        if (c is None or c > k) and any((r["systems"][b]["first"] or 99) <= k
                                        for b in BASELINES):
            out[r["category"]] = out.get(r["category"], 0) + 1
    return out


def aggregate(rows: list[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    summary = summarise(rows, names, NEVER, STALE_CATS)
    return {"summary": summary, "compare": compare(summary), "losses": losses(rows)}


# ---------------------------------------------------------------- report

def _cell(c: dict[str, Any], key: str) -> str:
    return pct(c.get(key)) if key in c else "-"


def full_tables(s: dict[str, Any], names: Sequence[str], cats: Sequence[str]) -> list[str]:
    """Per system: R@1/5/10/20 and MRR per category."""
    lines: list[str] = []
    for x in names:
        lines += [f"### {label(x)}", "", "| category | n | R@1 | R@5 | R@10 | R@20 | MRR |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for cat in cats:
            c = s[x]["categories"][cat]
            lines.append(f"| {cat} | {c['n']} | " + " | ".join(
                pct(c[f"R@{k}"]) for k in K_LIST) + f" | {c['MRR']:.3f} |")
        lines.append("")
    return lines


def markdown(data: dict[str, Any]) -> str:
    m, s, info, cmp_ = data["machine"], data["summary"], data["info"], data["compare"]
    names = data["systems"]
    cats = [c for c in CATEGORIES if c in s["cogd"]["categories"]]
    answer_cats = [c for c in cats if c not in NEVER]
    head = "| category | n | " + " | ".join(label(x) for x in names) + " |"
    rule = "| --- | --- | " + " | ".join("---" for _ in names) + " |"
    cmd = f"python -m bench quality --corpus convo --seed {data['seed']}" + (
        " --quick" if data["quick"] else "")
    lines = [
        f"# Retrieval quality on dated two-speaker conversations, {data['date']}", "",
        f"`{cmd}` on {m['cpus']} CPUs ({m['processor']}), Python {m['python']}; wall time "
        f"{data['wall_s']} s. Corpus `bench/data/convo.py` seed {data['seed']} "
        f"({'dev / tuning' if data['seed'] == 7 else 'held out' if data['seed'] == 11 else 'other'}"
        f"): {data['conversations']} conversations, {data['turns']} turns, "
        f"{data['questions']} questions {data['counts']}; {data['import']['inserted']} turns "
        f"imported through the live write path in {data['import']['seconds']} s.", "",
        f"Pipeline: lexical_weight {info['lexical_weight']}, weak / strong match "
        f"{info['weak_match_min_score']} / {info['strong_match_min_score']}, rrf_k "
        f"{info['rrf_k']}, recency weight {info['weight_recency']} (half-life "
        f"{info['recency_half_life_days']} days), reranker: {info['reranker']}. Asked at each "
        "question's `asked_at` (1-4 days after the conversation's last session), scoped to "
        "the conversation's user.", "",
        "Every system returns its top 20 turns of the conversation. `ctx`: the baseline "
        "indexes \"(8 May 2023) Ana said, <content>\" instead of the bare content. R@k: an "
        "evidence turn in the top k; multi_hop (all): every evidence turn in the top k.", "",
        "## Recall@5 / Recall@10", "", head, rule,
    ]

    def add_rows(key_a: str, key_b: str, cat: str, title: str) -> None:
        c = {x: s[x]["categories"][cat] for x in names}
        lines.append(f"| {title} | {c['cogd']['n']} | " + " | ".join(
            f"{_cell(c[x], key_a)} / {_cell(c[x], key_b)}" for x in names) + " |")

    for cat in answer_cats:
        add_rows("R@5", "R@10", cat, cat)
        if cat == "multi_hop":
            add_rows("R@5_all", "R@10_all", cat, "multi_hop (all evidence)")
    lines.append(f"| **all answerable** | {s['cogd']['answerable']['n']} | " + " | ".join(
        f"{pct(s[x]['answerable']['R@5'])} / {pct(s[x]['answerable']['R@10'])}"
        for x in names) + " |")
    lines += ["", "## MRR", "", head, rule]
    for cat in answer_cats:
        lines.append(f"| {cat} | {s['cogd']['categories'][cat]['n']} | " + " | ".join(
            f"{s[x]['categories'][cat]['MRR']:.3f}" for x in names) + " |")
    lines.append(f"| **all answerable** | {s['cogd']['answerable']['n']} | " + " | ".join(
        f"{s[x]['answerable']['MRR']:.3f}" for x in names) + " |")
    lines += ["", "## cogd against the best baseline (R@10, then MRR)", "",
              "| category | cogd R@10 | best baseline | its R@10 | margin (points) | cogd MRR | "
              "its MRR |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for cat, c in cmp_.items():
        lines.append(f"| {cat} | {pct(c['cogd_R@10'])} | {label(c['best'])} | "
                     f"{pct(c['best_R@10'])} | {100 * c['margin_R']:+.0f} | "
                     f"{c['cogd_MRR']:.3f} | {c['best_MRR']:.3f} |")
    lines += ["", "## Evidence above the stale turn", "",
              "updated: the new statement above the old one; adversarial: the named "
              "speaker's turn above the other speaker's.", "",
              "| system | updated | adversarial |", "| --- | --- | --- |"]
    for x in names:
        cs = s[x]["categories"]
        lines.append(f"| {label(x)} | " + " | ".join(
            pct(cs[c]["new_above_stale"]) if c in cs else "-" for c in STALE_CATS) + " |")
    lines += ["", "## No match (positives: never_said)", "",
              f"cogd: its query verdict. dense / hybrid: best cosine < "
              f"{info['weak_match_min_score']}. BM25: n/a.", "",
              "| system | precision | recall | false no_match on answerable |",
              "| --- | --- | --- | --- |"]
    for x in names:
        nm = s[x]["no_match"]
        lines.append(f"| {label(x)} | n/a | n/a | n/a |" if nm is None else
                     f"| {label(x)} | {pct(nm['precision'])} | {pct(nm['recall'])} "
                     f"({nm['tp']}/{nm['tp'] + nm['fn']}) | {nm['fp']} of "
                     f"{s[x]['answerable']['n']} |")
    lines += ["", "## Ablations of cogd", "",
              "| variant | RecallConfig overrides | answerable R@10 | MRR | " + " | ".join(
                  f"{c} R@10" for c in answer_cats) + " |",
              "| --- | --- | --- | --- | " + " | ".join("---" for _ in answer_cats) + " |"]
    for x in [n for n in names if n.startswith("cogd")]:
        over = ABLATIONS.get(x.removeprefix("cogd, "), {}) if x != "cogd" else {}
        a = s[x]["answerable"]
        lines.append(f"| {x} | {over or '-'} | {pct(a['R@10'])} | {a['MRR']:.3f} | "
                     + " | ".join(pct(s[x]["categories"][c]["R@10"]) for c in answer_cats)
                     + " |")
    lines += ["", "## Full tables", "", *full_tables(s, names, answer_cats)]
    lines += [f"Questions where cogd misses the evidence in its top 10 and a baseline has it, "
              f"per category: {data['losses']}.", "",
              f"Seconds: {info['seconds']} (dense includes the query embedding; hybrid only "
              "the fusion). Per-question ranks and top-5 turns are in the JSON file.", ""]
    return "\n".join(lines)


def run(seed: int, quick: bool) -> dict[str, Any]:
    from bench.common import Lines, import_corpus, scratch_database

    started = time.perf_counter()
    corpus = generate(QUICK_CONVERSATIONS if quick else 10, seed=seed)
    with scratch_database() as (settings, url):
        lines = Lines(list(corpus.turns))
        print(f"importing {len(corpus.turns)} turns", flush=True)
        imported = import_corpus(settings, url, lines)
        names = systems()
        print(f"querying {len(corpus.questions)} questions x {len(names)} systems", flush=True)
        rows, info = run_systems(settings, url, corpus)
    missing = {h: n for h, n in info["stored_turns"].items()
               if n != sum(t.user == h for t in corpus.turns)}
    if missing:
        raise RuntimeError(f"turns stored per conversation differ from the corpus: {missing}")
    return {"date": dt.date.today().isoformat(), "quick": quick, "seed": seed,
            "machine": machine(), "conversations": len(corpus.conversations),
            "turns": len(corpus.turns), "questions": len(rows), "counts": corpus.counts(),
            "import": imported, "systems": names, "info": info, **aggregate(rows, names),
            "wall_s": round(time.perf_counter() - started, 1), "rows": rows}


def main(seed: int = 7, quick: bool = False) -> dict[str, Any]:
    data = run(seed, quick)
    name = "quality-convo" if seed == 7 else f"quality-convo-seed{seed}"
    stem = write_results(name, data, markdown(data), quick=quick)
    data["files"] = [f"{stem.name}.md", f"{stem.name}.json"]
    return data
