"""Contextual indexing and a BM25 lexicon (issue "Recall that finds what was said").

day_table gains `speaker` (who said it: an imported name; NULL: named by its role) and
`index_embedding`, the universal model's vector of the turn in context, with its own HNSW
index: recall's dense list for turns. `universal_embedding` stays the vector of the
verbatim content (the night cycle's flux detection and the verdict's cosine read it). day_table, memories and holographic_blocks gain the derived, versioned
index entry of each row (`content` stays verbatim):
- `index_text`: the row in context, e.g. "(8 May 2023) Ana said, ..." (agent/domain/contextual.py);
- `index_tsv`: its lexical terms (agent/domain/lexical.tokens, repeats kept as positions);
- `index_version`: the recipe that built them; `cogd reindex` rebuilds older or missing ones.

`lexical_postings` is the BM25 lexicon: one row per (kind, term, document) with the term
frequency and the document length, maintained by a trigger on each table from
`index_tsv`, so every writer (and every delete: the night cycle's stage 9) keeps it in step
without code of its own. `lexical_stats` holds each kind's document count and total length
(avgdl), updated by the same triggers. Recall scores Okapi BM25 over the postings of the
query's terms only (agent/db/sql/recall.sql: recall_bm25), with IDF from the postings'
document frequencies: not ts_rank_cd over every OR-match.

Revision ID: 0007_contextual_index
Revises: 0006_roles_and_indexes
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import TSVECTOR, UUID

revision: str = "0007_contextual_index"
down_revision: str | None = "0006_roles_and_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# kind -> (table, primary key, the timestamp a document is dated by)
KINDS = {
    "day_table": ("day_table", "entry_id", "created_at"),
    "memory": ("memories", "memory_id", "created_at"),
    "block": ("holographic_blocks", "block_id", "arc_start_time"),
}


def _trigger_function(kind: str, table: str, pk: str, dated: str) -> str:
    return f"""
CREATE FUNCTION cogd_lexicon_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    len bigint;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.index_tsv IS NOT NULL THEN
        DELETE FROM lexical_postings WHERE kind = '{kind}' AND doc_id = OLD.{pk};
        SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) INTO len
        FROM unnest(OLD.index_tsv);
        UPDATE lexical_stats SET n_docs = n_docs - 1, total_len = total_len - len
        WHERE kind = '{kind}';
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.index_tsv IS NOT NULL THEN
        SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) INTO len
        FROM unnest(NEW.index_tsv);
        INSERT INTO lexical_postings (kind, term, doc_id, user_id, dated, tf, doc_len)
        SELECT '{kind}', u.lexeme, NEW.{pk}, NEW.user_id, NEW.{dated},
               coalesce(array_length(u.positions, 1), 1), len
        FROM unnest(NEW.index_tsv) u;
        UPDATE lexical_stats SET n_docs = n_docs + 1, total_len = total_len + len
        WHERE kind = '{kind}';
    END IF;
    RETURN NULL;
END $$"""


def _universal_dim() -> int:
    settings = context.config.attributes.get("settings")
    if settings is None:
        from agent.config import load_settings

        settings = load_settings()
    return int(settings.embedding.universal_dim)


def upgrade() -> None:
    op.add_column("day_table", sa.Column("speaker", sa.Text()))
    op.create_index("ix_day_table_speaker", "day_table", ["speaker"])
    op.add_column("day_table", sa.Column("index_embedding", Vector(_universal_dim())))
    op.create_index("ix_day_table_index_embedding_hnsw", "day_table", ["index_embedding"],
                    postgresql_using="hnsw",
                    postgresql_ops={"index_embedding": "vector_cosine_ops"})
    for table, _pk, _dated in KINDS.values():
        op.add_column(table, sa.Column("index_text", sa.Text()))
        op.add_column(table, sa.Column("index_tsv", TSVECTOR()))
        op.add_column(table, sa.Column("index_version", sa.SmallInteger()))
        op.create_index(f"ix_{table}_index_version", table, ["index_version"])
    op.create_table(
        "lexical_postings",
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("term", sa.Text(), nullable=False),
        sa.Column("doc_id", UUID(as_uuid=True), nullable=False),
        sa.Column("user_id", UUID(as_uuid=True)),
        sa.Column("dated", sa.DateTime(timezone=True)),
        sa.Column("tf", sa.Integer(), nullable=False),
        sa.Column("doc_len", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "term", "doc_id", name="pk_lexical_postings"),
        sa.CheckConstraint("kind IN ('day_table', 'memory', 'block')",
                           name="ck_lexical_postings_kind"),
    )
    op.create_index("ix_lexical_postings_doc", "lexical_postings", ["kind", "doc_id"])
    op.create_table(
        "lexical_stats",
        sa.Column("kind", sa.Text(), primary_key=True),
        sa.Column("n_docs", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("total_len", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.execute("INSERT INTO lexical_stats (kind) VALUES ('day_table'), ('memory'), ('block')")
    for kind, (table, pk, dated) in KINDS.items():
        op.execute(_trigger_function(kind, table, pk, dated))
        op.execute(
            f"""CREATE TRIGGER {table}_lexicon
            AFTER INSERT OR DELETE OR UPDATE OF index_tsv, user_id, {dated} ON {table}
            FOR EACH ROW EXECUTE FUNCTION cogd_lexicon_{table}()""")
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    for table, _pk, _dated in reversed(list(KINDS.values())):
        op.execute(f"DROP TRIGGER IF EXISTS {table}_lexicon ON {table}")
        op.execute(f"DROP FUNCTION IF EXISTS cogd_lexicon_{table}()")
    op.drop_table("lexical_stats")
    op.drop_index("ix_lexical_postings_doc", table_name="lexical_postings")
    op.drop_table("lexical_postings")
    for table, _pk, _dated in reversed(list(KINDS.values())):
        op.drop_index(f"ix_{table}_index_version", table_name=table)
        op.drop_column(table, "index_version")
        op.drop_column(table, "index_tsv")
        op.drop_column(table, "index_text")
    op.drop_index("ix_day_table_index_embedding_hnsw", table_name="day_table")
    op.drop_column("day_table", "index_embedding")
    op.drop_index("ix_day_table_speaker", table_name="day_table")
    op.drop_column("day_table", "speaker")
