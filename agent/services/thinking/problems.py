"""The problem queue (seed 000 §9.5) and the overnight thoughts written from it: what the
night cycle's thinking phase (night_cycle/stages/thinking.py) works on, and
`cogd problems`.

Four sources fill the queue, each keyed (problem_queue.source_key, unique) so a re-run
adds nothing twice:
- open questions: a user turn with a "?" whose recall found nothing (recall_log verdict
  no_match): the "no-match-question heuristic";
- contradictions: two active memories of one user linked 'contradicts';
- failed predictions: predictions settled 'wrong';
- user-submitted problems (`cogd problems add TEXT --user U`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import overnight as rules
from agent.errors import InputError

MAX_PROBLEM_CHARS = 4000  # cogd choice: a problem is a question, not a document
FILLS = {"open_question": "problems_fill_open_questions",
         "contradiction": "problems_fill_contradictions",
         "failed_prediction": "problems_fill_failed_predictions"}


@dataclass(frozen=True)
class Problem:
    problem_id: str
    user_id: Any
    kind: str
    content: str
    source_ids: tuple[str, ...]


def fill(conn: psycopg.Connection[Any], since: datetime, cutoff: datetime) -> dict[str, int]:
    """Queue what the day left open (new rows per kind; existing keys are skipped)."""
    out = {}
    for kind, name in FILLS.items():
        out[kind] = len(conn.execute(query(name), {"since": since, "cutoff": cutoff})
                        .fetchall())
    return out


def open_batch(conn: psycopg.Connection[Any], limit: int) -> list[Problem]:
    if limit <= 0:
        return []
    return [Problem(str(r[0]), r[1], r[2], r[3], tuple(r[4] or ()))
            for r in conn.execute(query("problems_open"), (limit,))]


def worked_in_run(conn: psycopg.Connection[Any], run_id: int) -> int:
    row = conn.execute(query("problems_worked_in_run"), (run_id,)).fetchone()
    return int(row[0]) if row else 0


def write_thought(conn: psycopg.Connection[Any], *, thought_id: str, kind: str, content: str,
                  theme: str, sources: list[str], user_id: Any, confidence: float) -> None:
    """Insert a thought under its derived id (nothing when it exists already)."""
    conn.execute(query("overnight_thought_insert"), {
        "id": thought_id, "kind": kind, "content": content, "theme": theme,
        "sources": json.dumps(sources), "user": user_id, "confidence": confidence})


def mark_worked(conn: psycopg.Connection[Any], problem_id: str, thought_id: str,
                run_id: int) -> None:
    conn.execute(query("problems_mark_worked"),
                 {"problem": problem_id, "thought": thought_id, "run": run_id})


def existing_thoughts(conn: psycopg.Connection[Any], ids: list[str]) -> set[str]:
    if not ids:
        return set()
    return {r[0] for r in conn.execute(query("overnight_thoughts_existing"), (ids,))}


def of_run(conn: psycopg.Connection[Any], theme: str) -> list[tuple[Any, ...]]:
    """The overnight and creative-drift thoughts a run wrote (kind, content, confidence,
    user handle, id), for the morning brief."""
    return [tuple(r) for r in conn.execute(query("overnight_thoughts_of_run"), (theme,))]


def add(conn: psycopg.Connection[Any], user_id: Any, text: str) -> dict[str, Any]:
    """Queue a user's problem; the same text twice is the same problem (an error)."""
    content = " ".join((text or "").split())
    if not content:
        raise InputError("the problem is empty: give its text, e.g. "
                         "`cogd problems add \"why do the builds fail on Mondays?\" --user U`")
    if len(content) > MAX_PROBLEM_CHARS:
        raise InputError(f"the problem is {len(content)} characters; at most "
                         f"{MAX_PROBLEM_CHARS}")
    key = rules.user_problem_key(str(user_id), content)
    with conn.transaction():
        row = conn.execute(query("problems_add"),
                           {"user": user_id, "content": content, "key": key}).fetchone()
    if row is None:
        have = conn.execute(query("problems_by_key"), (key,)).fetchone()
        state = f" ({have[1]})" if have else ""
        raise InputError(f"this problem is already queued as {have[0] if have else '?'}"
                         f"{state}; `cogd problems --user U` lists them")
    return {"problem_id": str(row[0]), "kind": "user_submitted", "status": "open",
            "content": content}


def listing(conn: psycopg.Connection[Any], user_id: Any, *, show_all: bool = False,
            k: int = 50) -> list[dict[str, Any]]:
    rows = conn.execute(query("problems_list"), {"user": user_id, "all": show_all, "k": k})
    return [{"problem_id": str(r[0]), "kind": r[1], "status": r[2], "content": r[3],
             "source_ids": r[4] or [], "attempts": r[5], "last_run_id": r[6],
             "result_thought_id": None if r[7] is None else str(r[7]), "result": r[8],
             "confidence": r[9], "created_at": r[10], "updated_at": r[11]} for r in rows]
