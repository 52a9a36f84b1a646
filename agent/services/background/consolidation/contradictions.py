"""Pairs of one user's memories in the similarity band -> the consolidation model as a
classifier (the named heuristic without one) -> `contradicts` (flagged) or `related`.

Bounded work per pass (cogd choice): at most MAX_PAIRS candidates; the rest waits."""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.domain.gates import contradiction_cue
from agent.domain.llm_json import parse_llm_json, parse_yes_no
from agent.services.background.consolidation.context import (
    PassContext,
    active,
    array,
    per_user,
    storable,
)

logger = logging.getLogger(__name__)

MAX_PAIRS = 100
CONTRADICTION_SYSTEM = (
    'Answer with JSON only: {"contradicts": true or false, "reason": "<one short sentence>"}'
)

NAME = "contradictions"


@dataclass(frozen=True)
class Judgement:
    """One contradiction check: the verdict, who decided, and how the answer was parsed."""

    verdict: bool
    how: str
    parsed_by: str  # direct | fenced | boundary | yes_no | unparseable | llm_failed | no_llm
    reason: str | None = None


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime
        ) -> dict[str, Any] | None:
    """Pairs of one user's memories in the similarity band → classifier →
    `contradicts` (flagged) or `related`."""
    rows = active(conn)
    if len(rows) < 2:
        return None
    vectors = np.stack([array(r[2]) for r in rows])
    pairs = sorted(((idx[i], idx[j], sim) for idx in per_user(rows)
                    for i, j, sim in rules.pairs_in_band(vectors[idx],
                                                         ctx.cfg.contradiction_band)),
                   key=lambda p: -p[2])
    linked = {(a, b) for a, b in conn.execute(
        query("consolidation_linked_pairs"))}
    # a claim that retired the other's on the same slot is an update, not a conflict
    updates = {(a, b): slot for a, b, slot in conn.execute(
        query("consolidation_claim_updates"))}
    found = []
    checked = 0
    parsed: Counter[str] = Counter()
    for i, j, sim in pairs:
        a, b = rows[i], rows[j]
        key = (min(str(a[0]), str(b[0])), max(str(a[0]), str(b[0])))
        if key in linked:
            continue
        if checked >= MAX_PAIRS or ctx.should_stop():
            break
        checked += 1
        if key in updates:
            conn.execute(query("consolidation_link"), (b[0], a[0], "related", sim,
                         json.dumps({"claim_update": updates[key], "resolved": True})))
            parsed["claim_update"] += 1
            continue
        judged = _contradicts(ctx, a[1], b[1])
        parsed[judged.parsed_by] += 1
        link = "contradicts" if judged.verdict else "related"
        meta: dict[str, Any] = {"classifier": judged.how, "parsed_by": judged.parsed_by,
                                "resolved": False}
        if judged.reason:
            meta["reason"] = judged.reason
        conn.execute(
            query("consolidation_link"),
            (b[0], a[0], link, sim, json.dumps(meta)))
        if judged.verdict:
            conn.execute(
                query("consolidation_flag_contradictions"), ([a[0], b[0]],))
            found.append({"pair": [str(a[0]), str(b[0])], "similarity": round(sim, 3),
                          "classifier": judged.how})
    if not checked:
        return None
    # seed 000 §10.6: parse failures are counted (the heuristic decided those pairs)
    return {"inputs": {"pairs_checked": checked},
            "outputs": {"contradictions": found, "parse_failures": parsed["unparseable"],
                        "parsed_by": dict(parsed)}}


def _contradicts(ctx: PassContext, a: str, b: str) -> Judgement:
    """The consolidation LLM as a JSON classifier; the named heuristic without one.

    Its answer is parsed as JSON (direct, fenced, boundary), then as a bare yes/no;
    when nothing parses the heuristic decides and the pair counts as a parse failure.
    """
    if ctx.llm.provider == "heuristic":
        return Judgement(contradiction_cue(a, b),
                         "negation/value heuristic (no LLM configured)", "no_llm")
    messages = [
        {"role": "system", "content": CONTRADICTION_SYSTEM},
        {"role": "user", "content": f"Do these two statements contradict each other?\n"
                                    f"1. {a}\n2. {b}"},
    ]
    try:
        answer = ctx.llm.chat(messages, temperature=0.0, max_tokens=80).text
    except Exception as exc:  # provider down: the heuristic decides, and says so
        logger.warning("contradiction classifier failed: %s", exc)
        return Judgement(contradiction_cue(a, b), "negation/value heuristic (LLM failed)",
                         "llm_failed")
    how = f"llm:{ctx.llm.model}"
    result = parse_llm_json(answer, expect=dict)
    if result.ok:
        verdict = result.value.get("contradicts")
        if isinstance(verdict, str):
            verdict = parse_yes_no(verdict)
        if isinstance(verdict, bool):
            reason = result.value.get("reason")
            return Judgement(verdict, how, result.strategy or "direct",
                             storable(reason[:300]) if isinstance(reason, str) else None)
    bare = parse_yes_no(answer)
    if bare is not None:
        return Judgement(bare, how, "yes_no")
    logger.warning("contradiction classifier: unparseable answer (%s)",
                   result.error or "no boolean 'contradicts'")
    return Judgement(contradiction_cue(a, b),
                     "negation/value heuristic (LLM answer unparseable)", "unparseable")
