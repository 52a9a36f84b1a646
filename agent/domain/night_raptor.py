"""RAPTOR tree, centroid mitosis and fusion (seed 001 §5.4, §5.6; night-cycle stage 8).

Level 1 clusters the cortex blocks' universal embeddings; each higher level clusters
the nodes of the level below, up to level 3 (branch, trunk, canopy). Clustering runs on
an SVD projection to at most 20 dimensions; the density clusterer itself (HDBSCAN) is
passed in, so this module stays pure. Blocks or nodes the clusterer calls noise stay
unparented (still searchable at their own level). Node ids are derived from their
members, so the same cortex gives the same tree.

Mitosis: a dense cluster of antechamber questions becomes a satellite preoccupation
centroid. Fusion: centroids that drift within the fusion similarity merge into one
(weighted average); the originals are retired, never deleted.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
# (points, min_cluster_size, min_samples, allow_single_cluster) -> a label per point, -1 noise
Clusterer = Callable[[Matrix, int, int, bool], npt.NDArray[np.int64]]
NODE_NAMESPACE = uuid.UUID("5f0c6a4e-9a57-4c55-8d0b-3a1f6f3c2b71")


def unit_rows(x: Matrix) -> Matrix:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (x / norms).astype(np.float32)


def reduce_dims(x: Matrix, dims: int, points_per_dim: int = 25) -> Matrix:
    """Centre and project onto the top singular directions (numpy SVD, no sklearn): at
    most `dims`, and at most one dimension per `points_per_dim` points (a density estimate
    needs many points per dimension), never below 2."""
    n, d = x.shape
    k = max(1, min(dims, max(2, n // max(1, points_per_dim)), n - 1, d))
    centred = x - x.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return (centred @ vt[:k].T).astype(np.float32)


def node_id(level: int, member_ids: Sequence[str]) -> str:
    return str(uuid.uuid5(NODE_NAMESPACE, f"{level}:" + ",".join(sorted(member_ids))))


@dataclass
class TreeNode:
    id: str
    level: int
    member_ids: list[str]  # children: block ids at level 1, node ids above
    centroid: Matrix
    leaf_count: int
    parent_id: str | None = None
    leaf_ids: list[str] = field(default_factory=list)


def build_tree(
    ids: Sequence[str],
    vectors: Matrix,
    cluster: Clusterer,
    *,
    max_level: int = 3,
    min_cluster_size: int = 5,
    min_samples: int = 2,
    upper_min_cluster_size: int = 2,
    upper_min_samples: int = 1,
    pca_dims: int = 20,
    points_per_dim: int = 25,
) -> tuple[list[TreeNode], dict[str, str]]:
    """(nodes of levels 1..max_level, block id -> level-1 parent id)."""
    nodes: list[TreeNode] = []
    block_parent: dict[str, str] = {}
    level_ids = list(ids)
    level_vecs = unit_rows(np.asarray(vectors, dtype=np.float32))
    level_leaves = [[i] for i in ids]
    by_id: dict[str, TreeNode] = {}
    for level in range(1, max_level + 1):
        mcs = min_cluster_size if level == 1 else upper_min_cluster_size
        ms = min_samples if level == 1 else upper_min_samples
        if len(level_ids) < max(2, mcs):
            break
        # above level 1 a handful of centroids may well form one node: the top of the tree
        labels = cluster(reduce_dims(level_vecs, pca_dims, points_per_dim), mcs, ms, level > 1)
        groups: dict[int, list[int]] = {}
        for i, lab in enumerate(labels):
            if lab >= 0:
                groups.setdefault(int(lab), []).append(i)
        if not groups:
            break
        made: list[TreeNode] = []
        for members in groups.values():
            child_ids = [level_ids[i] for i in members]
            weights = np.array([len(level_leaves[i]) for i in members], dtype=np.float32)
            centroid = unit_rows((weights[:, None] * level_vecs[members]).sum(axis=0)[None, :])[0]
            leaves = sorted(x for i in members for x in level_leaves[i])
            node = TreeNode(node_id(level, child_ids), level, sorted(child_ids), centroid,
                            len(leaves), leaf_ids=leaves)
            for cid in child_ids:
                if level == 1:
                    block_parent[cid] = node.id
                else:
                    by_id[cid].parent_id = node.id
            made.append(node)
        made.sort(key=lambda n: n.id)
        nodes.extend(made)
        by_id.update({n.id: n for n in made})
        if len(made) == 1:
            break  # one node covers the level: it is the root
        level_ids = [n.id for n in made]
        level_vecs = np.stack([n.centroid for n in made])
        level_leaves = [n.leaf_ids for n in made]
    return nodes, block_parent


@dataclass(frozen=True)
class Mitosis:
    member_indices: tuple[int, ...]
    centroid: Matrix
    density: float  # mean cosine of the members to their centroid
    central_index: int  # the member closest to the centroid (its text labels the centroid)


def mitosis(vectors: Matrix, cluster: Clusterer, min_size: int, pca_dims: int,
            points_per_dim: int = 25, min_samples: int = 2) -> list[Mitosis]:
    """Dense clusters of antechamber questions (seed 001 §5.6.4 Mitosis); all of them may
    be one cluster (they all ask the same new question)."""
    x = unit_rows(np.asarray(vectors, dtype=np.float32))
    if len(x) < max(2, min_size):
        return []
    labels = cluster(reduce_dims(x, pca_dims, points_per_dim), min_size, min_samples, True)
    out: list[Mitosis] = []
    for lab in sorted({int(v) for v in labels if v >= 0}):
        members = tuple(int(i) for i in np.flatnonzero(labels == lab))
        if len(members) < min_size:
            continue
        c = unit_rows(x[list(members)].mean(axis=0)[None, :])[0]
        sims = x[list(members)] @ c
        out.append(Mitosis(members, c, float(sims.mean()), members[int(np.argmax(sims))]))
    return out


@dataclass(frozen=True)
class Fusion:
    id: str
    parents: tuple[str, str]
    centroid: Matrix
    weight: float
    similarity: float


def fusion(
    centroids: Sequence[tuple[str, Matrix, float]], min_similarity: float
) -> list[Fusion]:
    """Greedy pairwise fusion (seed 001 §5.6.4): the most similar pair above the
    threshold merges (weighted average), the fused centroid may fuse again."""
    pool = {cid: (unit_rows(np.asarray(v, dtype=np.float32)[None, :])[0], w)
            for cid, v, w in centroids}
    out: list[Fusion] = []
    while len(pool) >= 2:
        keys = sorted(pool)
        best: tuple[float, str, str] | None = None
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                sim = float(np.dot(pool[a][0], pool[b][0]))
                if sim >= min_similarity and (best is None or sim > best[0]):
                    best = (sim, a, b)
        if best is None:
            break
        sim, a, b = best
        (va, wa), (vb, wb) = pool.pop(a), pool.pop(b)
        wa, wb = max(wa, 1e-6), max(wb, 1e-6)
        fused = unit_rows(((wa * va + wb * vb) / (wa + wb))[None, :])[0]
        fid = str(uuid.uuid5(NODE_NAMESPACE, "fusion:" + ",".join(sorted((a, b)))))
        pool[fid] = (fused, wa + wb)
        out.append(Fusion(fid, (a, b), fused, wa + wb, sim))
    return out
