"""The cortex on a local directory against the cortex on an S3-compatible store: what a
cortex search and a night's block write cost through object storage (issue 43 item 4).

    python -m bench cortex_store [--blocks 2000] [--queries 200] [--uri s3://bucket/prefix]

Without --uri it starts moto's S3 server on 127.0.0.1 (`moto[server]`, the dev extra),
so the object-store figure counts the requests LanceDB makes and their HTTP handling,
with no network between: a lower bound for a real bucket, whose round trips add their
own latency (not measured here). With --uri, LanceDB's own environment (AWS_* and the
like) says how to reach the store. Random unit vectors of 384 dimensions (a search's cost
does not depend on the text), user-scoped searches of k = 10 as recall makes them
(LanceCortex.search_blocks with a user filter), one handle per store opened as the loop
opens it ([night_cycle] cortex_read_consistency_s). Below [night_cycle]
cortex_index_min_rows (5,000) the table has no index: a flat scan, as the cortex has
until a night migrates that many blocks. Writes bench/results/cortex-store-<date>.md and
.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent.cortex.lance import BLOCKS, LanceCortex
from bench.reports import machine, percentile, write_results

DIM = 384
USERS = 8


@contextmanager
def moto_s3() -> Iterator[tuple[str, dict[str, str]]]:
    """moto's S3 server on a free port with a bucket: (uri, storage options)."""
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError as exc:
        raise SystemExit(f"moto is not installed ({exc}): pip install 'moto[server]' "
                         "(the dev extra), or pass --uri s3://bucket/prefix") from None
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        options = {"endpoint": endpoint, "region": "us-east-1", "allow_http": "true",
                   "aws_access_key_id": "bench", "aws_secret_access_key": "bench"}
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id="bench", aws_secret_access_key="bench"
                     ).create_bucket(Bucket="cortex")
        yield "s3://cortex/bench", options
    finally:
        server.stop()


def blocks(n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    users = [str(uuid.uuid4()) for _ in range(USERS)]
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [{
        "block_id": str(uuid.uuid4()), "kind": "block", "session_id": str(uuid.uuid4()),
        "user_id": users[i % USERS], "user_tier": "normal", "run_id": 1,
        "prose_text": f"block {i}", "live_zones_text": f"block {i}", "prose": "{}",
        "universal": v.tolist(), "native": v.tolist(), "native_model": "bench",
        "flux_metrics": "{}", "salience_scores": "{}", "composite": 0.5,
        "coherence_gain": 0.1, "ties_merge_weight": 0.3, "citations": "[]",
        "preoccupation_centroid_id": None, "parent_metablock_id": None,
        "continues_from": None, "continued_by": None, "session_continuity_flag": False,
        "arc_start_time": now, "arc_end_time": now, "created_at": now, "migrated_at": now,
        "last_accessed": None, "vector_history": "[]"} for i, v in enumerate(vecs)]


def measure(uri: str, options: dict[str, str] | None, rows: list[dict[str, Any]],
            queries: np.ndarray) -> dict[str, Any]:
    started = time.perf_counter()
    LanceCortex(uri, DIM, DIM, storage_options=options).upsert(BLOCKS, rows, "block_id")
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    cortex = LanceCortex(uri, DIM, DIM, read_consistency_s=5.0, storage_options=options)
    user = rows[0]["user_id"]
    first = cortex.search_blocks(queries[0].tolist(), 10, user_id=user)  # opens the table
    open_ms = (time.perf_counter() - started) * 1000
    assert first, "no block found"
    times = []
    for q in queries[1:]:
        t = time.perf_counter()
        cortex.search_blocks(q.tolist(), 10, user_id=user)
        times.append((time.perf_counter() - t) * 1000)
    return {"write_s": round(write_s, 2), "open_and_first_search_ms": round(open_ms, 1),
            "search_p50_ms": round(percentile(times, 50), 2),
            "search_p95_ms": round(percentile(times, 95), 2), "searches": len(times)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench cortex_store", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--uri", help="an object-store URI to measure instead of moto's")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = blocks(args.blocks, rng)
    queries = rng.standard_normal((args.queries + 1, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    scratch = Path(tempfile.mkdtemp(prefix="cogd-bench-cortex-"))
    try:
        # LanceDB's and pyarrow's first-use costs, apart from either measurement
        measure(str(scratch / "warm-up"), None, rows[:50], queries[:3])
        local = measure(str(scratch / "cortex"), None, rows, queries)
        if args.uri:
            remote = measure(args.uri, None, rows, queries)
            where = args.uri
        else:
            with moto_s3() as (uri, options):
                remote = measure(uri, options, rows, queries)
            where = "moto S3 server on 127.0.0.1 (no network between)"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    data = {"date": dt.date.today().isoformat(), "machine": machine(),
            "blocks": args.blocks, "queries": args.queries, "seed": args.seed,
            "object_store": where, "local": local, "s3": remote}
    ratio = remote["search_p50_ms"] / max(local["search_p50_ms"], 1e-9)
    report = "\n".join([
        f"# Cortex: local directory against object storage ({data['date']})", "",
        f"{args.blocks} blocks ({USERS} users), {args.queries} user-scoped searches of "
        f"k = 10 after a first one that opens the table; object store: {where}; "
        f"{machine()['cpus']} CPUs.", "",
        "| | write all blocks (s) | open + first search (ms) | search p50 (ms) | "
        "search p95 (ms) |", "|---|---|---|---|---|",
        *(f"| {name} | {r['write_s']} | {r['open_and_first_search_ms']} | "
          f"{r['search_p50_ms']} | {r['search_p95_ms']} |"
          for name, r in (("local directory", local), ("S3", remote))), "",
        f"A search through the object store costs {ratio:.1f}x the local one at p50.", ""])
    write_results("cortex-store", data, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
