"""HDBSCAN as the domain's Clusterer (seed 001 §5.4: HDBSCAN(min_cluster_size=5,
min_samples=2)). The hdbscan package is imported on first use only."""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from agent.domain.night_raptor import Clusterer, Matrix


def hdbscan_clusterer() -> Clusterer:
    def cluster(points: Matrix, min_cluster_size: int, min_samples: int,
                allow_single: bool) -> npt.NDArray[np.int64]:
        n = len(points)
        if n < max(2, min_cluster_size):
            return np.full(n, -1, dtype=np.int64)
        import hdbscan

        with warnings.catch_warnings():
            # hdbscan's own use of deprecated sklearn/numpy helpers is not cogd's to fix
            warnings.simplefilter("ignore", category=FutureWarning)
            warnings.simplefilter("ignore", category=DeprecationWarning)
            model = hdbscan.HDBSCAN(min_cluster_size=max(2, min_cluster_size),
                                    min_samples=max(1, min(min_samples, min_cluster_size)),
                                    allow_single_cluster=allow_single)
            labels = model.fit_predict(np.asarray(points, dtype=np.float64))
        return np.asarray(labels, dtype=np.int64)

    return cluster
