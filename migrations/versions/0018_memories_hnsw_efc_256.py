"""memories' HNSW index built with ef_construction 256 (issue 15, "Recall at a million
memories": recall p95 <= 60 ms at 1M memories with index recall@10 >= 0.95).

Revision 0017's graph (m 16, ef_construction 128) needed hnsw.ef_search 800 at 1M memories
to find 0.95 of the exact top 10 on real embeddings, and that scan alone took 38.7 ms p50 on
2 cores: recall's p95 was 60.55 ms. Measured with bench.index_recall_real (bench.loop's
seed-7 memories, every one a real embedding, 100 queries;
bench/results/index-recall-real-2026-11-26.md), recall@10 at 1M by ef_search:

| build | 300 | 400 | 500 | 600 | 800 |
| --- | --- | --- | --- | --- | --- |
| m 16, ef_construction 256 | 0.949 | **0.962** | 0.967 | 0.968 | 0.977 |
| m 16, ef_construction 128 (three builds) | 0.904 | 0.932-0.95 | 0.95 | 0.946-0.967 | 0.961-0.969 |

ef_construction 256 reaches at ef_search 400 what 128 reached at 800, in about 60 % of the
query time (that machine: 7.1 against 11.9 ms p50). [recall] hnsw_ef_search drops to 400
past 100,000 memories accordingly. A half-precision index (halfvec) was measured too and
not taken: the same recall, and no faster on this machine's 2 cores (300k memories, ef_search
800: 17.6 against 16.9 ms p50).

The build costs ~1.5-1.75x as long as 0017's (1M memories: 122 against 83 s on 16 cores;
on 2 cores, bench.loop, 1,772 against 1,011 s): upgrading a large database rebuilds the
index once (maintenance_work_mem: 1M memories need ~2 GB for the graph in memory).

Revision ID: 0018_memories_hnsw_efc_256
Revises: 0017_inline_vectors_denser_hnsw
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0018_memories_hnsw_efc_256"
down_revision: str | None = "0017_inline_vectors_denser_hnsw"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_memories_universal_embedding_hnsw"


def _memories_hnsw(ef_construction: int) -> None:
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
    op.execute(f"CREATE INDEX {INDEX} ON memories USING hnsw "
               f"(universal_embedding vector_cosine_ops) "
               f"WITH (m = 16, ef_construction = {ef_construction})")


def upgrade() -> None:
    _memories_hnsw(256)


def downgrade() -> None:
    _memories_hnsw(128)
