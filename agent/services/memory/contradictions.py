"""Contradiction resolution (issue 42 item 3; seed 000 §4.5.3): consolidation and the
exit gate flag two memories that disagree (a `contradicts` link); a person decides. The
system never resolves a factual dispute on its own.

A contradiction is named by its link's id. Memory `a` is the older of the two, `b` the
newer. `keep_a` / `keep_b` keep one and supersede the other; `merge` writes a new memory
from both (the text the caller gives; else the consolidation LLM's reconciled statement
when one is configured; else the MERGE_HEURISTIC: the newer statement's words) and
supersedes both. Superseding never deletes: the loser's row stays (status `superseded`),
with a `supersedes` link from the memory that stands, so `cogd why` shows what replaced
it and by which resolution. The resolution is a `contradiction_resolutions` row (one per
link: the schema refuses a second one) and an audit_log row, all in one transaction.

Every call is scoped: with a user, only contradictions whose two memories are that
user's are listed or resolved (another user's id reads "no contradiction", as an unknown
one does); without one (the operator's CLI), every user's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg

from agent.db import audit
from agent.db.queries import query, vector_text
from agent.domain.text import storable_text
from agent.errors import InputError, NotFoundError, ProviderError
from agent.providers.ports import LLM, Embedder

logger = logging.getLogger(__name__)

ACTIONS = {"keep-a": "keep_a", "keep_a": "keep_a", "a": "keep_a",
           "keep-b": "keep_b", "keep_b": "keep_b", "b": "keep_b", "merge": "merge"}
# without a merged text from the caller or a model: the newer statement stands in for the
# reconciled one (it is the user's latest word). Named in the resolution's `how`.
MERGE_HEURISTIC = "newer-statement heuristic (no merge text given, no LLM configured)"
MERGE_SYSTEM = ("Two statements from one person's memory contradict each other. Write one "
                "short statement that reconciles them, keeping what is still true; when "
                "one replaces the other, say so with both (e.g. 'used to ..., now ...'). "
                "Answer with the statement only.")
MAX_TEXT = 2000


class Contradictions:
    """List and resolve one user's flagged contradictions (the CLI, the REPL, MCP, HTTP)."""

    def __init__(self, universal: Embedder, native: Embedder,
                 model: Callable[[], LLM | None] | None = None) -> None:
        """`universal`, `native`: embed a merged statement as the write path does;
        `model`: the consolidation role's LLM when it routes to a real provider, else None
        (Runtime.consolidation_model; asked only when a merge needs a text)."""
        self.universal = universal
        self.native = native
        self._model = model or (lambda: None)

    def open(self, conn: psycopg.Connection[Any], user_id: Any = None,
             limit: int = 100) -> list[dict[str, Any]]:
        """The unresolved contradictions, newest flag first: both texts, ids, dates, who
        flagged them and why."""
        if not 1 <= limit <= 1000:
            raise InputError(f"limit must be 1-1000, got {limit}")
        rows = conn.execute(query("contradictions_open"),
                            {"user_id": user_id, "limit": limit}).fetchall()
        return [_open_row(r) for r in rows]

    def resolve(self, conn: psycopg.Connection[Any], link_id: Any, action: str, *,
                user_id: Any = None, text: str | None = None,
                actor: str = "user") -> dict[str, Any]:
        """Resolve contradiction `link_id`: keep-a, keep-b or merge (with `text`, the
        merged statement; without, the model's or the MERGE_HEURISTIC's). One
        transaction: the merged memory, the resolution row, `supersedes` links, the
        losers superseded (never deleted), the audit row. A second resolve of the same
        contradiction is refused (the resolution's unique key)."""
        how_action = ACTIONS.get(str(action).strip().lower())
        if how_action is None:
            raise InputError(f"action must be keep-a, keep-b or merge, got {action!r}")
        lid = _link_id(link_id)
        if text is not None:
            text = storable_text(text)[0].strip()
            if not text:
                raise InputError("--text is empty")
            if len(text) > MAX_TEXT:
                raise InputError(f"--text is {len(text)} characters; at most {MAX_TEXT}")
            if how_action != "merge":
                raise InputError("--text goes with merge only (keep-a and keep-b keep a "
                                 "memory's own words)")
        with conn.transaction():
            row = conn.execute(query("contradictions_link_for_update"),
                               {"link_id": lid}).fetchone()
            if row is None or (user_id is not None and not (
                    str(row[4]) == str(user_id) and str(row[10]) == str(user_id))):
                raise NotFoundError(f"no contradiction {lid}"
                                    + (" of this user" if user_id is not None else "")
                                    + "; `cogd contradictions` lists the open ones")
            if row[14] is not None:
                raise InputError(f"contradiction {lid} is already resolved ({row[15]}, "
                                 f"resolution {row[14]}, {row[16]:%Y-%m-%d %H:%M} UTC)")
            a = {"id": row[2], "content": row[3], "user_id": row[4], "session_id": row[5],
                 "type": row[6], "importance": float(row[7])}
            b = {"id": row[8], "content": row[9], "user_id": row[10], "session_id": row[11],
                 "type": row[12], "importance": float(row[13])}
            if how_action == "keep_a":
                kept, losers, how = a["id"], [b["id"]], "the user's choice"
            elif how_action == "keep_b":
                kept, losers, how = b["id"], [a["id"]], "the user's choice"
            else:
                merged, how = self._merged_text(a["content"], b["content"], text)
                kept = self._write_merged(conn, lid, a, b, merged, how)
                losers = [a["id"], b["id"]]
            try:
                res = conn.execute(query("contradictions_insert_resolution"), {
                    "link_id": lid, "user_id": b["user_id"], "action": how_action,
                    "kept": kept, "superseded": losers, "how": how, "actor": actor,
                }).fetchone()
            except psycopg.errors.UniqueViolation:  # a concurrent resolve won the race
                raise InputError(f"contradiction {lid} is already resolved") from None
            assert res is not None
            resolution_id, at = res
            meta = json.dumps({"resolution_id": resolution_id, "action": how_action,
                               "link_id": lid})
            for loser in losers:
                conn.execute(query("contradictions_supersede_link"),
                             {"kept": kept, "loser": loser, "metadata": meta})
                conn.execute(query("contradictions_supersede_memory"),
                             {"resolution_id": resolution_id, "loser": loser})
            conn.execute(query("contradictions_mark_link"),
                         {"resolution_id": resolution_id, "link_id": lid})
            audit.append(conn, actor, "resolve_contradiction", f"contradiction:{lid}", {
                "resolution_id": resolution_id, "action": how_action, "kept": str(kept),
                "superseded": [str(x) for x in losers], "how": how})
        return {"contradiction_id": lid, "resolution_id": resolution_id,
                "action": how_action.replace("_", "-"), "kept": str(kept),
                "superseded": [str(x) for x in losers], "how": how,
                "a": str(a["id"]), "b": str(b["id"]), "resolved_at": _iso(at)}

    def _merged_text(self, a: str, b: str, given: str | None) -> tuple[str, str]:
        """The merged statement and who wrote it: the caller, the model, or the
        MERGE_HEURISTIC (the newer statement, b)."""
        if given:
            return given, "merged text given by the user"
        llm = self._model()
        if llm is not None:
            try:
                result = llm.chat([{"role": "system", "content": MERGE_SYSTEM},
                                   {"role": "user", "content": f"Older: {a}\nNewer: {b}"}],
                                  temperature=0.0, max_tokens=120)
                text = " ".join(storable_text(result.text)[0].split()).strip()
                if text and not result.fallback:
                    return text[:MAX_TEXT], f"merged by llm:{llm.model}"
            except ProviderError as exc:  # the heuristic writes it, and says so
                logger.warning("merge: the consolidation model failed: %s", exc)
        return b, MERGE_HEURISTIC

    def _write_merged(self, conn: psycopg.Connection[Any], lid: int, a: dict[str, Any],
                      b: dict[str, Any], text: str, how: str) -> Any:
        uni = self.universal.embed_documents([text], memory_type=b["type"])[0]
        nat = uni if self.native.model_id == self.universal.model_id else (
            self.native.embed_documents([text], memory_type=b["type"])[0])
        row = conn.execute(query("contradictions_merged_insert"), {
            "type": b["type"], "content": text, "universal": vector_text(uni),
            "native": vector_text(nat), "native_model": self.native.model_id,
            "importance": max(a["importance"], b["importance"]),
            "metadata": json.dumps({"merged_from": [str(a["id"]), str(b["id"])],
                                    "contradiction_id": lid, "how": how}),
            "user_id": b["user_id"], "session_id": b["session_id"],
        }).fetchone()
        assert row is not None
        return row[0]


def why_resolutions(conn: psycopg.Connection[Any], memory_id: Any) -> list[dict[str, Any]]:
    """The resolutions that superseded a memory (`why` on a losing memory shows them)."""
    return [{"resolution_id": r[0], "contradiction_id": r[1],
             "action": str(r[2]).replace("_", "-"), "kept": str(r[3]), "how": r[4],
             "actor": r[5], "at": _iso(r[6]), "kept_content": r[7], "kept_status": r[8]}
            for r in conn.execute(query("contradictions_resolution_of_memory"),
                                  {"memory_id": memory_id})]


def _link_id(value: Any) -> int:
    text = str(value).strip().removeprefix("contradiction:")
    if not text.isdigit() or len(text) > 18:
        raise InputError(f"a contradiction id is a number (`cogd contradictions` lists them), "
                         f"got {value!r}")
    return int(text)


def _flagger(meta: dict[str, Any]) -> dict[str, Any]:
    """Who flagged a contradiction and why, from its link's metadata."""
    if "classifier" in meta:
        who = f"consolidation ({meta['classifier']})"
    elif "detector" in meta:
        who = f"exit gate ({meta['detector']})"
    else:
        who = "unknown"
    return {"by": who, "reason": meta.get("reason")}


def _open_row(r: Any) -> dict[str, Any]:
    meta = r[2] if isinstance(r[2], dict) else {}
    return {"id": int(r[0]), "flagged_at": _iso(r[1]), "flagged": _flagger(meta),
            "similarity": None if r[3] is None else round(float(r[3]), 3),
            "a": {"memory_id": str(r[4]), "content": r[5], "status": r[6],
                  "created_at": _iso(r[7]), "type": r[8]},
            "b": {"memory_id": str(r[9]), "content": r[10], "status": r[11],
                  "created_at": _iso(r[12]), "type": r[13]},
            "user": r[15]}


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value
