"""Stage 3, salience (seed 001 §3.3-§3.6, §8.5): P, C, ID at three levels, live exchanges.

ID is measured against the active preoccupation centroids; when none exists yet they are
bootstrapped here (config questions, or the first cycle's user turns), in this stage's
transaction. A block that is novel (it holds a flux arc) and coherent but relevant to no
centroid is marked for the antechamber (written in stage 8).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agent.domain.gates import EntryGateConfig, rule_signals
from agent.domain.night_blocks import exchanges
from agent.domain.night_salience import (
    INSIGHT_MARKERS,
    SalienceConfig,
    TurnSignal,
    score_block,
)
from agent.domain.tables import need
from night_cycle import centroids
from night_cycle.clustering import hdbscan_clusterer
from night_cycle.context import RunContext
from night_cycle.stages import StageOutput

NAME = "salience"
TRANSACTIONAL = True


def _bootstrap(ctx: RunContext, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    if centroids.any_exist(ctx.conn):
        return {}
    cfg = ctx.cfg
    configured = [str(q) for q in need(cfg, "bootstrap_preoccupations") or [] if str(q).strip()]
    cluster = hdbscan_clusterer()
    if configured:
        vecs = ctx.universal().embed_documents(configured)
        made = centroids.bootstrap(ctx.conn, configured, vecs, cluster, min_size=1,
                                   pca_dims=int(need(cfg, "raptor_pca_dims")), source="config")
        return {"bootstrap": "config", "founding_centroids": made}
    first = min((b["cycle"] for b in blocks), default=None)
    ids = [i for b in blocks if b["cycle"] == first for i in b["entry_ids"]]
    users = [t for t in ctx.turns(ids) if t.role == "user" and t.vector is not None]
    if not users:
        return {}
    made = centroids.bootstrap(
        ctx.conn, [t.content[:160] for t in users],
        np.stack([t.vector for t in users if t.vector is not None]),
        cluster, min_size=int(need(cfg, "hdbscan_min_cluster_size")),
        pca_dims=int(need(cfg, "raptor_pca_dims")),
        points_per_dim=int(need(cfg, "raptor_points_per_dim")),
        min_samples=int(need(cfg, "hdbscan_min_samples")), source="first_cycle")
    return {"bootstrap": f"first cycle ({first}), user turns as the question proxy",
            "founding_centroids": made}


def _gate_reasons(text: str, role: str, gate: EntryGateConfig, wanted: set[str]) -> list[str]:
    return sorted(k for k in rule_signals(text, role, gate) if k in wanted)


def run(ctx: RunContext, inputs: dict[str, Any]) -> StageOutput:
    cfg = SalienceConfig.from_table(ctx.cfg)
    blocks: list[dict[str, Any]] = inputs["blocks"]
    summary = _bootstrap(ctx, blocks)
    active = centroids.active(ctx.conn)
    matrix = np.stack([c.vector for c in active]) if active else None
    gate = EntryGateConfig.from_table(ctx.settings.entry_gate)
    wanted = set(need(ctx.cfg, "live_zone_gate_signals") or [])
    ctx.progress.stage(3, NAME, len(blocks))
    live_x = dead_x = antechamber = 0
    for b in blocks:
        turns = ctx.turns(b["entry_ids"])
        gate_hits = [_gate_reasons(t.content, t.role, gate, wanted) for t in turns]
        signals = [
            TurnSignal(role=t.role, z=float(z), signal=s, vector=t.vector,
                       new_information=bool(g), insight=bool(INSIGHT_MARKERS.search(t.content)))
            for t, z, s, g in zip(turns, b["z"], b["signal"], gate_hits, strict=True)
        ]
        lo, hi = b["anterior"], len(turns) - b["posterior"]
        parts = [[(a + x, c + x) for a, c in exchanges([t.role for t in turns[x:y]])]
                 for x, y in ((0, lo), (lo, hi), (hi, len(turns)))]
        bounds = parts[0] + parts[1] + parts[2]
        sal = score_block(signals, bounds, matrix, float(b["flux_metrics"]["arrete"]),
                          novel=b["kind"] == "arc", cfg=cfg)
        reasons = []
        for (a, c), why in zip(bounds, sal.reasons, strict=True):
            gate_why = sorted({f"entry_gate:{k}" for g in gate_hits[a:c + 1] for k in g})
            reasons.append([w for w in why if w != "entry_gate_new_information"] + gate_why)
        n_ant, n_core = len(parts[0]), len(parts[1])
        core = parts[1]
        # a margin with live content is kept whole in the cortex too (stage 7 trims the rest)
        b["margin_live"] = {
            "anterior": sorted({w for r in reasons[:n_ant] for w in r}),
            "posterior": sorted({w for r in reasons[n_ant + n_core:] for w in r}),
        }
        live_core = sal.live[n_ant:n_ant + n_core]
        reasons = reasons[n_ant:n_ant + n_core]
        b["salience"] = sal.scores_json()
        b["composite"] = sal.composite
        b["coherence_gain"] = sal.arrete
        b["ties_merge_weight"] = sal.ties_merge_weight
        b["centroid_id"] = None if sal.centroid_index is None else active[sal.centroid_index].id
        b["antechamber"] = sal.antechamber
        b["exchanges"] = [[a, c] for a, c in core]
        b["live"] = live_core
        b["reasons"] = reasons
        live_x += sum(live_core)
        dead_x += len(live_core) - sum(live_core)
        antechamber += int(sal.antechamber)
        ctx.progress.advance()
    summary.update({"blocks": len(blocks), "active_centroids": len(active),
                    "live_exchanges": live_x, "dead_exchanges": dead_x,
                    "antechamber_candidates": antechamber})
    return StageOutput(summary, inputs)
