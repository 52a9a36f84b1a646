"""The silent failure mode of pgvector: recall must use the HNSW index, not a Seq Scan."""

from __future__ import annotations

import random
from typing import Any

from agent.db.queries import query
from tests.conftest import make_session


def _vec(rng: random.Random, dim: int = 384) -> str:
    return "[" + ",".join(f"{rng.gauss(0, 1):.5f}" for _ in range(dim)) + "]"


def test_day_table_vector_search_uses_the_hnsw_index(conn: Any) -> None:
    rng = random.Random(7)
    sid = make_session(conn)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO day_table (session_id, role, content, index_embedding) "
            "VALUES (%s, 'user', %s, %s::vector)",
            [(sid, f"turn {i}", _vec(rng)) for i in range(2000)],
        )
    conn.execute("ANALYZE day_table")
    sql = query("recall_dense_day_table")
    params = {"query": (v := _vec(rng)), "k": 10, "user_id": None, "judge": v, "goal": None}
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params).fetchall())
    assert "ix_day_table_index_embedding_hnsw" in plan, plan
    assert "Seq Scan on day_table" not in plan, plan
    rows = conn.execute(sql, params).fetchall()
    assert len(rows) == 10
    # scoped to one user (the loop's recall), the HNSW index still serves the order
    scoped = dict(params, user_id=str(conn.execute("SELECT gen_random_uuid()").fetchone()[0]))
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, scoped).fetchall())
    assert "ix_day_table_index_embedding_hnsw" in plan, plan
    assert [r[7] for r in rows] == sorted(r[7] for r in rows)  # by distance
