"""The cognitive loop worker, first cut: inbox → day_table → System 1 → outbox.

What it does now: claims inbox rows (SKIP LOCKED, so several loops can share the
work), writes the user turn to day_table with its universal (and native) embedding
BEFORE anything else happens to it, asks the system1 LLM for a reply, writes the
assistant turn and an outbox row, then NOTIFYs. A crash between steps loses no
acknowledged turn: the inbox row stays claimed and is reclaimed after a timeout;
the user turn is keyed by inbox_id so it is never written twice.

Not yet (issue #4): gates, scratch buffer, recall, identity/goals in the prompt,
rolling context with the exit gate, System 2.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import psycopg

from agent.bus import Channel, notify
from agent.workers.base import Worker

logger = logging.getLogger(__name__)

RECLAIM_AFTER_S = 300  # a row 'processing' this long belonged to a crashed loop

CLAIM = """
UPDATE inbox SET status = 'processing', claimed_by = %(me)s, claimed_at = now()
WHERE id = (
    SELECT id FROM inbox
    WHERE status = 'pending'
       OR (status = 'processing' AND claimed_at < now() - make_interval(secs => %(reclaim)s))
    ORDER BY id
    FOR UPDATE SKIP LOCKED
    LIMIT 1)
RETURNING id, session_id, content
"""

SESSION_USER = """
SELECT s.user_id, u.tier FROM sessions s JOIN users u USING (user_id) WHERE s.session_id = %s
"""

NEXT_TURN = "SELECT coalesce(max(turn_number), 0) + 1 FROM day_table WHERE session_id = %s"

INSERT_TURN = """
INSERT INTO day_table (session_id, user_id, user_tier, role, content, universal_embedding,
                       native_embedding, native_model, turn_number, token_count, inbox_id)
VALUES (%(session_id)s, %(user_id)s, %(tier)s, %(role)s, %(content)s, %(universal)s::vector,
        %(native)s::halfvec, %(native_model)s, %(turn)s, %(tokens)s, %(inbox_id)s)
RETURNING entry_id
"""

HISTORY = """
SELECT role, content FROM day_table
WHERE session_id = %s AND message_type = 'dialogue'
ORDER BY created_at DESC, turn_number DESC LIMIT %s
"""


class LoopWorker(Worker):
    name = "loop"
    channels = (Channel.INBOX,)
    history_turns = 8

    def setup(self) -> None:
        from agent.db.llm_calls import PgCallRecorder
        from agent.providers import factory

        self.recorder = PgCallRecorder(self.url)
        self.universal = factory.build_universal_embedder(self.settings)
        self.native = factory.build_native_embedder(self.settings, self.recorder)
        self.llm = factory.build_llm(self.settings, "system1", self.recorder)

    def teardown(self) -> None:
        self.recorder.close()

    def poll(self) -> None:
        while not self.stop.is_set() and self.process_one():
            pass

    def process_one(self) -> bool:
        """Answer one inbox message; False when none is waiting."""
        assert self.conn is not None
        row = self.conn.execute(
            CLAIM, {"me": self.app, "reclaim": RECLAIM_AFTER_S}
        ).fetchone()
        if row is None:
            return False
        inbox_id, session_id, content = row
        try:
            self._answer(inbox_id, session_id, content)
        except psycopg.OperationalError:
            raise  # the row stays claimed and is reclaimed later
        except Exception as exc:
            logger.exception("loop: inbox %s failed", inbox_id)
            self.conn.execute(
                "UPDATE inbox SET status = 'failed', error = %s, processed_at = now() "
                "WHERE id = %s",
                (f"{exc.__class__.__name__}: {exc}"[:2000], inbox_id),
            )
            # the error reaches the REPL through outbox; it is not a dialogue turn
            out = self.conn.execute(
                "INSERT INTO outbox (inbox_id, session_id, content, metadata) "
                "VALUES (%s, %s, %s, %s::jsonb) RETURNING id",
                (inbox_id, session_id, f"[error] the loop could not answer: {exc}",
                 json.dumps({"error": True})),
            ).fetchone()
            assert out is not None
            notify(self.conn, Channel.OUTBOX, "outbox", out[0])
        self.items_done += 1
        return True

    def _turn_fields(self, conn: psycopg.Connection[Any], session_id: Any) -> dict[str, Any]:
        user = conn.execute(SESSION_USER, (session_id,)).fetchone()
        turn = conn.execute(NEXT_TURN, (session_id,)).fetchone()
        return {
            "session_id": session_id,
            "user_id": user[0] if user else None,
            "tier": user[1] if user else None,
            "turn": turn[0] if turn else 1,
        }

    def _embed(self, text: str) -> dict[str, Any]:
        universal = self.universal.embed_documents([text])[0]
        native = (
            universal
            if self.native.model_id == self.universal.model_id
            else self.native.embed_documents([text])[0]
        )
        return {
            "universal": _vec(universal),
            "native": _vec(native),
            "native_model": self.native.model_id,
            "tokens": self.llm.count_tokens(text) if hasattr(self.llm, "count_tokens") else None,
        }

    def _answer(self, inbox_id: int, session_id: Any, content: str) -> None:
        assert self.conn is not None
        conn = self.conn
        # 1. the user turn is written (with its embeddings) before anything judges it
        exists = conn.execute(
            "SELECT 1 FROM day_table WHERE inbox_id = %s AND role = 'user'", (inbox_id,)
        ).fetchone()
        if not exists:
            with conn.transaction():
                fields = self._turn_fields(conn, session_id)
                conn.execute(
                    INSERT_TURN,
                    {**fields, **self._embed(content), "role": "user", "content": content,
                     "inbox_id": inbox_id},
                )
                notify(conn, Channel.TURN, "day_table", str(inbox_id))
        # 2. System 1 reply over the recent dialogue (recall and identity: issue #4)
        history = conn.execute(HISTORY, (session_id, self.history_turns)).fetchall()
        messages = [{"role": r, "content": c} for r, c in reversed(history)]
        result = self.llm.chat(messages, temperature=None, max_tokens=None, want_logprobs=False)
        meta = {"fallback": bool(getattr(result, "fallback", False))}
        with conn.transaction():
            self._write_reply(inbox_id, session_id, result.text, meta)

    def _write_reply(
        self, inbox_id: int, session_id: Any, text: str, meta: dict[str, Any]
    ) -> None:
        assert self.conn is not None
        conn = self.conn
        fields = self._turn_fields(conn, session_id)
        conn.execute(
            INSERT_TURN,
            {**fields, **self._embed(text), "role": "assistant", "content": text,
             "inbox_id": None},
        )
        out = conn.execute(
            "INSERT INTO outbox (inbox_id, session_id, content, metadata) "
            "VALUES (%s, %s, %s, %s::jsonb) RETURNING id",
            (inbox_id, session_id, text, json.dumps(meta)),
        ).fetchone()
        conn.execute(
            "UPDATE inbox SET status = CASE WHEN status = 'failed' THEN 'failed' ELSE 'done' END,"
            " processed_at = now() WHERE id = %s",
            (inbox_id,),
        )
        assert out is not None
        notify(conn, Channel.OUTBOX, "outbox", out[0])
        notify(conn, Channel.TURN, "day_table", str(inbox_id))


def _vec(values: Any, half: bool = False) -> str:
    """pgvector's text form; the SQL casts it to vector / halfvec."""
    return "[" + ",".join(f"{float(v):.7g}" for v in values) + "]"
