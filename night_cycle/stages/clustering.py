"""Stage 8, clustering (seed 001 §5.4, §5.6): the RAPTOR tree, the antechamber, mitosis,
fusion.

The tree is rebuilt from all cortex blocks each night (node ids come from their members,
so an unchanged cortex gives the same tree) and replaces cortex_clusters. Blocks of this
run marked in stage 3 add their implicit question (proxy: their user turns) to the
antechamber; dense antechamber clusters become satellite preoccupation centroids
(mitosis) and centroids that overlap merge (fusion, the originals retired). The centroid
writes share the stage's transaction: a cortex write that fails rolls them back.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np

from agent.cortex.lance import ANTECHAMBER, BLOCKS, CLUSTERS
from agent.db.queries import query
from agent.domain.night_blocks import mean_unit
from agent.domain.night_raptor import TreeNode, build_tree, fusion, mitosis
from agent.domain.tables import need
from night_cycle import centroids
from night_cycle.clustering import hdbscan_clusterer
from night_cycle.context import RunContext
from night_cycle.hooks import fault_hook
from night_cycle.stages import StageOutput
from night_cycle.stages.compression import summarizer
from night_cycle.summarize import strip_fallback

NAME = "RAPTOR clustering"
TRANSACTIONAL = True
ENTRY_NAMESPACE = uuid.UUID("a3d9e0f2-6c14-4b8a-9e7d-0f2c4b6a8e13")


def _tree(ctx: RunContext) -> dict[str, Any]:
    cfg, cortex = ctx.cfg, ctx.cortex()
    rows = cortex.rows(BLOCKS, columns=["block_id", "universal", "prose_text"])
    rows.sort(key=lambda r: r["block_id"])
    text = {r["block_id"]: r["prose_text"] for r in rows}
    cluster = hdbscan_clusterer()
    nodes: list[TreeNode] = []
    if rows:
        nodes, _ = build_tree(
            [r["block_id"] for r in rows], np.asarray([r["universal"] for r in rows], np.float32),
            cluster, max_level=int(need(cfg, "raptor_max_level")),
            min_cluster_size=int(need(cfg, "hdbscan_min_cluster_size")),
            min_samples=int(need(cfg, "hdbscan_min_samples")),
            upper_min_cluster_size=int(need(cfg, "raptor_upper_min_cluster_size")),
            upper_min_samples=int(need(cfg, "raptor_upper_min_samples")),
            pca_dims=int(need(cfg, "raptor_pca_dims")),
            points_per_dim=int(need(cfg, "raptor_points_per_dim")))
    ctx.progress.stage(8, NAME, len(nodes) + 1)
    summarize = summarizer(ctx)
    summaries: dict[str, tuple[str, str]] = {}
    for node in sorted(nodes, key=lambda n: n.level):  # children are summarised first
        parts = [strip_fallback(text[m] if node.level == 1 else summaries[m][0])
                 for m in node.member_ids]
        summaries[node.id] = summarize("\n".join(parts))
        ctx.progress.advance()
    texts = [strip_fallback(summaries[n.id][0]) for n in nodes]
    vecs: Any = ctx.universal().embed_documents(texts) if nodes else []
    out = [{
        "cluster_id": n.id, "level": n.level, "parent_cluster_id": n.parent_id,
        "centroid": n.centroid.tolist(), "summary_vector": np.asarray(v).tolist(),
        "summary_text": summaries[n.id][0], "summarizer": summaries[n.id][1],
        "member_ids": json.dumps(n.member_ids), "member_count": len(n.member_ids),
        "leaf_count": n.leaf_count, "run_id": ctx.run.run_id, "created_at": ctx.now,
    } for n, v in zip(nodes, vecs, strict=True)]
    cortex.replace(CLUSTERS, out)
    levels: dict[str, int] = {}
    for n in nodes:
        levels[str(n.level)] = levels.get(str(n.level), 0) + 1
    parented = {m for n in nodes if n.level == 1 for m in n.member_ids}
    return {"blocks": len(rows), "clusters_by_level": levels,
            "unclustered_blocks": len(rows) - len(parented)}


def _antechamber(ctx: RunContext) -> int:
    """This run's coherent-but-orthogonal blocks, added once each (never reset)."""
    rows = ctx.conn.execute(
        query("night_clustering_blocks"),
        (ctx.run.run_id,)).fetchall()
    cortex = ctx.cortex()
    ids = {str(uuid.uuid5(ENTRY_NAMESPACE, r[0])): r for r in rows}
    have = {e["entry_id"] for e in cortex.rows(ANTECHAMBER, columns=["entry_id"])}
    from night_cycle.prose import full_text

    new = []
    for entry_id, (block_id, entry_ids, session, when, prose) in ids.items():
        if entry_id in have:
            continue
        users = [t for t in ctx.turns(entry_ids) if t.role == "user" and t.vector is not None]
        q = mean_unit([t.vector for t in users if t.vector is not None])
        if q is None:
            continue
        new.append({
            "entry_id": entry_id, "implicit_question_embedding": q.tolist(),
            "question_text": " / ".join(t.content for t in users)[:500],
            "source_content_summary": full_text(prose)[:500], "source_session_id": session,
            "source_block_id": block_id, "source_timestamp": when, "cluster_id": None,
            "cluster_density": None, "created_at": ctx.now, "promoted_to_centroid": False,
            "promotion_date": None, "centroid_id": None,
        })
    cortex.upsert(ANTECHAMBER, new, "entry_id")
    return len(new)


def _mitosis(ctx: RunContext) -> list[str]:
    cfg, cortex = ctx.cfg, ctx.cortex()
    pending = cortex.rows(ANTECHAMBER, where="promoted_to_centroid = false")
    pending.sort(key=lambda r: r["entry_id"])
    if not pending:
        return []
    found = mitosis(np.asarray([r["implicit_question_embedding"] for r in pending], np.float32),
                    hdbscan_clusterer(), int(need(cfg, "mitosis_min_cluster_size")),
                    int(need(cfg, "raptor_pca_dims")),
                    int(need(cfg, "raptor_points_per_dim")),
                    int(need(cfg, "hdbscan_min_samples")))
    made = []
    for m in found:
        members = [pending[i] for i in m.member_indices]
        cid = centroids.centroid_id("satellite", [r["entry_id"] for r in members])
        with ctx.conn.transaction():
            centroids.insert(ctx.conn, cid, pending[m.central_index]["question_text"][:160]
                             + " (mitosis)", m.centroid, "satellite", 1.0, len(members))
        for r in members:
            r.update(promoted_to_centroid=True, promotion_date=ctx.now, centroid_id=cid,
                     cluster_id=cid, cluster_density=m.density)
        cortex.upsert(ANTECHAMBER, members, "entry_id")
        made.append(cid)
    return made


def _fusion(ctx: RunContext) -> list[str]:
    active = centroids.active(ctx.conn)
    fused = fusion([(c.id, c.vector, float(max(1, c.member_count))) for c in active],
                   float(need(ctx.cfg, "fusion_min_similarity")))
    labels = {c.id: c.label for c in active}
    with ctx.conn.transaction():
        for f in fused:
            label = " + ".join(sorted(labels.get(p, p)[:60] for p in f.parents))
            labels[f.id] = label
            centroids.insert(ctx.conn, f.id, label, f.centroid, "fused", 1.0, int(f.weight),
                             parents=list(f.parents))
            ctx.conn.execute(
                query("night_clustering_retire_parents"), (ctx.now, list(f.parents)))
    return [f.id for f in fused]


def run(ctx: RunContext, _inputs: Any = None) -> StageOutput:
    summary = _tree(ctx)
    fault_hook(8, "mid")
    summary["antechamber_added"] = _antechamber(ctx)
    summary["mitosis_centroids"] = len(_mitosis(ctx))
    summary["fused_centroids"] = len(_fusion(ctx))
    summary["cortex"] = ctx.cortex().counts()
    ctx.progress.advance()
    return StageOutput(summary, None)
