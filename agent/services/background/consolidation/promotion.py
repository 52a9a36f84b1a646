"""5+ signals over 14+ days -> a Layer 1 goal; 10+ over 30+ -> a Layer 0 proposal.

A goal promotion makes is its memory's user's (goals.user_id, revision 0019): it reaches
that user's prompt only. The span reads written_at (when cogd wrote the row), never a
client's back-dated created_at. Text that asks the agent to rewrite itself is held."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.domain.gates import detects_identity_rewrite
from agent.domain.llm_json import parse_yes_no
from agent.errors import ProviderError
from agent.services.background.consolidation.context import PassContext

logger = logging.getLogger(__name__)

SUSPECT_REASON = ("asks the agent to rewrite its identity or instructions "
                  "(rewrite-attempt patterns): review before approving")
SUSPECT_BY_MODEL = ("asks the agent to rewrite its identity or instructions (judged by the "
                    "consolidation model): review before approving")
# the models trusted with the screen: a remote or served model; the bundled 135M model
# and the heuristic fallback are not (their yes/no is noise)
SCREENING_PROVIDERS = ("openai", "gemini")

NAME = "promotion"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """5+ signals over 14+ days → a Layer 1 goal; 10+ over 30+ → a Layer 0 proposal.

    The span is measured on written_at (when cogd wrote the memories), never on a
    client's back-dated created_at; a goal belongs to its memory's user and reaches
    only that user's prompt (a Layer 0 proposal waits for a person, as ever)."""
    rows = conn.execute(
        query("consolidation_goal_candidates"),
        (ctx.cfg.promote_l1_min_signals,)).fetchall()
    goals, proposals, held = [], [], []
    weight = ctx.config.promoted_initial_weight
    for mid, content, evidence, span_raw, meta, user_id in rows:
        span = round(float(span_raw or 0), 2)
        level = rules.promotion_level(int(evidence), span, ctx.cfg)
        if level is None:
            continue
        suspect = _rewrite_suspect(ctx, conn, mid, content, meta or {})
        if suspect:
            # repeated text that asks the agent to rewrite itself is no goal: Layer 1
            # applies without a person, so it is held (once, recorded on the memory);
            # its Layer 0 proposal below waits for a person, flagged
            if "promotion_held" not in (meta or {}):
                conn.execute(
                    query("consolidation_memory_metadata"),
                    (json.dumps({"promotion_held": suspect}), mid))
                held.append({"memory_id": str(mid), "reason": suspect})
            if level != 0:
                continue
        name = f"goal_{str(mid)[:8]}"
        row = None if suspect else conn.execute(
            query("consolidation_goal_insert"),
            (name, content[:500], rules.capped(weight, ctx.safety), evidence,
             json.dumps({"memory_id": str(mid), "evidence_seen": int(evidence)}),
             user_id)).fetchone()
        if row:
            conn.execute(
                query("consolidation_goal_promoted_history"),
                (row[0], weight, json.dumps({"memory_id": str(mid), "evidence": evidence,
                                             "span_days": span})))
            goals.append({"goal": name, "memory_id": str(mid)})
        if level == 0 and not conn.execute(
                query("consolidation_proposal_exists"),
                (str(mid),)).fetchone():
            conn.execute(
                query("consolidation_proposal_insert"),
                (json.dumps({"name": f"value_{str(mid)[:8]}", "description": content[:500],
                             "weight": weight, "memory_id": str(mid)}),
                 json.dumps({"evidence_count": evidence, "span_days": span,
                             **({"suspect": suspect} if suspect else {})})))
            proposals.append({"memory_id": str(mid), **({"suspect": True} if suspect else {})})
    if not goals and not proposals and not held:
        return None
    outputs: dict[str, Any] = {"goals": goals, "proposals": proposals}
    if held:
        outputs["held"] = held
    return {"outputs": outputs}


def _rewrite_suspect(ctx: PassContext, conn: psycopg.Connection[Any], memory_id: Any,
                     content: str, meta: dict[str, Any]) -> str | None:
    """Why `content` must not be promoted as it stands, or None: the rewrite-attempt
    patterns (every language the entry gate knows), then, when the consolidation role
    is a remote or served model, that model asked yes/no, once per memory (its answer
    is kept in metadata.rewrite_screen). A model that fails or answers neither leaves
    the patterns' verdict, and is asked again next pass."""
    if detects_identity_rewrite(content):
        return SUSPECT_REASON
    if ctx.llm.provider not in SCREENING_PROVIDERS:
        return None
    screen = meta.get("rewrite_screen")
    if isinstance(screen, dict) and isinstance(screen.get("suspect"), bool):
        return SUSPECT_BY_MODEL if screen["suspect"] else None
    try:
        answer = ctx.llm.chat([{"role": "system",
                               "content": rules.REWRITE_SCREEN_SYSTEM},
                              {"role": "user", "content": content[:2000]}],
                              temperature=0.0, max_tokens=4).text
    except ProviderError as exc:
        logger.warning("promotion: the rewrite screen's model failed (%s); the "
                       "patterns decide", exc)
        return None
    verdict = parse_yes_no(answer)
    if verdict is None:
        logger.warning("promotion: the rewrite screen's answer is neither yes nor no; "
                       "the patterns decide")
        return None
    conn.execute(query("consolidation_memory_metadata"),
                 (json.dumps({"rewrite_screen": {"model": ctx.llm.model,
                                                 "suspect": verdict}}), memory_id))
    return SUSPECT_BY_MODEL if verdict else None
