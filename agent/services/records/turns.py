"""The write path for turns, live or imported (issue #4, step 1).

Content is written before it is judged: each turn goes to day_table with its
universal (and native) embedding; the entry gate's decision is logged in
gate_decisions; flagged content is also copied to scratch_buffer. Imports build the
same rows from the same functions (contexts, embed, judge) and write them in bulk, a
batch per statement, idempotent on external_id, one NOTIFY per batch
(agent/services/access/bulk_import.py).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg

from agent.bus import Channel, Kind, notify
from agent.db import day_table
from agent.db.queries import vector_text
from agent.domain import lexical
from agent.domain.contextual import RECIPE_VERSION, IndexConfig, Said, turn_text
from agent.domain.gates import EntryGateConfig, detects_identity_rewrite, entry_gate
from agent.domain.quoting import GATE_FLAG, lookalikes
from agent.domain.text import clean_content
from agent.errors import InputError
from agent.providers.ports import Embedder

ROLES = ("user", "assistant", "system")

@dataclass(frozen=True)
class TurnInput:
    session_id: Any
    user_id: Any
    role: str
    content: str
    user_tier: str | None = None
    external_id: str | None = None
    inbox_id: int | None = None
    created_at: datetime | None = None
    message_type: str = "dialogue"
    speaker: str | None = None  # who said it (an imported name); None: named by its role


@dataclass(frozen=True)
class Judged:
    """The entry gate on one turn: gate_decisions' row, and whether it is scratched."""

    decision: str  # pass | scratch
    score: float
    signals: dict[str, Any]
    reason: str
    scratched: bool
    flags: tuple[str, ...]


@dataclass(frozen=True)
class WrittenTurn:
    entry_id: Any
    turn_number: int
    decision: str
    scratched: bool
    flags: tuple[str, ...]
    content: str
    tokens: int



class TurnWriter:
    def __init__(
        self,
        universal: Embedder,
        native: Embedder,
        count_tokens: Any,
        gate_cfg: EntryGateConfig,
        rng: random.Random | None,
        index_cfg: IndexConfig,
    ) -> None:
        self.index_cfg = index_cfg
        self.universal = universal
        self.native = native
        self.count_tokens = count_tokens
        self.gate_cfg = gate_cfg
        self.rng = rng or random.Random()

    def embed(
        self, contextual: Sequence[str], verbatim: Sequence[str], with_contextual: bool = True,
    ) -> tuple[list[str], list[str], list[str | None]]:
        """Universal vectors of the verbatim content and of the contextual texts (recall's
        dense key for turns), in one batch; native ones of the content (the universal
        ones when both are the same model). `with_contextual` False: no contextual vectors
        (None each; `fill_contextual_vectors` embeds them after the commit)."""
        n = len(verbatim)
        texts = [*verbatim, *contextual] if with_contextual else list(verbatim)
        # each distinct text once (an import's "ok", "thanks"...), its vector text once
        unique = list(dict.fromkeys(texts))
        at = {text: i for i, text in enumerate(unique)}
        vectors = [vector_text(v) for v in self.universal.embed_documents(unique)]
        both = [vectors[at[text]] for text in texts]
        uni = both[:n]
        ctx: list[str | None] = list(both[n:]) if with_contextual else [None] * n
        if self.native.model_id == self.universal.model_id:
            nat = uni
        else:
            nat = [vector_text(v) for v in self.native.embed_documents(list(verbatim))]
        return uni, nat, ctx

    def contexts(
        self, conn: psycopg.Connection[Any], turns: Sequence[TurnInput], contents: list[str],
        before: Mapping[Any, Said | None] | None = None,
    ) -> list[str]:
        """Each turn's contextual index text; a short reply quotes the turn before it
        (earlier in this batch, else the session's last turn in day_table: `before`
        gives it by session when the caller read those in one query, the bulk import)."""
        now = datetime.now(UTC)
        last: dict[Any, Said] = {}
        out: list[str] = []
        for turn, content in zip(turns, contents, strict=True):
            said = Said(content, turn.role, turn.speaker, turn.created_at or now)
            previous = last.get(turn.session_id)
            if previous is None and before is not None:
                previous = before.get(turn.session_id)
            elif previous is None and self.index_cfg.may_quote(content):
                row = day_table.last_turn(conn, turn.session_id)
                previous = None if row is None else Said(row[2], row[1], row[0])
            out.append(turn_text(said, previous, self.index_cfg))
            last[turn.session_id] = said
        return out

    def write(
        self, conn: psycopg.Connection[Any], turns: Sequence[TurnInput], *,
        notify_turn: bool = True, vectors_after_commit: bool = False,
    ) -> list[WrittenTurn | None]:
        """Write turns in the caller's transaction; None for a duplicate (an external_id, or
        the (inbox_id, role) of a turn already written).

        `vectors_after_commit` (the live loop, when [recall] index_vector_after_commit):
        the turns' contextual vectors are left for the caller to embed after it commits
        (`fill_contextual_vectors`); the content, its verbatim vector and the lexical index
        entry are written here all the same, so BM25 and the bare dense list find the turn
        at once. A turn whose contextual vector was never filled (a crash in between) is
        found by the next fill, and counted and filled by `cogd reindex`."""
        if not turns:
            return []
        cleaned: list[tuple[str, list[str]]] = []
        for turn in turns:
            if turn.role not in ROLES:
                raise InputError(f"unknown role {turn.role!r}; valid roles: {', '.join(ROLES)}")
            cleaned.append(clean_content(turn.content))
        contents = [c for c, _ in cleaned]
        contexts = self.contexts(conn, turns, contents)
        universal, native, contextual = self.embed(
            contexts, contents,
            with_contextual=not (vectors_after_commit and self.index_cfg.vector_after_commit))
        out: list[WrittenTurn | None] = []
        for turn, (content, notes), context, uvec, nvec, cvec in zip(
            turns, cleaned, contexts, universal, native, contextual, strict=True
        ):
            tokens = int(self.count_tokens(content))
            row = day_table.insert(
                conn, session_id=turn.session_id, user_id=turn.user_id,
                user_tier=turn.user_tier, role=turn.role, content=content, universal=uvec,
                native=nvec, native_model=self.native.model_id, tokens=tokens,
                inbox_id=turn.inbox_id, external_id=turn.external_id,
                message_type=turn.message_type, created_at=turn.created_at,
                speaker=turn.speaker, index_text=context,
                index_tsv=lexical.tsvector_literal(lexical.tokens(context)),
                index_version=RECIPE_VERSION, contextual=cvec,
            )
            if row is None:  # an imported external_id, or an (inbox_id, role) written before
                out.append(None)
                continue
            entry_id, turn_number = row
            out.append(self._gate(conn, turn, entry_id, turn_number, content, notes, tokens))
        if notify_turn and any(out):
            last = next(t for t in reversed(out) if t is not None)
            notify(conn, Channel.TURN, Kind.TURN, str(last.entry_id))
        return out

    def _gate(
        self,
        conn: psycopg.Connection[Any],
        turn: TurnInput,
        entry_id: Any,
        turn_number: int,
        content: str,
        notes: list[str],
        tokens: int,
    ) -> WrittenTurn:
        judged = self.judge(turn, content, notes)
        day_table.record_entry_gate(conn, entry_id, turn.session_id, judged.decision,
                                    judged.score, judged.signals, judged.reason)
        if judged.scratched:
            day_table.scratch(conn, entry_id, turn.session_id, turn.user_id, content,
                              judged.signals)
        return WrittenTurn(
            entry_id=entry_id, turn_number=turn_number, decision=judged.decision,
            scratched=judged.scratched, flags=judged.flags, content=content, tokens=tokens,
        )

    def judge(self, turn: TurnInput, content: str, notes: list[str]) -> Judged:
        """The entry gate's decision on one cleaned turn (no database): what
        gate_decisions records and whether the turn is also held in scratch_buffer."""
        decision = entry_gate(content, turn.role, self.gate_cfg, self.rng)
        signals: dict[str, Any] = dict(decision.signals)
        flags: list[str] = list(notes)
        if turn.role == "user" and detects_identity_rewrite(content):
            # recorded and flagged; Layer 0 changes only through approved proposals
            flags.append("identity_rewrite_attempt")
        shaped = lookalikes(content)  # headers, role markers, delimiters, instructions
        if shaped:  # flagged at write time; neutralised wherever it is quoted in a prompt
            flags.append(GATE_FLAG)  # (agent/domain/quoting.py; issue 38 finding 6)
            signals["lookalike"] = shaped
        signals["flags"] = flags
        signals["memory_type_hint"] = decision.memory_type_hint
        scratched = decision.decision == "scratch" or "identity_rewrite_attempt" in flags
        return Judged("scratch" if scratched else "pass", float(decision.score), signals,
                      decision.reason, scratched, tuple(flags))


def fill_contextual_vectors(conn: psycopg.Connection[Any], universal: Embedder,
                            limit: int = 64) -> int:
    """Embed the contextual texts of turns written without their contextual vector
    (`TurnWriter.write(vectors_after_commit=True)`, or left so by a crash), oldest first,
    at most `limit`, in one batch and one transaction; how many were filled. A row filled
    meanwhile by another process is left as that process wrote it."""
    rows = day_table.vector_pending(conn, limit)
    if not rows:
        return 0
    vectors = universal.embed_documents([text for _, text in rows])
    with conn.transaction():
        for (entry_id, _), vec in zip(rows, vectors, strict=True):
            day_table.fill_vector(conn, entry_id, vector_text(vec))
    return len(rows)
