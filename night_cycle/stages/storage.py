"""Stage 6, storage (seed 001 §3.4, §3.7, §4.3, §7): holographic_blocks rows, in one
transaction with the stage's checkpoint.

Citations come from memory tags (`[memory:<uuid>]`) in the block's turns and from the
memory_citations rows the loop recorded for them; a cited id that is a holographic block
also becomes a `cites` edge in block_relationships. Continuations become `continues`
edges and continues_from / continued_by links; each chain of them gets a metablock row
whose constituents point to it (parent_metablock_id). Ids are derived from content, and
every insert is ON CONFLICT DO NOTHING: a re-run never duplicates a block or an edge.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

import numpy as np

from agent.db.queries import query, vector_text
from agent.domain.contextual import RECIPE_VERSION, IndexConfig, block_text
from agent.domain.lexical import tokens, tsvector_literal
from agent.domain.tags import parse_memory_tags
from night_cycle.context import RunContext
from night_cycle.hooks import fault_hook
from night_cycle.prose import full_text
from night_cycle.stages import StageOutput
from night_cycle.vectors import decode

NAME = "storage"
TRANSACTIONAL = True
EDGE_NAMESPACE = uuid.UUID("7e2b4c91-0d3a-4f5e-8b6c-1a9d3e5f7c20")
# blocks per INSERT (one statement per batch: the lexicon's statement trigger updates its
# stats and term rows once per batch, not once per block)
INSERT_BATCH = 500

def _index_entry(prose: Any, start: Any, ctx: RunContext) -> dict[str, Any]:
    """The block's contextual index entry (its BM25 lexicon entry: revision 0007)."""
    when = datetime.fromisoformat(start) if isinstance(start, str) else start
    text = block_text(prose, when, IndexConfig.from_table(ctx.settings.recall))
    return {"index_text": text, "index_tsv": tsvector_literal(tokens(text)),
            "index_version": RECIPE_VERSION}


def edge_id(kind: str, source: str, target: str) -> str:
    return str(uuid.uuid5(EDGE_NAMESPACE, f"{kind}:{source}:{target}"))


def _citations(ctx: RunContext, blocks: list[dict[str, Any]]) -> dict[str, list[str]]:
    entry_block = {e: b["block_id"] for b in blocks for e in b["entry_ids"]}
    cited: dict[str, set[str]] = {b["block_id"]: set() for b in blocks}
    for t in ctx.turns(list(entry_block)):
        cited[entry_block[t.entry_id]].update(parse_memory_tags(t.content))
    rows = ctx.conn.execute(
        query("night_storage_cited_blocks"), (list(entry_block),)).fetchall()
    for entry, target in rows:
        cited[entry_block[entry]].add(target)
    return {k: sorted(v - {k}) for k, v in cited.items()}


def _insert_blocks(ctx: RunContext, rows: list[dict[str, Any]]) -> int:
    """One statement for a batch of block rows (at most INSERT_BATCH); the rows written."""
    return int(ctx.conn.execute(query("night_storage_insert_blocks"),
                                {"rows": json.dumps(rows, default=str)}).rowcount)


def _metablock(ctx: RunContext, meta: dict[str, Any], by_id: dict[str, dict[str, Any]],
               history: list[dict[str, Any]]) -> dict[str, Any]:
    parts = [by_id[i] for i in meta["constituents"]]
    w = np.array([max(1e-6, p["ties_merge_weight"]) for p in parts], dtype=np.float32)

    def centroid(key: str) -> str:
        vs = np.stack([v for p in parts if (v := decode(p[key])) is not None])
        c = (w[:, None] * vs).sum(axis=0) / w.sum()
        return vector_text(c / max(1e-12, float(np.linalg.norm(c))))

    composites = [p["composite"] for p in parts]
    gains = [p["coherence_gain"] for p in parts]
    prose = {"type": "compound", "kind": "metablock", "constituent_blocks": meta["constituents"],
             "sequence": [dict(p["prose"], block_id=p["block_id"]) for p in parts]}
    return {
        "block_id": meta["block_id"],
        "prose": prose,
        "native": centroid("native"), "native_model": parts[0]["native_model"],
        "universal": centroid("universal"),
        "flux": {"kind": "metablock", "entry_ids": [], "constituents": len(parts),
                 "total_coherence_gain": round(sum(gains), 6)},
        "salience": {"composite": round(float(np.mean(composites)), 4),
                     "aggregate": "mean of the constituents",
                     "constituents": [{"block_id": p["block_id"],
                                       "composite": round(p["composite"], 4)}
                                      for p in parts]},
        "coherence_gain": float(np.mean(gains)), "ties": max(p["ties_merge_weight"] for p in parts),
        "session_id": parts[0]["session_id"], "user_id": parts[0]["user_id"],
        "tier": parts[0]["tier"], "run_id": ctx.run.run_id,
        "start": parts[0]["arc_start_time"], "end": parts[-1]["arc_end_time"],
        "history": history, "flag": False, "citations": [], "centroid": None,
        **_index_entry(prose, parts[0]["arc_start_time"], ctx),
    }


def run(ctx: RunContext, inputs: dict[str, Any]) -> StageOutput:
    blocks: list[dict[str, Any]] = inputs["blocks"]
    metas: list[dict[str, Any]] = inputs["metablocks"]
    ctx.progress.stage(6, NAME, len(blocks) + len(metas))
    citations = _citations(ctx, blocks)
    all_cited = sorted({c for v in citations.values() for c in v})
    known = {r[0] for r in ctx.conn.execute(
        query("night_storage_stored_blocks"),
        (all_cited,))} | {b["block_id"] for b in blocks}
    history = [{"date": ctx.now.isoformat(), "event": "creation",
                "model_version": blocks[0]["native_model"] if blocks else None}]
    written = edges = 0
    for start in range(0, len(blocks), INSERT_BATCH):
        rows = []
        for b in blocks[start:start + INSERT_BATCH]:
            flux = dict(b["flux_metrics"], entry_ids=b["entry_ids"], turns=b["turns"],
                        cycle=b["cycle"], open_arc=b["open_arc"],
                        anterior_margin_turns=b["anterior"],
                        posterior_margin_turns=b["posterior"])
            rows.append({
                "block_id": b["block_id"], "prose": b["prose"],
                "native": vector_text(decode(b["native"])), "native_model": b["native_model"],
                "universal": vector_text(decode(b["universal"])), "flux": flux,
                "salience": b["salience"], "coherence_gain": b["coherence_gain"],
                "ties": b["ties_merge_weight"], "session_id": b["session_id"],
                "user_id": b["user_id"], "tier": b["tier"], "run_id": ctx.run.run_id,
                "start": b["arc_start_time"], "end": b["arc_end_time"],
                "history": history, "flag": b["continuity_flag"],
                "citations": citations[b["block_id"]], "centroid": b["centroid_id"],
                **_index_entry(b["prose"], b["arc_start_time"], ctx),
            })
        written += _insert_blocks(ctx, rows)
        ctx.progress.advance(len(rows))
        if start == 0:
            fault_hook(6, "mid")  # blocks written, the stage's transaction still open
    for b in blocks:
        if b["continues_from"] or b["continued_by"]:
            ctx.conn.execute(
                query("night_storage_block_chain"),
                (b["continues_from"], b["continued_by"], b["block_id"]))
        if b["continues_from"]:
            edges += ctx.conn.execute(query("night_storage_insert_edge"), (
                edge_id("continues", b["block_id"], b["continues_from"]), b["block_id"],
                b["continues_from"], "continues", b.get("continuity_similarity"))).rowcount
        for target in citations[b["block_id"]]:
            if target in known:
                edges += ctx.conn.execute(query("night_storage_insert_edge"), (
                    edge_id("cites", b["block_id"], target), b["block_id"], target, "cites",
                    1.0)).rowcount
    by_id = {b["block_id"]: b for b in blocks}
    metablocks = [_metablock(ctx, meta, by_id, history) for meta in metas]
    for start in range(0, len(metablocks), INSERT_BATCH):
        _insert_blocks(ctx, metablocks[start:start + INSERT_BATCH])
    for meta in metas:
        ctx.conn.execute(
            query("night_storage_block_stored"),
            (meta["block_id"], meta["constituents"]))
        ctx.progress.advance()
    summary = {"blocks_written": written, "blocks_already_present": len(blocks) - written,
               "metablocks": len(metas), "relationships": edges,
               "citations": sum(len(v) for v in citations.values()),
               "text_chars": sum(len(full_text(b["prose"])) for b in blocks)}
    return StageOutput(summary, None)
