"""What the web console's Overnight, Mind and Health pages show (issue 44), as plain data.

Each function reads rows for one page; the page (agent/commands/console/) draws them.
Everything per user is filtered to that user here (their rows, and rows of no user where
the prompt would show those too). Health is installation-wide: counts and timings, never
a row's text. The queries are in agent/db/sql/console_views.sql; where a service already
reads the same thing (the brief, predictions, calibration, principles, intentions,
processes, row counts), its function or named query is reused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg

from agent.db import catalog
from agent.db.queries import query
from agent.domain.broad import ClusterNode, leaf_ids
from agent.services.thinking.models_principles import list_principles
from agent.services.thinking.predictions import PredictionTracker

STAGE_NAMES = {1: "flux", 2: "blocks", 3: "salience", 4: "compression", 5: "embedding",
               6: "storage", 7: "migration", 8: "clustering", 9: "cleanup", 10: "thinking"}
MAX_TREE_NODES = 400  # the drawing stays readable; the rest are counted, not drawn


# -- Overnight -------------------------------------------------------------------------

@dataclass(frozen=True)
class VisibleNode:
    """A RAPTOR node the user may see: every block under it is theirs or of no user."""

    node: ClusterNode
    parent_id: str | None
    blocks: list[str]  # its blocks (all levels: the level-1 blocks below it)


def latest_brief(conn: psycopg.Connection[Any], user_id: Any) -> dict[str, Any] | None:
    """The user's newest morning brief (night_briefs: their own, never the run's brief.md)."""
    row = conn.execute(query("introspect_latest_brief"), {"user_id": user_id}).fetchone()
    if row is None:
        return None
    return {"run_id": row[0], "finished_at": row[1], "content": row[2]}


def night_runs(conn: psycopg.Connection[Any], limit: int = 10) -> list[dict[str, Any]]:
    """The newest runs, each stage's seconds and numeric counts (a run is installation-
    wide; its error text and any text in a summary are left out)."""
    out = []
    for run_id, started, finished, status, stage, stages in conn.execute(
            query("console_view_night_runs"), {"limit": limit}):
        rows: list[dict[str, Any]] = []
        for number, summary in sorted((stages or {}).items(), key=lambda kv: int(kv[0])):
            summary = summary if isinstance(summary, dict) else {}
            counts = {k: v for k, v in summary.items() if k != "seconds"
                      and isinstance(v, int | float) and not isinstance(v, bool)}
            seconds = summary.get("seconds")
            rows.append({"stage": int(number), "name": STAGE_NAMES.get(int(number), "?"),
                         "seconds": float(seconds) if isinstance(seconds, int | float) else None,
                         "counts": counts})
        total = sum(float(r["seconds"] or 0.0) for r in rows)
        out.append({"run_id": run_id, "started_at": started, "finished_at": finished,
                    "status": status, "stage": stage, "stages": rows,
                    "seconds": round(total, 3)})
    return out


def visible_tree(conn: psycopg.Connection[Any], user_id: Any, nodes: Sequence[ClusterNode]
                 ) -> tuple[list[VisibleNode], dict[str, dict[str, Any]], int]:
    """The RAPTOR nodes the user may see (the rule recall's broad questions use:
    agent/domain/broad.py), each with its blocks, the blocks' rows by id (prose, time),
    and how many nodes were hidden (another user's blocks under them, or over the cap)."""
    leaves = leaf_ids(nodes)
    known = {n.cluster_id for n in nodes}
    parents = {m: n.cluster_id for n in nodes if n.level > 1 for m in n.member_ids
               if m in known}
    wanted = sorted({b for ids in leaves.values() for b in ids})
    blocks: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(wanted, 5000):
        for bid, shared, prose, start, end in conn.execute(
                query("console_view_blocks_of_user"), {"ids": chunk, "user_id": user_id}):
            blocks[bid] = {"block_id": bid, "shared": bool(shared),
                           "prose": prose if isinstance(prose, dict) else json.loads(prose),
                           "start": start, "end": end}
    shown = [VisibleNode(n, parents.get(n.cluster_id), leaves.get(n.cluster_id, []))
             for n in nodes
             if leaves.get(n.cluster_id) and all(b in blocks for b in leaves[n.cluster_id])]
    shown.sort(key=lambda v: (-v.node.level, v.node.cluster_id))
    hidden = len(nodes) - len(shown)
    if len(shown) > MAX_TREE_NODES:
        hidden += len(shown) - MAX_TREE_NODES
        shown = shown[:MAX_TREE_NODES]
    ids = {v.node.cluster_id for v in shown}
    shown = [VisibleNode(v.node, v.parent_id if v.parent_id in ids else None, v.blocks)
             for v in shown]
    used = {b for v in shown for b in v.blocks}
    return shown, {b: row for b, row in blocks.items() if b in used}, hidden


def _chunks(items: list[str], n: int) -> Iterable[list[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


# -- Mind ------------------------------------------------------------------------------

def _weight_series(rows: Iterable[tuple[Any, ...]], now: datetime
                   ) -> dict[str, list[tuple[datetime, float]]]:
    """name -> (time, weight) points: where it started, each change, and now."""
    series: dict[str, list[tuple[datetime, float]]] = {}
    current: dict[str, float] = {}
    for name, weight, created, old, new, changed in rows:
        pts = series.setdefault(name, [])
        current[name] = float(weight)
        if not pts:  # where it started: its creation, or its first change if earlier
            start = created if changed is None else min(created, changed)
            pts.append((start, float(old if old is not None else weight)))
        if changed is not None and new is not None:
            pts.append((changed, float(new)))
    for name, pts in series.items():
        pts.append((now, current[name]))
    return series


def mind(conn: psycopg.Connection[Any], user_id: Any, handle: str,
         emotion_points: int = 500) -> dict[str, Any]:
    """Identity and goal weights over time, the emotional state over time, predictions
    and their calibration, principles and open intentions, of this user."""
    now = datetime.now(UTC)
    identity_rows = conn.execute(query("console_view_identity_history")).fetchall()
    boundaries = sorted({r[0] for r in identity_rows if r[2]})
    identity = _weight_series(((r[0], r[1], r[3], r[4], r[5], r[6]) for r in identity_rows), now)
    goal_rows = conn.execute(query("console_view_goal_history"), {"user_id": user_id}).fetchall()
    goals = _weight_series(((r[0], r[1], r[3], r[4], r[5], r[6]) for r in goal_rows), now)
    shared_goals = sorted({r[0] for r in goal_rows if r[2]})
    emotion = [{"at": r[0], "valence": float(r[1]), "energy": float(r[2]),
                "openness": float(r[3]), "label": r[4]}
               for r in conn.execute(query("console_view_emotion_series"),
                                     {"user_id": user_id, "limit": emotion_points})]
    calibration = PredictionTracker.calibration(conn, user_id)
    intentions = [{"id": str(r[0]), "kind": r[1], "content": r[2], "due_at": r[3],
                   "urgency": r[4], "carried": r[5], "created_at": r[6]}
                  for r in conn.execute(query("introspect_intentions_of_user"), {
                      "user_id": user_id, "status": "open", "limit": 50})]
    return {
        "identity": identity, "boundaries": boundaries,
        "goals": goals, "shared_goals": shared_goals,
        "emotion": emotion,
        "predictions": PredictionTracker.of_user(conn, user_id, limit=30),
        "calibration": calibration, "calibration_bins": calibration_bins(calibration),
        "principles": list_principles(conn, handle),
        "intentions": intentions,
    }


def calibration_bins(rows: Sequence[dict[str, Any]]) -> list[tuple[float, float, int]]:
    """v_calibration's (domain, bucket) rows pooled per confidence bucket: (stated,
    observed, settled), each a mean weighted by the settled count."""
    pooled: dict[int, list[float]] = {}
    for r in rows:
        acc = pooled.setdefault(int(r["bucket"]), [0.0, 0.0, 0.0])
        n = float(r["settled"])
        acc[0] += r["stated"] * n
        acc[1] += r["hit_rate"] * n
        acc[2] += n
    return [(s / n, h / n, int(n)) for _, (s, h, n) in sorted(pooled.items()) if n > 0]


# -- Health ----------------------------------------------------------------------------

QUEUES = ("inbox pending", "inbox processing", "inbox failed", "outbox undelivered",
          "scratch buffer pending", "vectors to embed", "open problems")


def health(conn: psycopg.Connection[Any], tables: Sequence[str], latency_days: int = 7,
           latency_rows: int = 10_000) -> dict[str, Any]:
    """`cogd status` as data (installation-wide, no row's text): processes and their
    heartbeats, queue depths, recall latency p50/p95 per hour over the last
    `latency_days` (the newest `latency_rows` recalls at most: the page's time stays
    bounded on a busy installation; `latency_capped` says when the cap cut), row counts."""
    procs = [{k: p[k] for k in ("name", "pid", "host", "state", "last_beat", "alive")}
             for p in catalog.processes(conn)]
    row = conn.execute(query("console_view_queues")).fetchone()
    queues = dict(zip(QUEUES, (int(v) for v in row or ()), strict=False))
    latency = [{"hour": r[0], "p50": float(r[1]), "p95": float(r[2]), "recalls": int(r[3])}
               for r in conn.execute(query("console_view_recall_latency"),
                                     {"days": latency_days, "max_rows": latency_rows})]
    return {"processes": procs, "queues": queues, "recall_latency": latency,
            "latency_days": latency_days, "latency_rows": latency_rows,
            "latency_capped": sum(r["recalls"] for r in latency) >= latency_rows,
            "rows": catalog.row_counts(conn, tables)}
