"""The live loop's turn write embeds the turn in context after the commit (issue 15, "Recall
at a million memories": [recall] index_vector_after_commit, revision 0016)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np

from agent.config import Settings
from agent.domain.contextual import IndexConfig
from agent.runtime import Runtime
from agent.services.memory.indexing import Indexer
from agent.services.records.turns import TurnInput, TurnWriter, fill_contextual_vectors
from tests.conftest import heuristic_roles, make_session, user_of


def _write(conn: Any, writer: TurnWriter, session_id: Any, content: str,
           after_commit: bool) -> Any:
    with conn.transaction():
        written = writer.write(conn, [TurnInput(
            session_id=session_id, user_id=user_of(conn, session_id), role="user",
            content=content)], vectors_after_commit=after_commit)
    assert written[0] is not None
    return written[0].entry_id


def _row(conn: Any, entry_id: Any) -> tuple[Any, ...]:
    row = conn.execute(
        "SELECT universal_embedding IS NOT NULL, index_text, index_embedding::text, "
        "(SELECT count(*) FROM lexical_postings WHERE kind = 'day_table' "
        "   AND doc_id = d.entry_id) FROM day_table d WHERE entry_id = %s",
        (entry_id,)).fetchone()
    assert row is not None
    return tuple(row)


def test_the_write_leaves_the_contextual_vector_for_after_the_commit(
        settings: Settings, conn: Any) -> None:
    writer = Runtime(settings).turn_writer()
    assert writer.index_cfg.vector_after_commit  # the shipped default
    sid = make_session(conn)
    entry = _write(conn, writer, sid, "My sister Ana booked the rental car for Lisbon.", True)
    has_verbatim, index_text, contextual, postings = _row(conn, entry)
    # written before it is judged: content, verbatim vector and the lexical entry at once
    assert has_verbatim and index_text and "Ana" in index_text and postings > 0
    assert contextual is None
    indexer = Indexer(writer.universal, IndexConfig.from_table(settings.recall))
    assert indexer.pending(conn)["day_table"] == 1

    assert fill_contextual_vectors(conn, writer.universal) == 1
    _, _, contextual, _ = _row(conn, entry)
    assert contextual is not None
    got = np.array([float(x) for x in contextual.strip("[]").split(",")])
    want = np.asarray(writer.universal.embed_documents([index_text])[0])
    assert float(got @ want) > 0.999  # the vector of the contextual text, not of the content
    assert indexer.pending(conn)["day_table"] == 0
    assert fill_contextual_vectors(conn, writer.universal) == 0  # nothing twice


def test_imports_and_a_disabled_setting_embed_before_the_commit(
        settings: Settings, conn: Any) -> None:
    writer = Runtime(settings).turn_writer()
    sid = make_session(conn)
    imported = _write(conn, writer, sid, "The plumber fixed the kitchen tap on Monday.", False)
    assert _row(conn, imported)[2] is not None
    writer.index_cfg = replace(writer.index_cfg, vector_after_commit=False)
    live = _write(conn, writer, sid, "Grandma Rosa sent a jar of honey.", True)
    assert _row(conn, live)[2] is not None


def test_reindex_fills_what_a_crash_left(settings: Settings, conn: Any) -> None:
    """A turn whose contextual vector was never filled (the process died after the
    commit) is counted and filled by `cogd reindex`'s indexer."""
    writer = Runtime(settings).turn_writer()
    sid = make_session(conn)
    entries = [_write(conn, writer, sid, f"Note {i}: the vet moved the appointment.", True)
               for i in range(3)]
    indexer = Runtime(settings).indexer()
    report = indexer.run(conn)
    assert report.pending["day_table"] == 3 and report.indexed["day_table"] == 3
    assert all(_row(conn, e)[2] is not None for e in entries)
    assert indexer.pending(conn)["day_table"] == 0


class NoFloor(random.Random):
    def random(self) -> float:
        return 0.99


def test_a_loop_turn_leaves_both_turns_with_their_contextual_vectors(
        settings: Settings, conn: Any) -> None:
    heuristic_roles(settings)
    cog = Runtime(settings).cognition(rng=NoFloor())
    sid = make_session(conn)
    result = cog.answer(conn, sid, "Remember that my locker code at the gym is 4512.")
    assert result.reply
    rows = conn.execute("SELECT role, index_text IS NOT NULL, index_embedding IS NOT NULL "
                        "FROM day_table WHERE session_id = %s ORDER BY turn_number",
                        (sid,)).fetchall()
    assert [r[0] for r in rows] == ["user", "assistant"]
    assert all(r[1] and r[2] for r in rows)
