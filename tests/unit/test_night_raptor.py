"""RAPTOR tree, mitosis and fusion (seed 001 §5.4, §5.6) with the real HDBSCAN."""

from __future__ import annotations

import numpy as np
import pytest

from agent.domain.night_raptor import build_tree, fusion, mitosis, reduce_dims, unit_rows
from night_cycle.clustering import hdbscan_clusterer

CLUSTER = hdbscan_clusterer()
DIM = 48


def blobs(centres: list[np.ndarray], per: int, spread: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return unit_rows(np.concatenate(
        [c + spread * rng.standard_normal((per, DIM)) for c in centres]).astype(np.float32))


def axis(i: int, j: int | None = None, w: float = 0.0) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i] = 1.0
    if j is not None:
        v[j] = w
    return v


def test_reduce_dims_keeps_at_most_one_dimension_per_25_points() -> None:
    x = np.random.default_rng(1).standard_normal((60, DIM)).astype(np.float32)
    assert reduce_dims(x, 20).shape == (60, 2)
    assert reduce_dims(x, 20, points_per_dim=5).shape == (60, 12)
    assert reduce_dims(x[:3], 20).shape == (3, 2)


def test_two_themes_of_two_topics_make_a_three_level_tree() -> None:
    # topics 0,1 share theme A (axis 10), topics 2,3 share theme B (axis 20)
    centres = [axis(0, 10, 1.5), axis(1, 10, 1.5), axis(2, 20, 1.5), axis(3, 20, 1.5)]
    x = blobs(centres, per=25, spread=0.04)
    ids = [f"b{i:03d}" for i in range(len(x))]
    nodes, parent = build_tree(ids, x, CLUSTER, min_cluster_size=5, upper_min_cluster_size=2,
                               pca_dims=20, points_per_dim=5)
    by_level: dict[int, list] = {}
    for n in nodes:
        by_level.setdefault(n.level, []).append(n)
    assert sorted(by_level) == [1, 2, 3]
    assert len(by_level[1]) == 4 and len(by_level[2]) == 2 and len(by_level[3]) == 1
    assert len(parent) == 100 and {parent[i] for i in ids} == {n.id for n in by_level[1]}
    root = by_level[3][0]
    assert root.leaf_count == 100 and root.parent_id is None
    assert all(n.parent_id == root.id for n in by_level[2])
    assert all(n.parent_id in {m.id for m in by_level[2]} for n in by_level[1])
    # the same blocks give the same tree (ids come from members)
    again, _ = build_tree(ids, x, CLUSTER, min_cluster_size=5, upper_min_cluster_size=2,
                          pca_dims=20, points_per_dim=5)
    assert [n.id for n in again] == [n.id for n in nodes]


def test_too_few_blocks_make_no_tree() -> None:
    x = blobs([axis(0)], per=3, spread=0.01)
    assert build_tree(["a", "b", "c"], x, CLUSTER, min_cluster_size=5) == ([], {})


def test_a_dense_antechamber_cluster_divides_into_a_new_centroid() -> None:
    dense = blobs([axis(5)], per=6, spread=0.02, seed=3)
    scattered = unit_rows(np.random.default_rng(4).standard_normal((4, DIM)).astype(np.float32))
    found = mitosis(np.concatenate([dense, scattered]), CLUSTER, min_size=5, pca_dims=20,
                    points_per_dim=2)
    [m] = found  # HDBSCAN may leave an edge point as noise; never a scattered one
    assert len(m.member_indices) >= 5 and set(m.member_indices) <= set(range(6))
    assert m.density > 0.9
    assert float(m.centroid @ axis(5)) > 0.95 and m.central_index in m.member_indices


def test_overlapping_centroids_fuse_and_the_fusion_is_deterministic() -> None:
    a, b, far = axis(0, 1, 0.1), axis(0, 1, 0.2), axis(7)
    out = fusion([("a", a, 2.0), ("b", b, 1.0), ("far", far, 1.0)], 0.85)
    [f] = out
    assert f.parents == ("a", "b") and f.weight == 3.0 and f.similarity > 0.99
    expected = unit_rows(((2 * unit_rows(a[None])[0] + unit_rows(b[None])[0]) / 3)[None])[0]
    assert f.centroid == pytest.approx(expected, abs=1e-6)
    assert fusion([("a", a, 2.0), ("b", b, 1.0)], 0.85)[0].id == f.id
    assert fusion([("a", a, 1.0), ("far", far, 1.0)], 0.85) == []
