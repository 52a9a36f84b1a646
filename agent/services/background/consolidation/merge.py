"""Related memories of one user -> a NEW insight with `supersedes` links; the sources stay
(superseded, importance lowered). Without a model that writes insights, near-duplicates
merge into an extractive insight (a named heuristic, issue 39)."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from agent.db.queries import query, vector_text
from agent.domain import consolidation as rules
from agent.errors import ProviderError
from agent.services.background.consolidation.context import (
    PassContext,
    active,
    array,
    per_user,
    storable,
)
from agent.testhooks import fault_hook

logger = logging.getLogger(__name__)

NAME = "merge"


def writes_insights(ctx: PassContext) -> bool:
    """Whether the consolidation model writes insights: not the heuristic fallback
    (no model) nor the bundled 135M model (its "insight" for eight near-identical
    notes began "The memory of the most memorable experience...", issue 39)."""
    return not (ctx.llm.provider == "heuristic"
                or (ctx.llm.provider == "local" and getattr(ctx.llm, "bundled", False)))


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Related memories of one user → a NEW insight with `supersedes` links; sources
    stay. With a model that writes insights, it writes one for each group of related
    memories; without one, each group of near-duplicates becomes an extractive insight
    (the DUPLICATE_HEURISTIC, issue 39), and the bundled small model writes one only
    for the related groups left over."""
    rows = active(conn, insights=False)
    if len(rows) < min(ctx.cfg.insight_min_sources, ctx.cfg.duplicate_min_sources):
        return None
    vectors = np.stack([array(r[2]) for r in rows])
    duplicates: list[list[int]] = []
    if not writes_insights(ctx):
        duplicates = [[idx[i] for i in group] for idx in per_user(rows)
                      for group in rules.near_duplicate_groups(
                          vectors[idx], [rows[i][1] for i in idx], ctx.cfg)]
    merged = {i for g in duplicates for i in g}
    left = [i for i in range(len(rows)) if i not in merged]
    related = [[left[idx[i]] for i in group]
               for idx in per_user([rows[i] for i in left])
               for group in rules.similar_groups(vectors[[left[i] for i in idx]],
                                                 ctx.cfg.insight_min_similarity,
                                                 ctx.cfg.insight_min_sources)]
    made = []
    for group, extractive in [(g, True) for g in duplicates] + [(g, False) for g in related]:
        if ctx.should_stop():
            break  # the remaining groups merge in the next pass
        sources = [rows[i] for i in group]
        insight = (_extractive_insight(ctx, conn, sources) if extractive
                   else _insight(ctx, conn, sources))
        if insight is not None:
            made.append(insight)
    if not made:
        return None
    groups = duplicates + related
    return {"inputs": {"groups": [[str(rows[i][0]) for i in g] for g in groups]},
            "outputs": {"insights": made}}


def _extractive_insight(ctx: PassContext, conn: psycopg.Connection[Any],
                        sources: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Near-duplicates without a model (a heuristic, named in the insight's metadata):
    the most informative source's own words become the insight's text, and the insight
    supersedes and links every source as a model's insight does. It keeps that
    source's vectors too (the same text): it is found as the source was."""
    picked = sources[rules.most_informative([s[1] for s in sources])]
    return _write_insight(ctx, conn, sources, picked[1], {
        "model": None, "fallback": True, "heuristic": rules.DUPLICATE_HEURISTIC,
        "text_from": str(picked[0])}, copy_from=picked[0])


def _insight(ctx: PassContext, conn: psycopg.Connection[Any], sources: list[tuple[Any, ...]]
             ) -> dict[str, Any] | None:
    """A new insight superseding `sources`; None when no model could form one (the
    heuristic fallback only extracts, a provider failed, or the answer was empty):
    then nothing is written and the sources stay active."""
    contents = [s[1] for s in sources]
    try:
        result = ctx.llm.chat(rules.insight_prompt(contents), temperature=0.2,
                              max_tokens=80)
    except ProviderError as exc:
        logger.warning("consolidation: no insight for %d memories, the model failed: %s",
                       len(sources), exc)
        return None
    text = storable(" ".join(result.text.split())).strip()
    if result.fallback or not text:
        logger.info("consolidation: %d related memories stay as they are: %s",
                    len(sources), "the heuristic fallback cannot form an insight"
                    if result.fallback else "the model's insight was empty")
        return None
    return _write_insight(ctx, conn, sources, text, {"model": ctx.llm.model,
                                                     "fallback": bool(result.fallback)})


def _write_insight(ctx: PassContext, conn: psycopg.Connection[Any],
                   sources: list[tuple[Any, ...]], text: str, how: dict[str, Any],
                   copy_from: Any = None) -> dict[str, Any]:
    """The insight row, a `supersedes` link to each source, the sources superseded.
    `copy_from`: the source whose text, vectors and emotion the insight keeps (an
    extractive insight); else `text` is embedded as an insight."""
    evidence = sum(int(s[4]) for s in sources)
    meta = {"sources": [str(s[0]) for s in sources], **how}
    if copy_from is not None:
        row = conn.execute(
            query("consolidation_extractive_insight_insert"),
            (ctx.cfg.insight_importance, evidence, json.dumps(meta), copy_from),
        ).fetchone()
    else:
        uni = ctx.universal.embed_documents([text], memory_type="insight")[0]
        nat = uni if ctx.native.model_id == ctx.universal.model_id else (
            ctx.native.embed_documents([text], memory_type="insight")[0])
        row = conn.execute(
            query("consolidation_insight_insert"),
            (text, vector_text(uni), vector_text(nat), ctx.native.model_id,
             ctx.cfg.insight_importance, evidence, json.dumps(meta), sources[-1][0]),
        ).fetchone()
    assert row is not None
    insight = row[0]
    for s in sources:
        conn.execute(
            query("consolidation_link_supersedes"), (insight, s[0]))
        conn.execute(
            query("consolidation_memory_supersede"),
            (ctx.cfg.source_importance_after_merge, s[0]))
    fault_hook("merge-mid")  # insight and links written, the pass not committed yet
    out = {"insight": str(insight), "sources": meta["sources"], "content": text,
           "evidence_count": evidence, "fallback": meta["fallback"]}
    if "heuristic" in meta:
        out["heuristic"] = meta["heuristic"]
    return out
