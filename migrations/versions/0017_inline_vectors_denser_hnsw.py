"""day_table's vectors stored inline, and memories' HNSW index built denser (issue 15,
"Recall at a million memories": within 2x a bare embed + HNSW query, index recall@10
>= 0.95 against exact search).

Inline vectors. pgvector's types are stored EXTERNAL by default: a day_table row (content,
its contextual index entry and three vectors, ~4 KB) is over Postgres's 2 KB toast
threshold, so each vector went to the toast table, and every distance recall computed over
day_table fetched it from there. The day table is small (the turns of the last days), so
the planner scans it for the dense lists rather than use HNSW: 200 turns took 0.92 ms per
list, 0.22 ms with the vectors inline (EXPLAIN ANALYZE, bench.loop seed 7). STORAGE MAIN
keeps them in the row (a row of 384-dimension vectors fits a page; larger vectors, or long
content, still go out of line where a row would not fit). Rows written from now on; the
rows already there keep their toasted vectors until the night cycle's cleanup removes them.

Denser HNSW graph. memories' universal index is rebuilt with ef_construction 128
(pgvector's default 64; m stays 16), chosen with [recall] hnsw_ef_search 200 on bench.loop
seed 7 with 100,000 real embeddings, 100 queries: the lowest HNSW query time among the
builds and ef_search values that reach 0.95 recall@10 (16/128 at ef_search 200: 0.968,
3.72 ms p50; 16/64 at 200: 0.95, 3.93 ms; 24/128 at 100: 0.956, 3.92 ms; 16/64 at 100,
the old setting: 0.90, 2.81 ms). The build takes ~1.5x as long (37.5 s against 24.3 s at
100k memories on 2 cores): upgrading a large database rebuilds it once (give
maintenance_work_mem room for the graph: 1M memories need ~2 GB).

Revision ID: 0017_inline_vectors_denser_hnsw
Revises: 0016_contextual_after_commit
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017_inline_vectors_denser_hnsw"
down_revision: str | None = "0016_contextual_after_commit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VECTORS = ("universal_embedding", "native_embedding", "index_embedding")
INDEX = "ix_memories_universal_embedding_hnsw"


def _memories_hnsw(options: str) -> None:
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
    op.execute(f"CREATE INDEX {INDEX} ON memories USING hnsw "
               f"(universal_embedding vector_cosine_ops){options}")


def upgrade() -> None:
    for column in VECTORS:
        op.execute(f"ALTER TABLE day_table ALTER COLUMN {column} SET STORAGE MAIN")
    _memories_hnsw(" WITH (m = 16, ef_construction = 128)")


def downgrade() -> None:
    _memories_hnsw("")
    for column in VECTORS:
        op.execute(f"ALTER TABLE day_table ALTER COLUMN {column} SET STORAGE EXTERNAL")
