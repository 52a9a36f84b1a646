"""Retrieval quality on the synthetic long conversation: cogd's recall pipeline vs baselines.

    python -m bench quality [--turns 2000] [--seed 7] [--quick]
    python -m bench quality --corpus convo [--seed 7] [--quick]   # bench/suites/quality_convo.py

Generates the synthetic conversation of bench/data/synth.py (2000 turns by default, 600 with
--quick), imports it through the live write path into a throwaway embedded database
(bench.calibrate.import_corpus), and runs every question through five retrievers against
that same database, each returning its top 20 day-table turns:

- **cogd**: `Runtime(settings).recaller().recall(conn, q, k=20, log=False)`, the loop's pipeline
  (dense | sparse | cortex, RRF, recency x importance, rerank when its model is present,
  verdict), asked just after the last turn of the conversation (`now` = last turn + 1 h);
- **cogd, recency off**: the same pipeline asked a year later, so that the (30-day half-life)
  recency term is ~0 for every turn (an ablation of the recency weight);
- **BM25**: Okapi BM25 (k1 1.2, b 0.75, Lucene's IDF) in Python over the imported turns,
  tokenised as agent/domain/lexical.terms does (stopwords out, crude 4-character stems)
  but keeping repeats for term frequency;
- **Postgres ts_rank_cd**: the full-text list the pipeline used before its BM25 lexicon
  (TS_RANK_CD below:
  an OR tsquery of the same terms as prefixes, ranked by ts_rank_cd). Postgres has no BM25;
- **dense**: one HNSW query on day_table.universal_embedding, the vector of the bare
  content (`recall_dense_day_table_bare`; the pipeline's contextual dense list is
  `recall_dense_day_table`);
- **hybrid RRF**: dense top 60 and BM25 top 60 fused by reciprocal rank (k = 60).

Per category: Recall@1/5/10/20 (a question counts at k when any evidence turn is among the
top-k items' sources; multi_hop also "all": every evidence turn in the top k), MRR over the
top 20, the share of questions judged no_match, and for `updated` the share where the new
statement ranks above the stale one. No-match precision / recall: positives are never_said +
never_said_hard; cogd predicts no_match from its query verdict; dense and hybrid from "best
cosine in the top 20 < the pipeline's weak_match_min_score"; BM25 and ts_rank_cd have no
calibrated score, so n/a.

Writes bench/results/quality-<date>.md and .json (quality-quick-<date> with --quick;
quality-seed<N>-<date> for a seed other than 7: seed 11 checks what seed 7 chose).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.reports import machine, pct, write_results

# the pre-BM25 sparse list (ts_rank_cd over an OR of prefix terms): a baseline now
TS_RANK_CD = """
SELECT d.entry_id, d.session_id, d.role, d.content, d.created_at, d.external_id,
       d.token_count, ts_rank_cd(d.content_tsv, q) AS rank
FROM day_table d, to_tsquery('simple', %(tsquery)s) q
WHERE d.content_tsv @@ q
ORDER BY rank DESC, d.created_at DESC
LIMIT %(k)s
"""
K_LIST = (1, 5, 10, 20)
DEPTH = 20  # every retriever returns its top 20
POOL = 60  # per-list candidates for hybrid RRF (= the pipeline's 20 x rerank multiplier 3)
RRF_K = 60
NEVER = ("never_said", "never_said_hard")
SYSTEMS = ("cogd", "cogd_recency_off", "bm25", "ts_rank_cd", "dense", "hybrid")
LABELS = {"cogd": "cogd pipeline", "cogd_recency_off": "cogd, recency off",
          "bm25": "BM25 (Python)", "ts_rank_cd": "Postgres ts_rank_cd",
          "dense": "dense (HNSW)", "hybrid": "hybrid RRF (dense + BM25)"}


# ---------------------------------------------------------------- metrics (pure, unit-tested)

def first_rank(ranked: Sequence[Iterable[str]], wanted: Iterable[str]) -> int | None:
    """1-based rank of the first item whose sources include any wanted id, else None."""
    want = set(wanted)
    for n, sources in enumerate(ranked, 1):
        if want & set(sources):
            return n
    return None


def all_rank(ranked: Sequence[Iterable[str]], wanted: Iterable[str]) -> int | None:
    """1-based rank by which every wanted id has appeared, else None."""
    ranks = [first_rank(ranked, (w,)) for w in set(wanted)]
    if not ranks or any(r is None for r in ranks):
        return None
    return max(r for r in ranks if r is not None)


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """Share of questions whose evidence rank is <= k (None: not found)."""
    if not ranks:
        return 0.0
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mrr(ranks: Sequence[int | None]) -> float:
    """Mean reciprocal rank (0 for a question whose evidence was not returned)."""
    if not ranks:
        return 0.0
    return sum(1.0 / r for r in ranks if r) / len(ranks)


def ranks_above(new: int | None, stale: int | None) -> bool:
    """The new statement ranks above the stale one (a missing stale one counts as below)."""
    return new is not None and (stale is None or new < stale)


def no_match_scores(predicted: Sequence[bool], actual: Sequence[bool]) -> dict[str, Any]:
    """Precision and recall of predicting no_match (actual: the question is never-said)."""
    tp = sum(1 for p, a in zip(predicted, actual, strict=True) if p and a)
    fp = sum(1 for p, a in zip(predicted, actual, strict=True) if p and not a)
    fn = sum(1 for p, a in zip(predicted, actual, strict=True) if not p and a)
    return {"precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None,
            "tp": tp, "fp": fp, "fn": fn}


def rrf_fuse(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion of ranked id lists: sum of 1/(k + rank), best first."""
    score: dict[str, float] = {}
    for ranked in lists:
        for rank, key in enumerate(ranked, 1):
            score[key] = score.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda key: (-score[key], key))


def tokens(text: str) -> list[str]:
    """agent/domain/lexical.terms with repeats kept (BM25 needs term frequencies)."""
    from agent.domain import lexical
    from agent.domain.cjk import cjk_ngrams

    out: list[str] = []
    for w in lexical.WORD.findall(text.lower()):
        if w in lexical.STOPWORDS or (len(w) < 2 and not w.isdigit()) or cjk_ngrams(w):
            continue
        out.append(lexical.stem(w))
    out += cjk_ngrams(text).split()
    return out


@dataclass
class BM25:
    """Okapi BM25 over tokenised documents; IDF ln(1 + (N - df + 0.5) / (df + 0.5))."""

    docs: Sequence[Sequence[str]]
    k1: float = 1.2
    b: float = 0.75
    _tf: list[Counter[str]] = field(default_factory=list, init=False, repr=False)
    df: Counter[str] = field(default_factory=Counter, init=False, repr=False)
    _postings: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False)
    _avgdl: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        for i, doc in enumerate(self.docs):
            tf = Counter(doc)
            self._tf.append(tf)
            for term in tf:
                self.df[term] += 1
                self._postings.setdefault(term, []).append(i)
        self._avgdl = sum(len(d) for d in self.docs) / max(1, len(self.docs))

    def idf(self, term: str) -> float:
        n, df = len(self.docs), self.df.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """Score of every document that holds at least one query term (repeats count once)."""
        out: dict[int, float] = {}
        for term in dict.fromkeys(query):
            idf = self.idf(term)
            for i in self._postings.get(term, ()):
                tf = self._tf[i][term]
                norm = 1 - self.b + self.b * len(self.docs[i]) / (self._avgdl or 1.0)
                out[i] = out.get(i, 0.0) + idf * tf * (self.k1 + 1) / (tf + self.k1 * norm)
        return out

    def top(self, query: Sequence[str], n: int) -> list[tuple[int, float]]:
        """The n best documents, ties by index (earlier first)."""
        ranked = sorted(self.scores(query).items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:n]


# ---------------------------------------------------------------- retrieval runs

@dataclass
class Hit:
    external: tuple[str, ...]
    similarity: float | None


def _ext(value: Any) -> tuple[str, ...]:
    return (str(value),) if value else ()


def run_systems(
    settings: Any, url: str, corpus: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every question through every retriever: per question, each system's top 20."""
    from agent.db.connect import connect
    from agent.db.queries import query, vector_text
    from agent.domain import lexical
    from agent.domain.lexical import tsquery_text
    from agent.providers.rerank import reranker_status
    from agent.runtime import Runtime

    recaller = Runtime(settings).recaller()
    weak = float(recaller.cfg.weak_match_min_score)
    last = max(dt.datetime.fromisoformat(t.timestamp) for t in corpus.turns)
    now_end, now_late = last + dt.timedelta(hours=1), last + dt.timedelta(days=365)
    rows: list[dict[str, Any]] = []
    timing: dict[str, float] = dict.fromkeys(SYSTEMS, 0.0)
    with connect(url, app="cogd-bench", autocommit=True) as conn:
        docs = conn.execute(
            "SELECT entry_id, external_id, content FROM day_table ORDER BY created_at, entry_id"
        ).fetchall()
        ext_of = {str(eid): _ext(x) for eid, x, _ in docs}
        bm25 = BM25([tokens(c) for _, _, c in docs])
        tables = {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                  for t in ("day_table", "memories", "holographic_blocks")}
        for q in corpus.questions:
            got: dict[str, list[Hit]] = {}
            verdict: dict[str, str | None] = {}
            for name, now in (("cogd", now_end), ("cogd_recency_off", now_late)):
                t0 = time.perf_counter()
                out = recaller.recall(conn, q.text, k=DEPTH, log=False, now=now)
                timing[name] += time.perf_counter() - t0
                got[name] = [Hit(tuple(i.external_ids), i.similarity) for i in out.result.items]
                verdict[name] = out.result.verdict

            t0 = time.perf_counter()
            qvec = vector_text(recaller.embedder.embed_query(q.text))
            dense = conn.execute(query("recall_dense_day_table_bare"),
                                 {"query": qvec, "k": DEPTH, "user_id": None,
                                  "judge": qvec, "goal": None}).fetchall()
            got["dense"] = [Hit(_ext(r[5]), 1 - float(r[7])) for r in dense]
            timing["dense"] += time.perf_counter() - t0

            t0 = time.perf_counter()
            top = bm25.top(lexical.terms(q.text), POOL)
            got["bm25"] = [Hit(_ext(docs[i][1]), None) for i, _ in top[:DEPTH]]
            timing["bm25"] += time.perf_counter() - t0

            t0 = time.perf_counter()
            ts = tsquery_text(lexical.terms(q.text))
            sparse = (conn.execute(TS_RANK_CD,
                                   {"tsquery": ts, "k": DEPTH, "user_id": None}).fetchall()
                      if ts else [])
            got["ts_rank_cd"] = [Hit(_ext(r[5]), None) for r in sparse]
            timing["ts_rank_cd"] += time.perf_counter() - t0

            t0 = time.perf_counter()
            pool = conn.execute(query("recall_dense_day_table_bare"),
                                {"query": qvec, "k": POOL, "user_id": None, "judge": qvec,
                                 "goal": None}).fetchall()
            fused = rrf_fuse([[str(r[0]) for r in pool], [str(docs[i][0]) for i, _ in top]])
            fused = fused[:DEPTH]
            sims = {str(rid): float(sim) for rid, sim in conn.execute(
                "SELECT entry_id, 1 - (universal_embedding <=> %s::vector) FROM day_table "
                "WHERE entry_id = ANY(%s)", (qvec, fused))}
            got["hybrid"] = [Hit(ext_of.get(rid, ()), sims.get(rid)) for rid in fused]
            timing["hybrid"] += time.perf_counter() - t0  # + the dense embed and BM25 above

            for name in ("dense", "hybrid"):
                best = max((h.similarity for h in got[name] if h.similarity is not None),
                           default=None)
                verdict[name] = "no_match" if best is None or best < weak else "match"
            verdict["bm25"] = verdict["ts_rank_cd"] = None
            rows.append(question_row(q, got, verdict))
    info = {"weak_match_min_score": weak,
            "strong_match_min_score": float(recaller.cfg.strong_match_min_score),
            "lexical_weight": float(recaller.cfg.lexical_weight),
            "rrf_k": int(recaller.cfg.rrf_k), "reranker": reranker_status(settings),
            "now_cogd": now_end.isoformat(), "now_recency_off": now_late.isoformat(),
            "tables": tables, "bm25_vocabulary": len(bm25.df),
            "seconds": {k: round(v, 2) for k, v in timing.items()}}
    return rows, info


def question_row(q: Any, got: Mapping[str, list[Hit]],
                 verdict: Mapping[str, str | None]) -> dict[str, Any]:
    per: dict[str, Any] = {}
    for name, hits in got.items():
        ranked = [h.external for h in hits]
        sims = [h.similarity for h in hits if h.similarity is not None]
        per[name] = {
            "first": first_rank(ranked, q.evidence),
            "all": all_rank(ranked, q.evidence),
            "stale": first_rank(ranked, q.stale) if q.stale else None,
            "verdict": verdict.get(name),
            "best_similarity": round(max(sims), 4) if sims else None,
            "top": [list(h.external) for h in hits[:5]],
        }
    return {"id": q.id, "category": q.category, "text": q.text, "evidence": list(q.evidence),
            "stale": list(q.stale), "systems": per}


# ---------------------------------------------------------------- aggregation

def summarise(rows: list[dict[str, Any]], systems: Sequence[str] = SYSTEMS,
              never: Sequence[str] = NEVER,
              stale_cats: Sequence[str] = ("updated",)) -> dict[str, Any]:
    """Per system: per-category R@k / MRR, answerable R@k / MRR, no-match precision/recall.

    `never`: the categories with nothing to find; `stale_cats`: the categories whose `stale`
    turns should rank below the evidence (`new_above_stale`)."""
    cats = [c for c in dict.fromkeys(r["category"] for r in rows)]
    out: dict[str, Any] = {}
    for name in systems:
        per_cat: dict[str, Any] = {}
        for cat in cats:
            sub = [r["systems"][name] for r in rows if r["category"] == cat]
            first = [s["first"] for s in sub]
            entry: dict[str, Any] = {"n": len(sub)}
            if cat not in never:
                entry.update({f"R@{k}": round(recall_at(first, k), 4) for k in K_LIST})
                entry["MRR"] = round(mrr(first), 4)
            if cat == "multi_hop":
                entry.update({f"R@{k}_all": round(recall_at([s["all"] for s in sub], k), 4)
                              for k in K_LIST})
            if cat in stale_cats:
                above = [ranks_above(s["first"], s["stale"]) for s in sub]
                entry["new_above_stale"] = round(sum(above) / max(1, len(above)), 4)
                entry["both_found"] = sum(1 for s in sub if s["first"] and s["stale"])
            verdicts = [s["verdict"] for s in sub]
            entry["no_match_rate"] = (None if verdicts and verdicts[0] is None else
                                      round(sum(v == "no_match" for v in verdicts)
                                            / max(1, len(verdicts)), 4))
            per_cat[cat] = entry
        answerable = [r["systems"][name]["first"] for r in rows if r["category"] not in never]
        overall = {f"R@{k}": round(recall_at(answerable, k), 4) for k in K_LIST}
        overall["MRR"] = round(mrr(answerable), 4)
        overall["n"] = len(answerable)
        has_verdict = rows[0]["systems"][name]["verdict"] is not None if rows else False
        nm: dict[str, Any] | None = None
        if has_verdict:
            nm = no_match_scores([r["systems"][name]["verdict"] == "no_match" for r in rows],
                                 [r["category"] in never for r in rows])
            nm = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in nm.items()}
        out[name] = {"categories": per_cat, "answerable": overall, "no_match": nm}
    return out


def losses(rows: list[dict[str, Any]], k: int = 10) -> list[dict[str, Any]]:
    """Answerable questions where cogd misses the evidence in its top k and a baseline has it."""
    out = []
    for r in rows:
        if r["category"] in NEVER:
            continue
        c = r["systems"]["cogd"]["first"]
        if c is not None and c <= k:
            continue
        winners = {n: r["systems"][n]["first"] for n in ("bm25", "dense", "hybrid", "ts_rank_cd")
                   if (r["systems"][n]["first"] or 99) <= k}
        if winners:
            out.append({"id": r["id"], "category": r["category"], "text": r["text"],
                        "cogd_rank": c, "baseline_ranks": winners})
    return out


# ---------------------------------------------------------------- report


def markdown(data: dict[str, Any]) -> str:
    m, s, info = data["machine"], data["summary"], data["info"]
    cmd = "python -m bench quality" + (" --quick" if data["quick"] else
                                      f" --turns {data['turns']}") + f" --seed {data['seed']}"
    cats = list(s["cogd"]["categories"])
    answer_cats = [c for c in cats if c not in NEVER]
    lines = [
        f"# Retrieval quality, {data['date']}", "",
        f"`{cmd}` on {m['cpus']} CPUs ({m['processor']}), Python {m['python']}; wall time "
        f"{data['wall_s']} s. Corpus: {data['turns']} synthetic turns (seed {data['seed']}), "
        f"{data['import']['inserted']} imported through the live write path in "
        f"{data['import']['seconds']} s; {data['questions']} questions; tables at query time "
        f"{info['tables']}.", "",
        f"Pipeline config: lexical_weight {info['lexical_weight']}, weak_match_min_score "
        f"{info['weak_match_min_score']}, strong_match_min_score "
        f"{info['strong_match_min_score']}, rrf_k {info['rrf_k']}. Reranker: "
        f"{info['reranker']}. `cogd` asks at {info['now_cogd']} (1 h after the last turn); "
        f"`cogd, recency off` at {info['now_recency_off']}.", "",
        "Every system returns its top 20 turns. R@k: share of questions with an evidence turn "
        "in the top k; MRR over the top 20; multi_hop also \"all\" (both evidence turns in "
        "the top k). BM25 is Okapi BM25 (k1 1.2, b 0.75) in Python with lexical.terms "
        "tokenisation; ts_rank_cd is the pipeline's own sparse list alone (Postgres has no "
        "BM25); hybrid = RRF (k 60) of dense top 60 and BM25 top 60.", "",
        "## Recall@5 / Recall@10 per category", "",
        "| category | n | " + " | ".join(LABELS[n] for n in SYSTEMS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in SYSTEMS) + " |",
    ]
    for cat in answer_cats:
        n = s["cogd"]["categories"][cat]["n"]
        cells = [f"{pct(s[x]['categories'][cat]['R@5'])} / "
                 f"{pct(s[x]['categories'][cat]['R@10'])}" for x in SYSTEMS]
        lines.append(f"| {cat} | {n} | " + " | ".join(cells) + " |")
        if cat == "multi_hop":
            cells = [f"{pct(s[x]['categories'][cat]['R@5_all'])} / "
                     f"{pct(s[x]['categories'][cat]['R@10_all'])}" for x in SYSTEMS]
            lines.append(f"| multi_hop (all evidence) | {n} | " + " | ".join(cells) + " |")
    n_ans = s["cogd"]["answerable"]["n"]
    cells = [f"{pct(s[x]['answerable']['R@5'])} / {pct(s[x]['answerable']['R@10'])}"
             for x in SYSTEMS]
    lines.append(f"| **all answerable** | {n_ans} | " + " | ".join(cells) + " |")
    lines += ["", "## MRR per category", "",
              "| category | " + " | ".join(LABELS[n] for n in SYSTEMS) + " |",
              "| --- | " + " | ".join("---" for _ in SYSTEMS) + " |"]
    for cat in answer_cats:
        lines.append(f"| {cat} | " + " | ".join(
            f"{s[x]['categories'][cat]['MRR']:.3f}" for x in SYSTEMS) + " |")
    lines.append("| **all answerable** | " + " | ".join(
        f"{s[x]['answerable']['MRR']:.3f}" for x in SYSTEMS) + " |")
    lines += ["", "## Updated facts: the new statement ranks above the stale one", "",
              "| system | new above stale | both in top 20 |", "| --- | --- | --- |"]
    for x in SYSTEMS:
        u = s[x]["categories"].get("updated")
        if u:
            lines.append(f"| {LABELS[x]} | {pct(u['new_above_stale'])} | "
                         f"{u['both_found']} of {u['n']} |")
    lines += ["", "## No match (positives: never_said + never_said_hard)", "",
              "cogd: its query verdict is no_match. dense / hybrid: best cosine in the top 20 < "
              f"{info['weak_match_min_score']} (the pipeline's weak threshold). BM25 / "
              "ts_rank_cd: n/a (no calibrated score).", "",
              "| system | precision | recall | recall never_said | recall never_said_hard | "
              "false no_match on answerable |", "| --- | --- | --- | --- | --- | --- |"]
    for x in SYSTEMS:
        nm, cs = s[x]["no_match"], s[x]["categories"]
        if nm is None:
            lines.append(f"| {LABELS[x]} | n/a | n/a | n/a | n/a | n/a |")
            continue
        fp_n = sum(cs[c]["n"] for c in answer_cats)
        lines.append(
            f"| {LABELS[x]} | {pct(nm['precision'])} | {pct(nm['recall'])} "
            f"({nm['tp']}/{nm['tp'] + nm['fn']}) | {pct(cs['never_said']['no_match_rate'])} | "
            f"{pct(cs['never_said_hard']['no_match_rate'])} | {nm['fp']} of {fp_n} |")
    lines += ["", "## Full table per system", ""]
    for x in SYSTEMS:
        lines += [f"### {LABELS[x]}", "",
                  "| category | n | R@1 | R@5 | R@10 | R@20 | MRR | judged no_match |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for cat in cats:
            c = s[x]["categories"][cat]
            if cat in NEVER:
                lines.append(f"| {cat} | {c['n']} | - | - | - | - | - | "
                             f"{pct(c['no_match_rate'])} |")
                continue
            lines.append(f"| {cat} | {c['n']} | " + " | ".join(
                pct(c[f"R@{k}"]) for k in K_LIST) + f" | {c['MRR']:.3f} | "
                f"{pct(c['no_match_rate'])} |")
        lines.append("")
    lost = data["losses"]
    lines += ["## Where cogd misses the evidence in its top 10 and a baseline finds it", "",
              f"{len(lost)} question(s).", ""]
    if lost:
        lines += ["| question | category | cogd rank | baselines' ranks |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {x['text']} | {x['category']} | {x['cogd_rank'] or '> 20'} | "
                  + ", ".join(f"{LABELS[k]} {v}" for k, v in x["baseline_ranks"].items()) + " |"
                  for x in lost]
    lines += ["", f"Query time over all questions (s): {info['seconds']}. Per-question ranks "
              "are in the JSON file.", ""]
    return "\n".join(lines)


def run(turns: int, seed: int, quick: bool) -> dict[str, Any]:
    from bench.common import scratch_database
    from bench.data.synth import generate
    from bench.suites.calibrate import import_corpus

    started = time.perf_counter()
    corpus = generate(n_turns=turns, seed=seed)
    with scratch_database() as (settings, url):
        print(f"importing {turns} turns", flush=True)
        imported = import_corpus(settings, url, corpus)
        print(f"querying {len(corpus.questions)} questions x {len(SYSTEMS)} systems", flush=True)
        rows, info = run_systems(settings, url, corpus)
    return {"date": dt.date.today().isoformat(), "quick": quick, "turns": turns, "seed": seed,
            "machine": machine(), "import": imported, "questions": len(rows), "info": info,
            "summary": summarise(rows), "losses": losses(rows),
            "wall_s": round(time.perf_counter() - started, 1), "rows": rows}


def headline(data: dict[str, Any]) -> dict[str, Any]:
    """The few numbers bench/__main__.py puts in the summary."""
    s = data["summary"]
    out: dict[str, Any] = {}
    for x in ("cogd", "bm25", "dense", "hybrid"):
        a, nm = s[x]["answerable"], s[x]["no_match"]
        out[x] = {"R@5": a["R@5"], "R@10": a["R@10"], "MRR": a["MRR"],
                  "no_match_precision": nm["precision"] if nm else None,
                  "no_match_recall": nm["recall"] if nm else None}
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true",
                        help="600 turns (convo: 3 conversations)")
    parser.add_argument("--corpus", choices=("synth", "convo", "realtalk"), default="synth",
                        help="synth: bench/data/synth.py's one-user conversation (the default, "
                        "what `python -m bench all` summarises); convo: bench/data/convo.py's "
                        "dated two-speaker conversations (bench/suites/quality_convo.py; seed 7 "
                        "dev, seed 11 held out); realtalk: REALTALK's real conversations "
                        "(bench/suites/quality_realtalk.py; needs --data)")
    parser.add_argument("--data", default=None,
                        help="realtalk: the directory of REALTALK's Chat_*.json files "
                        "(default: $COGD_REALTALK_DIR)")
    parser.add_argument("--split", choices=("heldout", "dev", "all"), default="heldout",
                        help="realtalk: Chat_6-10 (held out, the report), Chat_1-5 (dev: "
                        "tune here) or all ten")
    parser.add_argument("--db", default=None,
                        help="realtalk: keep the imported database in this directory and "
                        "reuse it when it holds the split already (bench/suites/recall_pools.py)")
    parser.add_argument("--swap-speakers", action="store_true",
                        help="realtalk: ask only the questions that name one speaker, each "
                        "rewritten to name the other speaker, evidence unchanged (issue 39 "
                        "item 4: a wrong name must not hide what was said)")
    args = parser.parse_args(argv)
    if args.swap_speakers and args.corpus != "realtalk":
        parser.error("--swap-speakers needs --corpus realtalk")
    if args.corpus == "realtalk":
        from bench.data.realtalk import DataMissing, data_dir
        from bench.suites import quality_realtalk

        try:
            found = data_dir(args.data)
        except DataMissing as exc:
            parser.exit(2, f"{exc}\n")
        return quality_realtalk.main(str(found), args.split, args.db, args.swap_speakers)
    if args.corpus == "convo":
        from bench.suites import quality_convo

        return quality_convo.main(args.seed, args.quick)
    turns = 600 if args.quick else args.turns
    data = run(turns, args.seed, args.quick)
    name = "quality" if args.seed == 7 else f"quality-seed{args.seed}"  # 11: held out
    stem = write_results(name, data, markdown(data), quick=args.quick)
    data["files"] = [f"{stem.name}.md", f"{stem.name}.json"]
    return data


if __name__ == "__main__":
    main()
