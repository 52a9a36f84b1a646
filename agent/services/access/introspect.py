"""What the REPL's slash commands and the memory commands show: plain text from rows.

/identity /goals /status /recall /why /remember /forget (agent/commands/chat.py)
and `cogd recall` share these, so both read the same tables the same way; `why` is also
the HTTP API's and the MCP server's (agent/services/access/memory_api.py).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg

from agent.db import audit, catalog
from agent.db.queries import query
from agent.domain.prompt import IdentityConfig, identity_hash
from agent.errors import InputError
from agent.services.memory import claims
from agent.services.records.identity import load_traits

if TYPE_CHECKING:
    from agent.services.thinking.decisions import DecisionTracker


def identity_text(conn: psycopg.Connection[Any], cfg: IdentityConfig) -> str:
    traits = load_traits(conn)
    if not traits:
        return "identity is blank (no boundaries yet: the loop adds them on its first turn)"
    return identity_hash(traits, [], cfg)


def goals_text(conn: psycopg.Connection[Any]) -> str:
    """The operator's list: every active goal, and whose it is (a promoted goal is its
    user's and reaches only that user's prompt)."""
    goals = conn.execute(query("introspect_all_goals")).fetchall()
    if not goals:
        return ("no active goals yet: consolidation promotes one when something you say "
                "recurs (by default 5 times over 14 days); `cogd proposals` lists the values "
                "waiting for your approval")
    return "\n".join(f"{w:.2f}  {name}: {desc}  ({'user ' + who if who else 'everyone'})"
                     for name, w, desc, who in goals)


def status_text(conn: psycopg.Connection[Any]) -> str:
    procs = conn.execute(query("introspect_processes")).fetchall()
    counts = catalog.row_counts(conn, ("day_table", "scratch_buffer", "memories",
                                       "gate_decisions", "recall_log"))
    lines = [f"{n} pid {p}: {s}{'' if a else ' (stale)'}" for n, p, s, a in procs] or [
        "no worker processes (answering in-process)"
    ]
    lines.append("  ".join(f"{t}={c}" for t, c in counts.items()))
    return "\n".join(lines)


def format_recall(payload: dict[str, Any]) -> str:
    lines = [f"verdict: {payload['verdict']}  ({payload['latency_ms']:.0f} ms, "
             f"{payload['candidates']} candidates)"]
    if payload.get("window"):
        w = payload["window"]
        lines.append(f"  asks about {w['phrase']!r}: {w['start'][:10]} .. {w['end'][:10]}")
    if payload.get("broad"):
        b = payload["broad"]
        lines.append(f"  broad question ({b['detector']}, cue {b['cue']!r}): "
                     f"{b['nodes']} RAPTOR node(s)")
    for i in payload["items"]:
        text = " ".join(i["content"].split())
        if len(text) > 160:
            text = text[:157] + "..."
        said = " ".join(x for x in (
            (i.get("created_at") or "")[:10], f"{i['speaker']}:" if i.get("speaker") else "") if x)
        lines.append(f"  {i['verdict']:<12} {i['score']:.3f}  {i['id']}  "
                     f"{said + ' ' if said else ''}{text}")
        ext = i["sources"]["external"]
        if ext:
            lines.append(f"  {'':<12} sources: {', '.join(ext)}")
        blocks = i["sources"].get("blocks") or []  # a RAPTOR node's member blocks
        if blocks:
            lines.append(f"  {'':<12} blocks: " + ", ".join(
                f"{b['block_id']} ({(b['end'] or b['start'] or '')[:10]})" for b in blocks))
    return "\n".join(lines)


def recall_payload(outcome: Any) -> dict[str, Any]:
    r = outcome.result
    return {
        "query": outcome.query_text,
        "verdict": r.verdict,
        "latency_ms": round(outcome.latency_ms, 2),
        "candidates": r.candidates,
        "reranked": r.reranked,
        "window": None if r.window is None else r.window.as_dict(),
        "rewrites": r.rewrites,
        "rewritten_by": r.rewritten_by,
        "broad": r.broad,  # the broad-question heuristic's decision, when it fired
        "items": [i.as_dict() for i in r.items],
    }


def why(conn: psycopg.Connection[Any], decisions: DecisionTracker, recaller: Any, target: str,
        *, user_id: Any = None, handle: str | None = None) -> dict[str, Any]:
    """Where a memory comes from: the one `why` behind `cogd why`, the REPL's /why,
    GET /v1/memories/{id}/why and the MCP tool `why` (`why_lines` prints it).

    `target`: a memory id, or text: the best-matching memory recall finds, else (recall
    returns active memories) the newest memory whose text contains it, a superseded one
    with the insights that hold it now. The chain follows `supersedes` links from
    insights to their sources, down to the day_table turns; then the reasoning trails
    (decisions, seed 000 §8.2-8.3) of those memories and turns, or matching the text.

    `user_id`: the caller's user. Only that user's memories and those of no user are
    explained (another user's memory is "no memory"); a chain node of another user's (an
    insight merged across users) shows that it exists, not what it says; the trails are
    that user's and no user's. None: every user's, the operator's view (`cogd why`
    without --user only). `decisions`: the reasoning trails' reader (Runtime's
    decision_tracker)."""
    from agent.domain.text import storable_text
    from agent.services.background.consolidation import held_by
    from agent.services.background.consolidation import why as chain
    from agent.services.memory.contradictions import why_resolutions

    target = storable_text(target)[0].strip()  # Postgres text holds no NUL
    if not target:
        raise InputError("give a memory id or some text")
    of = f" of {handle!r}" if handle and user_id is not None else ""
    text: str | None = None
    memory_id: Any = parse_uuid(target.removeprefix("memory:"))
    if memory_id is None:
        text = target
        out = recaller.recall(conn, text, log=False, user_id=user_id)
        mems = [i for i in out.result.items if i.kind == "memory"]
        if mems:
            memory_id = mems[0].id.split(":", 1)[1]
        else:
            row = conn.execute(query("introspect_memory_containing"),
                               {"text": text, "user_id": user_id}).fetchone()
            memory_id = None if row is None else row[0]  # a trail may still match the text
    elif user_id is not None and conn.execute(query("introspect_memory_visible"), {
            "memory_id": memory_id, "user_id": user_id}).fetchone() is None:
        raise InputError(f"no memory {memory_id}{of}")
    nodes = chain(conn, memory_id) if memory_id is not None else []
    if nodes and nodes[0]["status"] != "active":
        nodes[0]["held_by"] = held_by(conn, nodes[0]["memory_id"])
        # a contradiction resolved against it (issue 42 item 3): which resolution, and what
        # stands instead
        resolved = why_resolutions(conn, nodes[0]["memory_id"])
        if resolved:
            nodes[0]["resolved_by"] = resolved
    trails = decisions.trails(
        conn, memories=[n["memory_id"] for n in nodes],
        entries=[n["turn"]["entry_id"] for n in nodes if n["turn"]], text=text,
        query_vec=recaller.embedder.embed_query(text) if text else None, user_id=user_id)
    if not nodes and not trails:
        raise InputError(f"no memory {target}{of}" if text is None
                         else f"no memory or decision{of} matches {target!r}")
    if user_id is not None:
        _hide_others(conn, nodes, user_id)
    return json_ready({"user": handle, "memory_id": None if memory_id is None
                       else str(memory_id), "chain": nodes, "trails": trails})


def _hide_others(conn: psycopg.Connection[Any], nodes: list[dict[str, Any]],
                 user_id: Any) -> None:
    """Another user's memories in a chain (an insight merged across users): the node says
    that it exists, not what it says nor its turn."""
    held = [h for n in nodes for h in n.get("held_by", [])]
    foreign = {str(r[0]) for r in conn.execute(query("introspect_memories_not_of_user"), {
        "ids": [n["memory_id"] for n in [*nodes, *held]], "user_id": user_id})}
    for n in [*nodes, *held]:
        if str(n["memory_id"]) in foreign:
            n["content"] = None
            n["hidden"] = "another user's memory"
            if n.get("turn"):
                n["turn"] = None


def why_lines(found: dict[str, Any]) -> list[str]:
    """`why`'s answer as `cogd why` and the REPL's /why print it: the chain, indented by
    depth, each node's turn after `<-`, then the reasoning trails."""
    def said(node: dict[str, Any]) -> str:
        content = node.get("content")
        return (f"({node.get('hidden', 'hidden')})" if content is None
                else " ".join(content.split())[:160])

    lines: list[str] = []
    for n in found["chain"]:
        pad = "  " * n["depth"]
        lines.append(f"{pad}{n['type']} {n['memory_id']} ({n['status']}, importance "
                     f"{float(n['importance'] or 0):.2f}): {said(n)}")
        for r in n.get("resolved_by", []):  # a resolution superseded it (issue 42)
            lines.append(f"{pad}  superseded by contradiction resolution {r['resolution_id']} "
                         f"(contradiction {r['contradiction_id']}, {r['action']}, {r['how']}, "
                         f"{str(r['at'])[:16].replace('T', ' ')}): memory {r['kept']} stands")
        for h in n.get("held_by", []):
            lines.append(f"{pad}  held by insight {h['memory_id']} ({h['status']}): "
                         f"{said(h)}")
        if n["turn"]:
            t = n["turn"]
            at = str(t["at"] or "")[:16].replace("T", " ")
            lines.append(f"{pad}  <- turn {t['entry_id']} ({t['role']}, {at}"
                         f"{', ' + t['external_id'] if t['external_id'] else ''})")
        for c in n.get("claims", []):  # the history of the slots it claims, oldest first
            since = str(c["since"] or "")[:10]
            state = (f"current since {since}" if c["status"] == "current" else
                     f"retired {str(c['retired_at'] or '')[:10]} by "
                     f"{c['retired_by'] or 'a forgotten memory'}, since {since}")
            lines.append(f"{pad}  claim {c['slot']} of {c['subject']}: {c['value']} ({state})"
                         f"{' <- this memory' if c['this'] else ''}: memory {c['memory_id']}"
                         f": {' '.join(c['content'].split())[:120]}")
    return lines + trail_lines(found["trails"])


def trail_lines(trails: list[dict[str, Any]], pad: str = "") -> list[str]:
    """A reasoning trail (seed 000 §8.2-8.3) as `cogd why` prints it: the decision, the
    alternatives considered and why not, the rationale, the outcome and its lesson."""
    lines: list[str] = []
    for t in trails:
        lines.append(f"{pad}Decision: {' '.join(t['decision'].split())}  "
                     f"[decision:{t['decision_id']}, {t['detector']}]")
        alts = [a.get("option", "") + (f" ({a['why_not']})" if a.get("why_not") else "")
                for a in t["alternatives"] if isinstance(a, dict)]
        considered = "; ".join(alts) if alts else "(no alternatives recorded)"
        lines.append(f"{pad}Considered: {considered}")
        lines.append(f"{pad}Because: {t['rationale'] or '(no reason recorded)'}")
        if t["outcome"]:
            lines.append(f"{pad}Outcome: {' '.join(t['outcome'].split())} ({t['assessment']})")
        else:
            lines.append(f"{pad}Outcome: not known yet")
        if t.get("lesson"):
            lines.append(f"{pad}Lesson: {t['lesson']}")
    return lines


def remember(
    conn: psycopg.Connection[Any], loop: Any, session_id: Any, user_id: Any, text: str
) -> Any:
    """An explicit memory: written as a day_table turn first, then persisted."""
    from agent.services.records.turns import TurnInput

    with conn.transaction():
        written = loop.writer.write(
            conn, [TurnInput(session_id=session_id, user_id=user_id, role="user",
                             content=text, message_type="system")],
        )
        entry = written[0]
        assert entry is not None
        row = conn.execute(
            query("introspect_remember"),
            (loop_hint(text, loop.writer.gate_cfg), json.dumps({"gate": "explicit /remember"}),
             entry.entry_id),
        ).fetchone()
        assert row is not None
        claims.record(conn, row[0])  # its claims on slots (issue 39 item 5)
        audit.append(conn, "user", "remember", str(row[0]), {"entry_id": str(entry.entry_id)})
    return row[0]


def loop_hint(text: str, gate_cfg: Any) -> str:
    from agent.domain.gates import memory_type_hint, rule_signals

    return memory_type_hint(text, rule_signals(text, "user", gate_cfg))


def forget(conn: psycopg.Connection[Any], arg: str) -> str:
    """Archive a memory: never deleted, still queryable, audit-logged."""
    try:
        mid = uuid.UUID(arg.strip().removeprefix("memory:"))
    except ValueError:
        raise InputError(f"/forget needs a memory id (a uuid), got {arg!r}") from None
    with conn.transaction():
        row = conn.execute(
            query("introspect_archive_memory"), (mid,),
        ).fetchone()
        if row is None:
            raise InputError(f"no memory {mid}")
        audit.append(conn, "user", "forget", str(mid), {"status": "archived"})
    return f"memory {mid} archived (kept, still searchable; see audit_log)"


def parse_uuid(text: str) -> uuid.UUID | None:
    """The uuid `text` spells, or None."""
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def json_ready(value: Any) -> Any:
    """JSON-ready: datetimes as ISO text, uuids as text, recursively."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value
