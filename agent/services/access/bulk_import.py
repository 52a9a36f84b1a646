"""An import batch written in bulk: the live write path's rows, a few statements per batch.

`cogd import`, POST /v1/import and `cogd watch` (transcripts) write through here
(agent/services/access/importer.py batches the lines). Each turn gets what the live
write path (TurnWriter.write, agent/services/records/turns.py) gives it, from the same
functions: its cleaned content, contextual index text (a short reply quotes the turn
before it: earlier in the batch, else its session's last turn), universal, native and
contextual vectors (TurnWriter.embed: one embedder call for the batch, each distinct text
once), token count, lexical entry and the entry gate's decision (TurnWriter.judge). What
differs is how it reaches Postgres: one multi-row INSERT for the batch's turns (each
session's turns numbered after its last, idempotent on (user_id, external_id):
uq_day_table_user_external_id), so the lexicon's statement triggers run once per batch;
one INSERT for the gate decisions, one for scratch_buffer, one NOTIFY. The caller holds
the transaction: a batch is written whole or not at all.

Three steps, so that the importer can embed one batch while Postgres writes the one
before it: `prepare` (no vectors; the sessions' last turns come from the batch before,
when it had the session, else from one query), `embed` (no database), `insert`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from agent.bus import Channel, Kind, notify
from agent.db.queries import query
from agent.domain import lexical
from agent.domain.contextual import RECIPE_VERSION, Said
from agent.domain.text import clean_content
from agent.errors import InputError
from agent.services.records.turns import ROLES, Judged, TurnInput, TurnWriter, WrittenTurn


@dataclass
class Prepared:
    """A batch ready to embed and insert: everything but its vectors."""

    turns: list[TurnInput]
    contents: list[str]
    contexts: list[str]
    tokens: list[int]
    judged: list[Judged]
    last: dict[Any, Said] = field(default_factory=dict)  # each session's last turn here
    vectors: tuple[list[str], list[str], list[str | None]] | None = None


def prepare(conn: psycopg.Connection[Any], writer: TurnWriter, turns: Sequence[TurnInput],
            before: Prepared | None = None) -> Prepared:
    """Clean, index and judge imported turns (each with an external_id, none twice for one
    user). `before`: the batch before this one, not committed yet: its last turn of a
    session is that session's turn before this batch (a session it did not have is read
    from day_table)."""
    cleaned: list[tuple[str, list[str]]] = []
    for turn in turns:
        if turn.role not in ROLES:
            raise InputError(f"unknown role {turn.role!r}; valid roles: {', '.join(ROLES)}")
        if turn.external_id is None or turn.inbox_id is not None:
            raise ValueError("the bulk path writes imported turns: an external_id, no inbox")
        cleaned.append(clean_content(turn.content))
    contents = [c for c, _ in cleaned]
    carried = {} if before is None else before.last
    sessions = list(dict.fromkeys(t.session_id for t in turns))
    earlier: dict[Any, Said | None] = {s: carried.get(s) for s in sessions}
    unread = [s for s in sessions if s not in carried]
    if unread:
        for sid, speaker, role, content in conn.execute(query("importer_last_turns"),
                                                        {"sessions": unread}):
            earlier[sid] = Said(content, role, speaker)
    contexts = writer.contexts(conn, turns, contents, before=earlier)
    judged = [writer.judge(turn, content, notes)
              for turn, (content, notes) in zip(turns, cleaned, strict=True)]
    last = {t.session_id: Said(c, t.role, t.speaker) for t, c in zip(turns, contents,
                                                                      strict=True)}
    return Prepared(list(turns), contents, contexts,
                    [int(writer.count_tokens(c)) for c in contents], judged, last)


def embed(writer: TurnWriter, batch: Prepared) -> Prepared:
    """The batch's vectors (no database: this may run beside another batch's insert)."""
    if batch.turns:
        batch.vectors = writer.embed(batch.contexts, batch.contents)
    return batch


def insert(conn: psycopg.Connection[Any], writer: TurnWriter, batch: Prepared, *,
           notify_turn: bool = True) -> list[WrittenTurn | None]:
    """Write an embedded batch in the caller's transaction; None for a turn already there
    (its user's external_id, written meanwhile by another import of the same lines)."""
    if not batch.turns:
        return []
    assert batch.vectors is not None, "embed the batch before inserting it"
    turns = batch.turns
    universal, native, contextual = batch.vectors
    rows = conn.execute(query("importer_insert_turns"), {
        "session_id": [t.session_id for t in turns], "user_id": [t.user_id for t in turns],
        "user_tier": [t.user_tier for t in turns], "role": [t.role for t in turns],
        "speaker": [t.speaker for t in turns], "content": batch.contents,
        "universal": universal, "native": native, "tokens": batch.tokens,
        "external_id": [t.external_id for t in turns],
        "created_at": [t.created_at for t in turns], "index_text": batch.contexts,
        "index_tsv": [lexical.tsvector_literal(lexical.tokens(c)) for c in batch.contexts],
        "contextual": contextual, "native_model": writer.native.model_id,
        "index_version": RECIPE_VERSION,
    }).fetchall()
    got = {(user, ext): (entry_id, int(number)) for entry_id, number, user, ext in rows}
    out: list[WrittenTurn | None] = []
    gates: list[tuple[Any, TurnInput, Judged, str, str]] = []
    for turn, content, count, verdict in zip(turns, batch.contents, batch.tokens,
                                             batch.judged, strict=True):
        row = got.pop((str(turn.user_id), turn.external_id), None)
        if row is None:
            out.append(None)
            continue
        gates.append((row[0], turn, verdict, json.dumps(verdict.signals), content))
        out.append(WrittenTurn(entry_id=row[0], turn_number=row[1], decision=verdict.decision,
                               scratched=verdict.scratched, flags=verdict.flags,
                               content=content, tokens=count))
    if not gates:
        return out
    conn.execute(query("importer_insert_gates"), {
        "entry_id": [g[0] for g in gates], "session_id": [g[1].session_id for g in gates],
        "decision": [g[2].decision for g in gates], "score": [g[2].score for g in gates],
        "signals": [g[3] for g in gates], "reason": [g[2].reason for g in gates]})
    held = [g for g in gates if g[2].scratched]
    if held:
        conn.execute(query("importer_insert_scratch"), {
            "entry_id": [g[0] for g in held], "session_id": [g[1].session_id for g in held],
            "user_id": [g[1].user_id for g in held], "content": [g[4] for g in held],
            "signals": [g[3] for g in held]})
    if notify_turn:  # one NOTIFY per batch, never per row
        notify(conn, Channel.TURN, Kind.TURN, str(gates[-1][0]))
    return out
