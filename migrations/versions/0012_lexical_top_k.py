"""BM25 whose cost grows with the answer, not the table (issue "Recall at a million
memories").

Revision 0007 scored BM25 over every posting of the query's terms and counted each term's
document frequency from the postings at query time: a term in 5 % of a million documents
meant 50,000 rows read, windowed and summed per query. This revision makes the lexicon
readable top-k first:

- `lexical_postings.impact`: the posting's BM25 term-frequency part, tf (k1 + 1) / (tf +
  k1 (1 - b + b dl / avgdl)) with Lucene's k1 = 1.2, b = 0.75 and the kind's avgdl when it
  was written. It is an ordering key only: recall scores the postings it reads with the
  configured k1, b and today's avgdl.
- `ix_lexical_postings_top` on (kind, term, user_id, impact DESC) INCLUDE (doc_id, tf,
  doc_len, dated): one user's postings of one term, best first, read from the index alone.
  Recall reads at most `recall.bm25_term_depth` of them per term (impact-ordered,
  "score-at-a-time" candidate generation): a document's score misses only the
  contributions of terms whose list was cut before it, each below that list's last read
  impact. Lists no longer than the depth are read whole, so small corpora score exactly as
  before.
- `lexical_terms` (kind, term, df): each term's document frequency, kept by the same
  triggers, so IDF is one row per term instead of a count of its postings.

The lexicon triggers become statement-level (transition tables): a COPY or a multi-row
INSERT / DELETE updates each term's row once per statement, not once per document (row by
row, a frequent term's upserts inside one big transaction walked an ever longer chain of
that transaction's own row versions: a 90k-row bulk load slowed from 49 s to minutes).
An UPDATE stays row-level (transition tables are not allowed on a trigger of some
columns) and fires only for rows whose index_tsv, user_id or date changed. Each trigger
updates lexical_stats first: that row lock orders every writer of a kind before it
touches lexical_terms' rows, so two transactions writing documents with the same terms in
different orders wait for each other instead of deadlocking.

Revision ID: 0012_lexical_top_k
Revises: 0011_one_memory_per_turn
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from alembic import op

revision: str = "0012_lexical_top_k"
down_revision: str | None = "0011_one_memory_per_turn"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

K1, B = 1.2, 0.75  # the ordering key's constants (Lucene's defaults)


def _trigger_functions(kind: str, table: str, pk: str, dated: str) -> list[str]:
    """One function per operation. INSERT and DELETE are statement-level and read their
    transition tables: a COPY or a multi-row INSERT / DELETE touches each term's row once
    per statement, not once per document (a row-level upsert of a frequent term inside one
    big transaction walks an ever longer chain of its own row versions). UPDATE is
    row-level, only for rows whose indexed fields changed."""
    doc_len = "(SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) FROM unnest({t}))"
    remove = f"""
        UPDATE lexical_stats SET n_docs = n_docs - g.n, total_len = total_len - g.len
        FROM (SELECT count(*) AS n, coalesce(sum({doc_len.format(t="o.index_tsv")}), 0) AS len
              FROM gone o) g
        WHERE kind = '{kind}' AND g.n > 0;
        DELETE FROM lexical_postings WHERE kind = '{kind}' AND doc_id IN (SELECT {pk} FROM gone);
        UPDATE lexical_terms t SET df = t.df - c.n
        FROM (SELECT u.lexeme, count(*) AS n FROM gone o, unnest(o.index_tsv) u
              GROUP BY u.lexeme) c
        WHERE t.kind = '{kind}' AND t.term = c.lexeme;"""
    add = f"""
        UPDATE lexical_stats SET n_docs = n_docs + g.n, total_len = total_len + g.len
        FROM (SELECT count(*) AS n, coalesce(sum({doc_len.format(t="a.index_tsv")}), 0) AS len
              FROM came a) g
        WHERE kind = '{kind}'
        RETURNING greatest(total_len::float8 / greatest(n_docs, 1), 1.0) INTO avgdl;
        INSERT INTO lexical_postings (kind, term, doc_id, user_id, dated, tf, doc_len, impact)
        SELECT '{kind}', u.lexeme, a.{pk}, a.user_id, a.{dated}, u.tf, a.len,
               u.tf * {K1 + 1} / (u.tf + {K1} * (1 - {B} + {B} * a.len / avgdl))
        FROM (SELECT c.*, {doc_len.format(t="c.index_tsv")} AS len FROM came c) a,
             LATERAL (SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf
                      FROM unnest(a.index_tsv)) u;
        INSERT INTO lexical_terms (kind, term, df)
        SELECT '{kind}', u.lexeme, count(*) FROM came a, unnest(a.index_tsv) u
        GROUP BY u.lexeme ORDER BY u.lexeme
        ON CONFLICT (kind, term) DO UPDATE SET df = lexical_terms.df + excluded.df;"""

    def function(op: str, body: str) -> str:
        return f"""
CREATE OR REPLACE FUNCTION cogd_lexicon_{table}_{op}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    avgdl float8;
BEGIN
{body}
    RETURN NULL;
END $$"""

    # lexical_stats is updated first: its row lock orders every writer of a kind before
    # it touches lexical_terms' rows (terms are then upserted in term order)
    return [
        function("insert", """
    IF NOT EXISTS (SELECT 1 FROM new_rows WHERE index_tsv IS NOT NULL) THEN
        RETURN NULL;
    END IF;
""" + _with("came", "SELECT * FROM new_rows WHERE index_tsv IS NOT NULL", add)),
        function("delete", """
    IF NOT EXISTS (SELECT 1 FROM old_rows WHERE index_tsv IS NOT NULL) THEN
        RETURN NULL;
    END IF;
""" + _with("gone", "SELECT * FROM old_rows WHERE index_tsv IS NOT NULL", remove)),
        # UPDATE stays row-level: Postgres allows transition tables only on triggers of
        # every column, and an UPDATE of other columns (importance, a reindex mark) must
        # not copy whole rows, vectors included, to find that nothing indexed changed
        function("update", _with("gone", _row("OLD", pk, dated), remove)
                 + _with("came", _row("NEW", pk, dated), add)),
    ]


def _row(record: str, pk: str, dated: str) -> str:
    """The indexed fields of the trigger's OLD or NEW row, as a one-row (or empty) source."""
    return (f"SELECT {record}.{pk} AS {pk}, {record}.index_tsv AS index_tsv, "
            f"{record}.user_id AS user_id, {record}.{dated} AS {dated} "
            f"WHERE {record}.index_tsv IS NOT NULL")


def _with(name: str, source: str, statements: str) -> str:
    """Each statement of `statements` prefixed with the CTE `name` AS (`source`)."""
    out = []
    for stmt in statements.split(";"):
        if stmt.strip():
            out.append(f"    WITH {name} AS ({source})\n    {stmt.strip()};")
    return "\n".join(out) + "\n"


def _previous() -> Any:
    return importlib.import_module("migrations.versions.0007_contextual_index")


# kind -> (table, primary key, the timestamp a document is dated by): 0007's
KINDS: dict[str, tuple[str, str, str]] = _previous().KINDS


def upgrade() -> None:
    op.execute("ALTER TABLE lexical_postings ADD COLUMN impact real")
    op.execute(f"""
        UPDATE lexical_postings p SET impact = p.tf * {K1 + 1}
            / (p.tf + {K1} * (1 - {B} + {B} * p.doc_len
                              / greatest(s.total_len::float8 / greatest(s.n_docs, 1), 1.0)))
        FROM lexical_stats s WHERE s.kind = p.kind""")
    op.execute("ALTER TABLE lexical_postings ALTER COLUMN impact SET NOT NULL")
    op.execute("""
        CREATE TABLE lexical_terms (
            kind text NOT NULL,
            term text NOT NULL,
            df bigint NOT NULL,
            CONSTRAINT pk_lexical_terms PRIMARY KEY (kind, term),
            CONSTRAINT ck_lexical_terms_kind CHECK (kind IN ('day_table', 'memory', 'block')),
            CONSTRAINT ck_lexical_terms_df CHECK (df >= 0))""")
    op.execute("""
        INSERT INTO lexical_terms (kind, term, df)
        SELECT kind, term, count(*) FROM lexical_postings GROUP BY kind, term""")
    op.execute("""
        CREATE INDEX ix_lexical_postings_top ON lexical_postings
        (kind, term, user_id, impact DESC) INCLUDE (doc_id, tf, doc_len, dated)""")
    for kind, (table, pk, dated) in KINDS.items():
        op.execute(f"DROP TRIGGER {table}_lexicon ON {table}")
        op.execute(f"DROP FUNCTION cogd_lexicon_{table}()")
        for function in _trigger_functions(kind, table, pk, dated):
            op.execute(function)
        op.execute(f"""CREATE TRIGGER {table}_lexicon_insert AFTER INSERT ON {table}
            REFERENCING NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION cogd_lexicon_{table}_insert()""")
        op.execute(f"""CREATE TRIGGER {table}_lexicon_delete AFTER DELETE ON {table}
            REFERENCING OLD TABLE AS old_rows
            FOR EACH STATEMENT EXECUTE FUNCTION cogd_lexicon_{table}_delete()""")
        op.execute(f"""CREATE TRIGGER {table}_lexicon_update
            AFTER UPDATE OF index_tsv, user_id, {dated} ON {table} FOR EACH ROW
            WHEN ((OLD.index_tsv, OLD.user_id, OLD.{dated})
                  IS DISTINCT FROM (NEW.index_tsv, NEW.user_id, NEW.{dated}))
            EXECUTE FUNCTION cogd_lexicon_{table}_update()""")
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    previous = _previous()
    for kind, (table, pk, dated) in KINDS.items():
        for operation in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER {table}_lexicon_{operation} ON {table}")
            op.execute(f"DROP FUNCTION cogd_lexicon_{table}_{operation}()")
        op.execute(previous._trigger_function(kind, table, pk, dated))
        op.execute(
            f"""CREATE TRIGGER {table}_lexicon
            AFTER INSERT OR DELETE OR UPDATE OF index_tsv, user_id, {dated} ON {table}
            FOR EACH ROW EXECUTE FUNCTION cogd_lexicon_{table}()""")
    op.execute("DROP INDEX ix_lexical_postings_top")
    op.execute("DROP TABLE lexical_terms")
    op.execute("ALTER TABLE lexical_postings DROP COLUMN impact")
