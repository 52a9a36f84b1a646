"""Local provider figures: embedder throughput and latency, local LLM load time and tokens/s.

    python -m bench providers [--quick]

Writes bench/results/providers-<date>.md and .json and prints a summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.reports import percentile, write_results

SUBJECTS = ("the user", "my sister", "the new manager", "our neighbour", "the night cycle",
            "a colleague from Lyon", "the agent")
VERBS = ("prefers", "remembers", "forgot", "asked about", "complained about", "wants to learn",
         "wrote a note on")
OBJECTS = ("green tea in the morning", "the broken router in the hallway",
           "a trip to the mountains next spring", "how to reset a forgotten password",
           "the quarterly report that is due on Friday", "walking along the river at dusk",
           "the difference between HNSW and IVF indexes")


def sentences(n: int) -> list[str]:
    """Deterministic, varied English sentences of 6-20 words."""
    out = []
    for i in range(n):
        s, v, o = SUBJECTS[i % 7], VERBS[(i // 7) % 7], OBJECTS[(i // 49 + i) % 7]
        out.append(f"{s.capitalize()} {v} {o}" + (", again." if i % 3 else f" (sentence {i})."))
    return out


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def bench_embedder(quick: bool) -> dict[str, Any]:
    from agent.providers.local import LocalEmbedder

    start = time.perf_counter()
    emb = LocalEmbedder()
    emb.load()
    load_s = time.perf_counter() - start
    texts = sentences(1024 if not quick else 256)
    emb.embed_documents(texts[:64])  # warm-up
    single = timed(lambda: emb.embed_documents([texts[7]]), 100 if not quick else 30)
    batches = [texts[i : i + 32] for i in range(0, len(texts), 32)]
    it = iter(batches * 4)
    batch32 = timed(lambda: emb.embed_documents(next(it)), 30 if not quick else 8)
    start = time.perf_counter()
    emb.embed_documents(texts)
    bulk_s = time.perf_counter() - start
    short = [f"{SUBJECTS[i % 7].split()[-1]} {VERBS[i % 7].split()[0]}" for i in range(len(texts))]
    start = time.perf_counter()
    emb.embed_documents(short)
    short_s = time.perf_counter() - start
    return {
        "model_id": emb.model_id,
        "load_s": round(load_s, 3),
        "single_p50_ms": round(percentile(single, 50), 2),
        "single_p95_ms": round(percentile(single, 95), 2),
        "batch32_p50_ms": round(percentile(batch32, 50), 2),
        "batch32_p95_ms": round(percentile(batch32, 95), 2),
        "batch32_sentences_per_s": round(32 / (statistics.median(batch32) / 1000.0), 1),
        "bulk_sentences": len(texts),
        "bulk_sentences_per_s": round(len(texts) / bulk_s, 1),
        "mean_words": round(statistics.mean(len(t.split()) for t in texts), 1),
        "short_sentences_per_s": round(len(short) / short_s, 1),
    }


def bench_llm(quick: bool) -> dict[str, Any]:
    from agent.providers.local import LocalLLM

    llm = LocalLLM()
    start = time.perf_counter()
    llm.load()
    load_s = time.perf_counter() - start
    prompts = ["Summarise in one sentence: the user prefers green tea in the morning.",
               "Give three tips for sleeping better.",
               "What is a good name for a cat?"]
    runs = []
    for want_logprobs in (False, True):
        for prompt in prompts[: 1 if quick else 3]:
            msgs = [{"role": "user", "content": prompt}]
            t0 = time.perf_counter()
            r = llm.chat(msgs, temperature=0.0, max_tokens=64, want_logprobs=want_logprobs)
            wall = time.perf_counter() - t0
            runs.append({"logprobs": want_logprobs, "tokens_in": r.usage.tokens_in,
                         "tokens_out": r.usage.tokens_out, "wall_s": round(wall, 3)})
    out_tokens = sum(r["tokens_out"] for r in runs)
    wall = sum(r["wall_s"] for r in runs)
    return {
        "model": llm.model,
        "load_s": round(load_s, 3),
        "n_ctx": llm.n_ctx,
        "runs": runs,
        "tokens_per_s": round(out_tokens / wall, 1),
        "tokens_per_s_no_logprobs": round(
            sum(r["tokens_out"] for r in runs if not r["logprobs"])
            / sum(r["wall_s"] for r in runs if not r["logprobs"]), 1),
    }


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "machine": platform.machine(),
            "python": platform.python_version(), "system": platform.system()}


def markdown(data: dict[str, Any]) -> str:
    e, m = data["embedder"], data["llm"]
    return "\n".join([
        f"# Providers benchmark, {data['date']}",
        "",
        f"Machine: {data['machine']['cpus']} CPUs ({data['machine']['machine']}), "
        f"Python {data['machine']['python']}.",
        "",
        f"## Local embedder ({e['model_id']}, sentences of ~{e['mean_words']} words)",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| load (ONNX session + tokenizer) | {e['load_s']} s |",
        f"| single sentence p50 / p95 | {e['single_p50_ms']} / {e['single_p95_ms']} ms |",
        f"| batch of 32 p50 / p95 | {e['batch32_p50_ms']} / {e['batch32_p95_ms']} ms |",
        f"| throughput, batches of 32 | {e['batch32_sentences_per_s']} sentences/s |",
        f"| throughput, {e['bulk_sentences']} sentences in one call | "
        f"{e['bulk_sentences_per_s']} sentences/s |",
        f"| throughput, {e['bulk_sentences']} two-word texts in one call | "
        f"{e['short_sentences_per_s']} texts/s |",
        "",
        f"## Local LLM ({m['model']}, n_ctx {m['n_ctx']}, max_tokens 64, temperature 0)",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| load | {m['load_s']} s |",
        f"| output tokens/s end to end (prompt + generation), all runs | "
        f"{m['tokens_per_s']} |",
        f"| same, runs without logprobs | {m['tokens_per_s_no_logprobs']} |",
        "",
    ])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    data = {"date": dt.date.today().isoformat(), "machine": machine(),
            "embedder": bench_embedder(args.quick), "llm": bench_llm(args.quick)}
    write_results("providers", data, markdown(data), indent=2)


if __name__ == "__main__":
    main()
