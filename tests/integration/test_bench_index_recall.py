"""bench.index_recall_real measures HNSW recall on embeddings it computes itself: its model
must be the local embedder, its rows bench.loop's, and its exact search exact."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from agent.db.queries import vector_text
from agent.providers.local import LocalEmbedder, minilm_onnx_path
from bench.suites import index_recall_real as ir
from bench.suites import loop


def test_its_model_is_the_local_embedder() -> None:
    """The ONNX file's initializers, read without the onnx package, run through the graph's
    arithmetic in numpy, give the local embedder's vectors (mean-pooled, normalised), with
    batches of mixed lengths padded as the embedder pads them."""
    path = minilm_onnx_path()
    assert path is not None
    weights = ir.model_weights(path)
    assert weights["0.q_q"].dtype == np.int8 and weights["0.q_q"].shape == (384, 384)
    assert weights["word_s"].shape == (30522, 1)
    texts = [*loop.memory_sentences(12, 5), "Hi.", "a much longer sentence " * 9]
    got = ir.embed(texts, "numpy", ir.load_weights(weights, "numpy"), batch=5)
    want = LocalEmbedder().embed_documents(texts)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > 0.99999, cosines
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_its_rows_and_exact_search_are_bench_loops(conn: psycopg.Connection[Any],
                                                   tmp_path: Path) -> None:
    """copy_file writes a binary COPY Postgres reads back as written, with bench.loop's
    owners (every 10th row another user's); the exact query is the true top 10 of the bench
    user's rows, and the HNSW one (same SQL with the index) agrees on this small table."""
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(50, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    conn.execute("CREATE TEMP TABLE memories (memory_id bigint PRIMARY KEY, user_id int, "
                 "universal_embedding vector(384))")
    path = tmp_path / "rows.copy"
    for first in (0, 20):  # two stages, as measure loads them
        part = vectors[first:first + (20 if first == 0 else 30)]
        ir.copy_file(path, first, part)
        with conn.cursor() as cur, cur.copy(
                "COPY memories FROM STDIN WITH (FORMAT binary)") as copy:
            copy.write(path.read_bytes())
    rows = conn.execute("SELECT memory_id, user_id, universal_embedding::text FROM memories "
                        "ORDER BY memory_id").fetchall()
    assert [r[0] for r in rows] == list(range(1, 51))
    assert [r[1] for r in rows] == [0 if i % 10 != 9 else 1 + (i // 10) % loop.OTHER_USERS
                                    for i in range(50)]
    stored = np.array([[float(x) for x in r[2].strip("[]").split(",")] for r in rows],
                      dtype=np.float32)
    assert np.array_equal(stored, vectors)
    q = rng.normal(size=384).astype(np.float32)
    q /= np.linalg.norm(q)
    mine = [i for i in range(50) if i % 10 != 9]
    want = [i + 1 for i in sorted(mine, key=lambda i: -float(vectors[i] @ q))[:10]]
    exact = ir.EXACT_SQL.format(i=0, q=vector_text(q)).rstrip(";\n")
    assert [r[1] for r in conn.execute(exact).fetchall()] == want
    conn.execute(ir.INDEX_SQL.format(key=ir.KEYS["vector"], m=16, efc=128))
    conn.execute("SET enable_seqscan = off")
    hnsw = ir.HNSW_SQL.format(i=0, q=vector_text(q)).rstrip(";\n")
    assert "ix_hnsw" in "\n".join(r[0] for r in conn.execute("EXPLAIN " + hnsw))
    assert "ix_hnsw" not in "\n".join(r[0] for r in conn.execute("EXPLAIN " + exact))
    assert [r[1] for r in conn.execute(hnsw).fetchall()] == want
    # the half-precision variant: its own index, searched by the halfvec distance, and the
    # full-precision distance returned
    conn.execute("DROP INDEX ix_hnsw")
    conn.execute(ir.INDEX_SQL.format(key=ir.KEYS["halfvec"], m=16, efc=128))
    half = ir.HALF_SQL.format(i=0, q=vector_text(q)).rstrip(";\n")
    assert "ix_hnsw" in "\n".join(r[0] for r in conn.execute("EXPLAIN " + half))
    got = conn.execute(half).fetchall()
    assert {r[1] for r in got} == set(want)
    assert all(abs(float(r[2]) - (1 - float(vectors[r[1] - 1] @ q))) < 1e-5 for r in got)
    parsed = ir.parse("0|5|0.25\n0|7|0.5\n\n1|2|0.125\nTime: 1.5 ms\n0|5|0.25\n")
    assert parsed == {0: [(5, 0.25), (7, 0.5)], 1: [(2, 0.125)]}


def test_its_builds_are_parsed_before_any_work() -> None:
    """--build / --variants: M:EFC or M:EFC:halfvec; anything else is an argparse error
    (before minutes of embedding), naming the part that is wrong."""
    assert ir.build_specs("16:128,16:256:halfvec") == [(16, 128, "vector"), (16, 256, "halfvec")]
    for bad in ("16", "16:x", "16:128:foo", "16:128:halfvec:1"):
        with pytest.raises(argparse.ArgumentTypeError, match=f"'{bad}': expected M:EFC"):
            ir.build_specs(bad)
    with pytest.raises(SystemExit):
        ir.main(["measure", "DIR", "--build", "16:128,24:128"])
