"""Recall's candidate pools on REALTALK, dumped once per split, for fitting the learned fusion
offline (issue 39 item 2; agent/domain/fusion.py, bench/suites/fusion_train.py).

    python -m bench recall_pools --data DIR --split dev [--db DIR] [--out FILE]
    python -m bench recall_pools --corpus synth --seed 7    # bench.quality --quick's corpus
    python -m bench recall_pools --corpus convo --seed 7    # bench.quality --corpus convo --quick

`--corpus synth|convo` dumps the synthetic corpora bench.quality generates (the quick sizes:
600 synthetic turns; QUICK_CONVERSATIONS conversations), imported into a kept database
(default /tmp/cogd-<corpus>-seed<N>) and asked as bench.quality asks them (synth: everyone's
memories, an hour after the last turn; convo: the conversation's account, at its asked_at),
to /tmp/cogd-<corpus>-seed<N>-pools.jsonl. The synthetic corpus is one conversation, so each
of its questions carries a `fold` (its index mod SYNTH_FOLDS) that cross-validation groups by.

Imports the split's conversations through the live write path (bench.calibrate.import_corpus)
into an embedded database kept in `--db` (default /tmp/cogd-realtalk-<split>): a second run
finds the import done (a marker file) and only asks the questions again, in seconds to
minutes instead of the import's 10-25. Every question is asked as bench.quality asks it
(one day after the conversation, scoped to its account, k 20), but only the pipeline's
first step runs: Recaller.query_context and Recaller.candidates. Each candidate is written
with every field the fusion reads (content, ranks, similarities, coverage, speaker, role,
date, session, sources), and each question with its text, its context (window, people,
asks_current), its category, its slice and its evidence external ids. The file holds the
data set's words, so it is written outside the repository: one JSON object per line in
`--out` (default /tmp/cogd-realtalk-<split>-pools.jsonl), never committed.

`--swap-speakers` (REALTALK only) asks, on the same import, the questions that name one
speaker rewritten to name the other (bench/data/realtalk.py swap_speakers; issue 39 item
4), to /tmp/cogd-realtalk-<split>-swapped-pools.jsonl.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

MARKER = "realtalk-imported.json"
SYNTH_FOLDS = 3  # cross-validation folds of the one-conversation synthetic corpus


@contextlib.contextmanager
def kept_database(db_dir: Path, corpus: Any,
                  lines: Any = None) -> Iterator[tuple[Any, str, dict[str, Any]]]:
    """(settings, url, import report) of an embedded database in `db_dir` holding `corpus`:
    imported on the first call, reused afterwards (the marker file records the import).
    `lines`: what import_corpus reads (default: the corpus's turns, one account each)."""
    from agent.config import load_settings
    from agent.db.connect import resolve
    from agent.db.embedded import stop_server
    from agent.db.migrate import upgrade
    from bench.common import Lines, import_corpus

    db_dir.mkdir(parents=True, exist_ok=True)
    settings = load_settings(data_dir=db_dir)
    marker = db_dir / MARKER
    try:
        url = resolve(settings).url
        handles = sorted({getattr(t, "user", "") for t in corpus.turns})
        upgrade(url, settings)  # a kept database follows the schema's later revisions
        if marker.exists():
            report = json.loads(marker.read_text())
            if report.get("handles", handles) != handles:
                raise RuntimeError(f"{db_dir} holds conversations {report['handles']}, not "
                                   f"{handles}: give another --db")
        else:
            print(f"importing {len(corpus.turns)} turns into {db_dir}", flush=True)
            source = Lines(list(corpus.turns)) if lines is None else lines
            report = {**import_corpus(settings, url, source),
                      "handles": handles}
            marker.write_text(json.dumps(report))
        yield settings, url, report
    finally:
        stop_server(db_dir)


def candidate_row(c: Any) -> dict[str, Any]:
    """A Candidate's fields the fusion reads, JSON-ready."""
    return {
        "id": c.id, "kind": c.kind, "content": c.content,
        "created_at": None if c.created_at is None else c.created_at.isoformat(),
        "importance": c.importance, "similarity": c.similarity, "dense_rank": c.dense_rank,
        "sparse_rank": c.sparse_rank, "cortex_rank": c.cortex_rank, "bare_rank": c.bare_rank,
        "window_dense_rank": c.window_dense_rank, "window_sparse_rank": c.window_sparse_rank,
        "speaker": c.speaker, "role": c.role, "source_ids": list(c.source_ids),
        "external_ids": list(c.external_ids), "token_count": c.token_count,
        "goal_similarity": c.goal_similarity, "status": c.status, "coverage": c.coverage,
        "session_id": c.session_id, "bm25_score": c.bm25_score,
        "dense_similarity": c.dense_similarity, "bare_similarity": c.bare_similarity,
        "link_rank": c.link_rank, "link_next": c.link_next,
    }


def load_corpus(corpus: str, data_dir: str | None, split: str, seed: int,
                swap: bool = False) -> tuple[Any, Any]:
    """(corpus, what import_corpus reads; None: its turns) for `--corpus`; `swap`: REALTALK's
    swapped-speaker questions (swap_speakers) over the same turns."""
    if corpus == "synth":
        from bench.data.synth import generate as synth

        c = synth(n_turns=600, seed=seed)  # bench.quality --quick's size
        return c, c
    if corpus == "convo":
        from bench.data.convo import generate as convo
        from bench.suites.quality_convo import QUICK_CONVERSATIONS

        return convo(QUICK_CONVERSATIONS, seed=seed), None
    from bench.data.realtalk import load, swap_speakers
    from bench.suites.quality_realtalk import SPLITS

    found = load(data_dir, SPLITS[split])
    return (swap_speakers(found) if swap else found), None


def dump(data_dir: str | None, split: str, db_dir: Path, out: Path,
         corpus_name: str = "realtalk", seed: int = 7, swap: bool = False) -> dict[str, Any]:
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from bench.suites.quality import DEPTH

    started = time.perf_counter()
    corpus, lines = load_corpus(corpus_name, data_dir, split, seed, swap)
    synth = corpus_name == "synth"
    if synth:  # bench.quality asks the synthetic corpus an hour after its last turn
        synth_now = max(dt.datetime.fromisoformat(t.timestamp)
                        for t in corpus.turns) + dt.timedelta(hours=1)
    with kept_database(db_dir, corpus, lines) as (settings, url, report):
        recaller = Runtime(settings).recaller()
        recaller.compute_coverage = True  # a fusion feature, whatever lexical_weight is
        n = 0
        with connect(url, app="cogd-bench", autocommit=True) as conn, out.open("w") as fh:
            users = dict(conn.execute("SELECT handle, user_id FROM users").fetchall())
            for q in corpus.questions:
                if synth:
                    asked, uid = synth_now, None
                else:
                    asked = dt.datetime.fromisoformat(q.asked_at)
                    uid = users[q.conversation]
                ctx, names = recaller.query_context(q.text, asked)
                cands, people = recaller.candidates(conn, q.text, DEPTH, None, None, uid, ctx,
                                                    speaker_names=names)
                w = ctx.window
                fh.write(json.dumps({
                    "qid": q.id, "text": q.text, "corpus": corpus_name,
                    "conversation": "synth" if synth else q.conversation,
                    **({"fold": f"synth/{n % SYNTH_FOLDS}"} if synth else {}),
                    "category": q.category,
                    "slice": getattr(corpus, "slices", {}).get(q.id, "none or both"),
                    "evidence": list(q.evidence), "now": asked.isoformat(),
                    "window": None if w is None else [w.start.isoformat(), w.end.isoformat()],
                    "asks_current": ctx.asks_current, "people": sorted(people),
                    "candidates": [candidate_row(c) for c in cands]}) + "\n")
                n += 1
    return {"questions": n, "import": report, "seconds": round(time.perf_counter() - started, 1),
            "out": str(out)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None, help="REALTALK's Chat_*.json directory")
    parser.add_argument("--corpus", choices=("realtalk", "synth", "convo"), default="realtalk")
    parser.add_argument("--seed", type=int, default=7, help="synth / convo: the corpus seed")
    parser.add_argument("--split", choices=("dev", "heldout"), default="dev")
    parser.add_argument("--db", default=None, help="kept database dir (reused when imported)")
    parser.add_argument("--out", default=None, help="pools file (JSON lines)")
    parser.add_argument("--swap-speakers", action="store_true",
                        help="realtalk: the questions naming one speaker, rewritten to name "
                        "the other (issue 39 item 4), on the same import")
    args = parser.parse_args(argv)
    if args.swap_speakers and args.corpus != "realtalk":
        parser.error("--swap-speakers needs --corpus realtalk")
    if args.corpus == "realtalk":
        from bench.data.realtalk import DataMissing, data_dir

        try:  # as `python -m bench adjacent` does: a clear line, no traceback
            data_dir(args.data)
        except DataMissing as exc:
            parser.exit(2, f"{exc}\n")
    stem = (f"cogd-realtalk-{args.split}" if args.corpus == "realtalk"
            else f"cogd-{args.corpus}-seed{args.seed}")
    db = Path(args.db or f"/tmp/{stem}")
    out = Path(args.out or f"/tmp/{stem}{'-swapped' if args.swap_speakers else ''}-pools.jsonl")
    print(json.dumps(dump(args.data, args.split, db, out, args.corpus, args.seed,
                          args.swap_speakers)))


if __name__ == "__main__":
    main()
