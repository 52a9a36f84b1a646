"""CJK n-grams in the full-text columns; external ids for idempotent import.

The 'simple' text search configuration keeps a run of CJK characters as one token,
so "喜欢" never matches "我喜欢猫". cogd_cjk_ngrams() adds the run's character
bigrams (a lone character as itself) to the tsvector; agent/domain/cjk.py is the
same rule in Python for building queries.

Revision ID: 0003_cjk_and_import_keys
Revises: 0002_views_and_guards
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003_cjk_and_import_keys"
down_revision: str | None = "0002_views_and_guards"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Hiragana, Katakana, CJK ext. A, CJK unified, Hangul syllables, CJK compatibility
CJK_CLASS = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"

NGRAM_FUNCTION = rf"""
CREATE FUNCTION cogd_cjk_ngrams(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    m text[];
    run text;
    n int;
    acc text := '';
BEGIN
    FOR m IN SELECT regexp_matches(t, '{CJK_CLASS}', 'g') LOOP
        run := m[1];
        n := char_length(run);
        IF n = 1 THEN
            acc := acc || ' ' || run;
        ELSE
            FOR i IN 1 .. n - 1 LOOP
                acc := acc || ' ' || substr(run, i, 2);
            END LOOP;
        END IF;
    END LOOP;
    RETURN ltrim(acc);
END $$"""

NEW_TSV = (
    "to_tsvector('simple'::regconfig, coalesce(content, '') || ' ' "
    "|| coalesce(cogd_cjk_ngrams(content), ''))"
)
OLD_TSV = "to_tsvector('simple'::regconfig, coalesce(content, ''))"
TSV_TABLES = ("day_table", "memories")


def _swap_tsv(expr: str) -> None:
    for table in TSV_TABLES:
        op.drop_index(f"ix_{table}_content_tsv", table_name=table)
        op.drop_column(table, "content_tsv")
        op.add_column(
            table,
            sa.Column(
                "content_tsv",
                postgresql.TSVECTOR(),
                sa.Computed(expr, persisted=True),
                nullable=True,
            ),
        )
        op.create_index(f"ix_{table}_content_tsv", table, ["content_tsv"], postgresql_using="gin")


def upgrade() -> None:
    op.execute(NGRAM_FUNCTION)
    _swap_tsv(NEW_TSV)
    op.add_column("day_table", sa.Column("external_id", sa.Text(), nullable=True))
    op.create_index("uq_day_table_external_id", "day_table", ["external_id"], unique=True)
    op.add_column("sessions", sa.Column("external_id", sa.Text(), nullable=True))
    op.create_index("uq_sessions_external_id", "sessions", ["external_id"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_sessions_external_id", table_name="sessions")
    op.drop_column("sessions", "external_id")
    op.drop_index("uq_day_table_external_id", table_name="day_table")
    op.drop_column("day_table", "external_id")
    _swap_tsv(OLD_TSV)
    op.execute("DROP FUNCTION cogd_cjk_ngrams(text)")
