"""Claim slots in Postgres (issue 39 item 5; seed 004, Personal Model): recording a
memory's claims as it is written, the claim states recall ranks by, and a slot's history
for `cogd why`.

A memory is read by the SLOT_HEURISTIC (agent/domain/claims.py) when the exit gate or an
explicit /remember writes it. Its subject is the speaker of its turn (a named speaker of
an import, else "user"); the assistant's words claim nothing about the user. For each
slot it fills, in the memory's transaction, under a per-slot lock:
- the newest statement of the slot becomes its current claim, and the current one is
  retired: kept, `retired_by` the new memory, `retired_at` the new statement's time;
- a back-dated statement (an import's older line) is placed in time: retired by the
  claim after it, and the claim before it re-linked to it;
- a statement that repeats the value that held at its time adds no claim.
Nothing is deleted (consolidation supersedes, never destroys); the partial unique index
ux_claims_current holds one current claim per user, subject and slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain.claims import SLOT_HEURISTIC, ClaimState, detect, same_value

USER_SUBJECT = "user"  # the subject of a turn with no named speaker


def subject_of(speaker: str | None) -> str:
    return " ".join(speaker.casefold().split()) if speaker and speaker.strip() else USER_SUBJECT


def record(conn: psycopg.Connection[Any], memory_id: Any) -> list[dict[str, Any]]:
    """The claims the memory makes, written (see the module's docstring); what was done,
    one entry per slot it fills. Runs in the caller's transaction."""
    row = conn.execute(query("claims_memory"), (memory_id,)).fetchone()
    if row is None:
        return []
    mid, user_id, content, when, speaker, role = row
    if user_id is None or role == "assistant":
        return []
    subject = subject_of(speaker)
    done: list[dict[str, Any]] = []
    for found in detect(content):
        key = {"user_id": user_id, "subject": subject, "slot": found.slot}
        conn.execute(query("claims_slot_lock"), key)
        history = conn.execute(query("claims_slot_history"), key).fetchall()
        if any(h[1] == mid for h in history):
            continue  # recorded already
        older = [h for h in history if h[4] <= when]
        newer = [h for h in history if h[4] > when]
        prev, nxt = (older[-1] if older else None), (newer[0] if newer else None)
        if prev is not None and same_value(prev[2], found.value):
            continue  # it restates the claim that held then
        entry = {"slot": found.slot, "subject": subject, "value": found.value}
        if nxt is None:  # the newest statement: the current claim
            if prev is not None and prev[3] == "current":
                conn.execute(query("claims_retire"),
                             {"claim_id": prev[0], "at": when, "by": mid})
                entry["retired"] = str(prev[1])
            status, retired_at, retired_by = "current", None, None
        else:  # back-dated: the claim after it retires it; the one before now leads to it
            status, retired_at, retired_by = "retired", nxt[4], nxt[1]
            if prev is not None and prev[6] == nxt[1]:
                conn.execute(query("claims_retire"),
                             {"claim_id": prev[0], "at": when, "by": mid})
        conn.execute(query("claims_insert"), {
            **key, "memory_id": mid, "value": found.value, "status": status,
            "valid_from": when, "retired_at": retired_at, "retired_by": retired_by,
            "detector": SLOT_HEURISTIC})
        done.append({**entry, "status": status})
    return done


def states(conn: psycopg.Connection[Any], memory_ids: Sequence[str],
           turn_ids: Sequence[str]) -> dict[str, ClaimState]:
    """The claim state of recall's candidates, by candidate id ("memory:<id>",
    "day_table:<id>": a turn carries the claim of the memory made from it). An item with
    claims on several slots counts as current when any of them is."""
    if not memory_ids and not turn_ids:
        return {}
    out: dict[str, ClaimState] = {}
    for key, status, valid_from, retired_at, replaced in conn.execute(
            query("claims_of_candidates"), {"memories": list(memory_ids),
                                            "turns": list(turn_ids)}):
        state = ClaimState(status, valid_from, retired_at, bool(replaced))
        held = out.get(key)
        if held is None or (held.status == "retired" and status == "current"):
            out[key] = state
    return out


def history(conn: psycopg.Connection[Any], memory_id: Any) -> list[dict[str, Any]]:
    """Every claim of the slots the memory claims, oldest first (`cogd why`): slot,
    subject, value, status, since, retired_at, retired_by, the claim's memory and words,
    and whether it is this memory's."""
    return [{"slot": r[0], "subject": r[1], "value": r[2], "status": r[3],
             "since": r[4], "retired_at": r[5],
             "retired_by": None if r[6] is None else str(r[6]), "memory_id": str(r[7]),
             "content": r[8], "detector": r[9], "this": bool(r[10])}
            for r in conn.execute(query("claims_history"), {"memory_id": memory_id})]
