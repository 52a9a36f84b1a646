"""Preoccupation centroids in the hippocampus (seed 001 §5.6): load, bootstrap, evolve.

Bootstrap (§5.6.2) runs once, when no centroid exists: from the questions listed in
[night_cycle] bootstrap_preoccupations if any, else from the first cycle's user turns
(a named proxy for "the questions Hermes extracts from a founding corpus"): HDBSCAN over
their universal embeddings, one founding centroid per cluster (or one for all of them).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from agent.db.queries import query, vector_text
from agent.domain.night_raptor import Clusterer, mitosis, unit_rows
from night_cycle.vectors import Vec, parse_vector

CENTROID_NAMESPACE = uuid.UUID("c4a7e2d0-3b8f-4e61-9f0a-2d5b7c9e1a34")
@dataclass(frozen=True)
class Centroid:
    id: str
    label: str
    vector: Vec
    weight: float
    member_count: int


def centroid_id(kind: str, members: Sequence[str]) -> str:
    return str(uuid.uuid5(CENTROID_NAMESPACE, f"{kind}:" + ",".join(sorted(members))))


def active(conn: psycopg.Connection[Any]) -> list[Centroid]:
    rows = conn.execute(
        query("night_centroids_active")
    ).fetchall()
    out = []
    for r in rows:
        vec = parse_vector(r[2])
        if vec is not None:
            out.append(Centroid(r[0], r[1], vec, float(r[3]), int(r[4])))
    return out


def any_exist(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute(query("night_centroids_any")).fetchone()
    return bool(row and row[0])


def insert(conn: psycopg.Connection[Any], cid: str, label: str, vector: Vec, kind: str,
           weight: float, members: int, parents: Sequence[str] = ()) -> None:
    conn.execute(query("night_centroids_insert"),
                 (cid, label[:200], vector_text(vector), kind, weight, members,
                  json.dumps(list(parents))))


def bootstrap(
    conn: psycopg.Connection[Any],
    questions: Sequence[str],
    vectors: Vec,
    cluster: Clusterer,
    *,
    min_size: int,
    pca_dims: int,
    points_per_dim: int = 25,
    min_samples: int = 2,
    source: str,
) -> int:
    """Founding centroids from question texts and their universal vectors; returns how many."""
    if len(questions) == 0:
        return 0
    x = unit_rows(np.asarray(vectors, dtype=np.float32))
    found = (mitosis(x, cluster, min_size, pca_dims, points_per_dim, min_samples)
             if source == "first_cycle" else [])
    groups = [(list(m.member_indices), m.centroid, m.central_index) for m in found]
    if source == "config":
        groups = [([i], x[i], i) for i in range(len(questions))]
    if not groups:
        whole = unit_rows(x.mean(axis=0)[None, :])[0]
        central = int(np.argmax(x @ whole))
        groups = [(list(range(len(questions))), whole, central)]
    for members, vec, central in groups:
        label = questions[central]
        cid = centroid_id("founding", [questions[i] for i in members])
        insert(conn, cid, f"{label} ({source})", vec, "founding", 1.0, len(members))
    return len(groups)
