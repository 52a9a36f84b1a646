"""Recall through the HTTP API next to recall in-process, in one run (issue 16).

    python -m bench api [--memories 10000] [--queries 200] [--cache DIR] [--quick]

Offline, in a throwaway embedded Postgres (bench/common.py): `memories` holds N
synthetic sentences with real embeddings (bench/suites/loop.py's load: every 10th row another
user's), then `cogd serve` runs as its own process and one bearer token is made for the
bench user. For each query, in turn (so the three paths share the machine's state):

- in-process: `Recaller.recall(conn, q, k=10, log=False, user_id=...)`, the pipeline alone;
- memory API: `MemoryAPI.recall(q, user=...)` in this process: what the HTTP route
  calls (user lookup, the recall log row, the JSON-ready payload);
- HTTP: `POST /v1/recall` over a kept-alive httpx connection to `cogd serve` on
  127.0.0.1 (token check, JSON both ways, uvicorn).

Client and server share the 2 cores. Writes bench/results/api-<date>.md and .json
(api-quick-<date> with --quick: 2,000 memories, 50 queries).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import scratch_database
from bench.reports import machine, write_results
from bench.suites.loop import stats

WARMUP = 5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(n_memories: int, n_queries: int, cache: Path | None, seed: int = 7) -> dict[str, Any]:
    import httpx

    from agent.db.connect import connect
    from agent.providers import factory
    from agent.runtime import Runtime
    from agent.services.access.tokens import create
    from agent.services.records.sessions import ensure_user
    from bench.suites import loop

    started = time.perf_counter()
    texts = loop.memory_sentences(n_memories, seed)
    queries = [q for _, q in loop.query_texts(n_queries + WARMUP, seed + 1)]
    data: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine(),
                            "memories": n_memories, "queries": n_queries, "seed": seed}
    with scratch_database() as (settings, url):
        loader = factory.build_universal_embedder(settings)
        with connect(url, app="cogd-bench", autocommit=True) as conn:
            with conn.transaction():
                uid = ensure_user(conn, "bench")
                owners = [str(uid)] + [str(ensure_user(conn, f"bench-other-{o}"))
                                       for o in range(loop.OTHER_USERS)]
            cache_file = None if cache is None else cache / f"loop-{seed}-0-{n_memories}.npy"
            data["load"] = loop.load_memories(conn, loader, texts, 0, cache_file, [],
                                              n_memories, owners)
            token = create(conn, uid, "bench", "bench.api", "bench")["token"]
        server, port = start_serve(settings, url)
        base = f"http://127.0.0.1:{port}"
        recaller = Runtime(settings).recaller()
        api = Runtime(settings).memory_api(url, "bench", channel="bench", app="cogd-bench-api")
        try:
            wait_until_serving(server, base)
            times: dict[str, list[float]] = {"in_process": [], "memory_api": [], "http": []}
            with connect(url, app="cogd-bench", autocommit=True) as conn, httpx.Client(
                    base_url=base, timeout=60,
                    headers={"Authorization": f"Bearer {token}"}) as http:
                for i, q in enumerate(queries):
                    t0 = time.perf_counter()
                    recaller.recall(conn, q, k=10, log=False, user_id=uid)
                    t1 = time.perf_counter()
                    api.recall(q, k=10)
                    t2 = time.perf_counter()
                    got = http.post("/v1/recall", json={"query": q, "k": 10})
                    t3 = time.perf_counter()
                    if got.status_code != 200:
                        raise RuntimeError(f"/v1/recall answered {got.status_code}: {got.text}")
                    if i >= WARMUP:
                        times["in_process"].append((t1 - t0) * 1000)
                        times["memory_api"].append((t2 - t1) * 1000)
                        times["http"].append((t3 - t2) * 1000)
        finally:
            api.close()
            server.terminate()
            server.wait(60)
    data["latency_ms"] = {k: stats(v) for k, v in times.items()}
    data["http_minus_memory_api_p50_ms"] = round(
        data["latency_ms"]["http"]["p50"] - data["latency_ms"]["memory_api"]["p50"], 2)
    data["wall_s"] = round(time.perf_counter() - started, 1)
    return data


def start_serve(settings: Any, url: str) -> tuple[subprocess.Popen[bytes], int]:
    """`cogd serve` as its own process on a free port of 127.0.0.1, over `url` (its
    stderr piped, for _wait's error)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGD_")}
    env.update(COGD_DATABASE_URL=url, COGD_DATA_DIR=str(settings.data_dir))
    cogd = str(Path(sys.executable).with_name("cogd"))
    return subprocess.Popen([cogd, "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), port


def wait_until_serving(server: subprocess.Popen[bytes], base: str, timeout_s: float = 180) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode(errors="replace") if server.stderr else ""
            raise RuntimeError(f"cogd serve exited {server.returncode}: {err[-2000:]}")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("cogd serve did not start")


def markdown(data: dict[str, Any]) -> str:
    lat = data["latency_ms"]
    rows = [f"| {name} | {s['p50']} | {s['p95']} | {s['mean']} | {s['max']} |"
            for name, s in lat.items()]
    return "\n".join([
        f"# Recall over HTTP vs in-process ({data['date']})", "",
        f"{data['memories']:,} memories (real local embeddings, every 10th another user's), "
        f"{data['queries']} queries as one user, k = 10; machine: {data['machine']['cpus']} "
        f"cores, Python {data['machine']['python']}. `cogd serve` in its own process on "
        "127.0.0.1; each query runs the three paths in turn.", "",
        "| path | p50 ms | p95 ms | mean ms | max ms |", "| --- | --- | --- | --- | --- |",
        *rows, "",
        "- in_process: `Recaller.recall` alone (no recall log row).",
        "- memory_api: `MemoryAPI.recall`, what the route calls (user lookup, recall log "
        "row, payload).",
        "- http: `POST /v1/recall` with a bearer token over a kept-alive connection.", "",
        f"HTTP adds {data['http_minus_memory_api_p50_ms']} ms at p50 over the memory API "
        "in this process (token check, JSON, uvicorn, the loopback round trip).",
        f"Wall time {data['wall_s']} s.", ""])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench api", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cache", type=Path, default=None,
                        help="a directory for the memories' embeddings (bench.loop's cache)")
    parser.add_argument("--quick", action="store_true", help="2,000 memories, 50 queries")
    args = parser.parse_args(argv)
    if args.quick:
        args.memories, args.queries = 2_000, 50
    data = run(args.memories, args.queries, args.cache)
    write_results("api", data, markdown(data), quick=args.quick)


if __name__ == "__main__":
    main()
