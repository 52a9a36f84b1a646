"""Stage 4, compression (seed 001 §3.5, §6.4): dead zones summarised, live zones untouched.

Consecutive exchanges with the same verdict form one zone. A live zone keeps its turns
verbatim (memory tags included); a dead zone is summarised by the night_cycle LLM role,
or by the extractive fallback, whose output starts with "[heuristic fallback]" and whose
zone records `summarizer`. Margins stay verbatim here (the cortex trims them, stage 7).
"""

from __future__ import annotations

from typing import Any

from agent.domain.tables import need
from agent.errors import CogdError
from night_cycle.context import RunContext, Turn
from night_cycle.stages import StageOutput
from night_cycle.summarize import Summarizer

NAME = "compression"
TRANSACTIONAL = False


def _line(t: Turn) -> str:
    return f"{t.role}: {t.content}"


def _num(t: Turn, i: int) -> int:
    return t.turn_number if t.turn_number is not None else i


def summarizer(ctx: RunContext) -> Summarizer:
    cfg = ctx.cfg
    tokens, chars = int(need(cfg, "summary_max_tokens")), int(
        need(cfg, "summary_max_input_chars"))
    try:
        return Summarizer(ctx.llm(), tokens, chars)
    except CogdError as exc:  # e.g. the local LLM's runtime missing: compress anyway, say so
        return Summarizer(None, tokens, chars, unavailable=str(exc))


def prose_for(block: dict[str, Any], turns: list[Turn], summarize: Summarizer) -> dict[str, Any]:
    ant, post = block["anterior"], block["posterior"]
    prose: dict[str, Any] = {
        "kind": block["kind"],
        "anterior_margin": "\n".join(_line(t) for t in turns[:ant]),
        "live_zones": [], "dead_zone_summaries": [],
        "posterior_margin": "\n".join(_line(t) for t in turns[len(turns) - post:]) if post else "",
        "long_term": False, "margin_live": block.get("margin_live", {}),
    }
    zones: list[tuple[bool, int, int, list[str]]] = []
    for (a, c), live, why in zip(block["exchanges"], block["live"], block["reasons"],
                                 strict=True):
        if zones and zones[-1][0] == live:
            zones[-1] = (live, zones[-1][1], c, sorted(set(zones[-1][3]) | set(why)))
        else:
            zones.append((live, a, c, list(why)))
    for live, a, c, why in zones:
        part = turns[a:c + 1]
        start, end = _num(part[0], a), _num(part[-1], c)
        text = "\n".join(_line(t) for t in part)
        if live:
            prose["live_zones"].append({"start": start, "end": end, "content": text, "why": why})
            if "entry_gate:explicit_marker" in why:
                prose["long_term"] = True  # the user asked to remember: seed 001 §5.3 mark
        else:
            summary, name = summarize(text)
            prose["dead_zone_summaries"].append(
                {"start": start, "end": end, "summary": summary, "summarizer": name})
    if any("entry_gate:explicit_marker" in v for v in prose["margin_live"].values()):
        prose["long_term"] = True
    return prose


def run(ctx: RunContext, inputs: dict[str, Any]) -> StageOutput:
    blocks: list[dict[str, Any]] = inputs["blocks"]
    summarize = summarizer(ctx)
    ctx.progress.stage(4, NAME, len(blocks))
    live = dead = 0
    for b in blocks:
        b["prose"] = prose_for(b, ctx.turns(b["entry_ids"]), summarize)
        live += len(b["prose"]["live_zones"])
        dead += len(b["prose"]["dead_zone_summaries"])
        ctx.progress.advance()
    summary = {"blocks": len(blocks), "live_zones": live, "dead_zones_summarised": dead,
               "summarizer": summarize.name, "llm_fallbacks": summarize.failures}
    return StageOutput(summary, inputs)
