"""Stage 2, block formation (seed 001 §3.3, §4): spans with margins, continuity, metablocks.

Each stretch of stage 1 is partitioned into arc blocks (2 turns of margin each side) and
baseline blocks, so every turn of the run lands in exactly one block and never in a
block of another session or cycle. A block's id is derived from its first and last turn,
so forming it again (a re-run, a resume) names the same block.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from agent.domain.night_blocks import (
    BlockConfig,
    StretchEnds,
    chains,
    form_spans,
    link_continuations,
    mean_unit,
)
from agent.domain.night_flux import FluxArc, arrete
from night_cycle.context import RunContext, Turn
from night_cycle.stages import StageOutput

NAME = "block formation"
TRANSACTIONAL = False
BLOCK_NAMESPACE = uuid.UUID("0b9f3c1e-7d1a-4f7e-9a57-5c0d2f1e6b42")
logger = logging.getLogger(__name__)


def block_id(session_id: str, first: str, last: str) -> str:
    return str(uuid.uuid5(BLOCK_NAMESPACE, f"block:{session_id}:{first}:{last}"))


def metablock_id(constituents: list[str]) -> str:
    return str(uuid.uuid5(BLOCK_NAMESPACE, "metablock:" + ",".join(constituents)))


def _flux_metrics(stretch: dict[str, Any], lo: int, hi: int, arcs: list[FluxArc],
                  kind: str) -> dict[str, Any]:
    signal = [s for s in stretch["signal"][lo:hi + 1] if s is not None]
    if arcs:
        peak = max(a.peak for a in arcs)
        base, final = arcs[0].baseline, arcs[-1].final
        quality = sum(a.reversal_quality for a in arcs)
        duration = sum(a.duration for a in arcs)
    else:
        peak = max(signal) if signal else 0.0
        first_base = stretch["baseline"][lo]
        base = (first_base if first_base is not None
                else (sum(signal) / len(signal) if signal else 0.0))
        final = signal[-1] if signal else 0.0
        quality, duration = 0.0, 0
    return {
        "kind": kind, "signal": stretch["signal_name"], "peak": round(peak, 6),
        "baseline": round(base, 6), "final": round(final, 6),
        "flux_reversal_quality": round(quality, 6), "arc_duration_turns": duration,
        "arrete": round(arrete(base, final), 6),
        "arcs": [dict(a.as_dict(), start=a.start - lo, end=a.end - lo) for a in arcs],
    }


def _ends(key: str, stretch: dict[str, Any], turns: list[Turn], arcs: list[FluxArc],
          cfg: BlockConfig) -> StretchEnds:
    """seed 001 §4.2: does the stretch end mid-arc (spike or resolution in its last turns)?
    The open arc's question is the mean of its turns among those last turns; the next
    session's is the mean of its first user turns."""
    n, last = len(turns), cfg.continuity_last_turns
    open_arc = next((a for a in arcs if not a.closed), None)
    tail_states = stretch["states"][-last:]
    vector = None
    if open_arc is not None and any(s in ("spike", "resolution") for s in tail_states):
        lo = max(open_arc.start, n - last)
        vector = mean_unit([t.vector for t in turns[lo:] if t.vector is not None])
    opening = [t.vector for t in turns if t.role == "user" and t.vector is not None]
    return StretchEnds(
        key=key, user_id=stretch["user_id"], cycle=stretch["cycle"],
        start_time=turns[0].created_at, end_time=turns[-1].created_at,
        open_arc_vector=vector, opening_vector=mean_unit(opening[:last]),
    )


def run(ctx: RunContext, inputs: dict[str, Any]) -> StageOutput:
    cfg = BlockConfig.from_table(ctx.cfg)
    stretches = inputs["stretches"]
    ctx.progress.stage(2, NAME, len(stretches))
    blocks: list[dict[str, Any]] = []
    ends: list[StretchEnds] = []
    first_last: dict[str, tuple[str, str]] = {}  # stretch key -> (first block, last block)
    for n, stretch in enumerate(stretches):
        ids = stretch["entry_ids"]
        turns = ctx.turns(ids)
        if len(turns) != len(ids):  # rows vanished since stage 1: the next run takes the rest
            logger.warning("stretch of session %s lost %d rows since stage 1; skipped",
                           stretch["session_id"], len(ids) - len(turns))
            continue
        arcs = [FluxArc.from_dict(a) for a in stretch["arcs"]]
        spans = form_spans(len(turns), arcs, cfg)
        made: list[dict[str, Any]] = []
        for span in spans:
            part = turns[span.start:span.end + 1]
            made.append({
                "block_id": block_id(stretch["session_id"], part[0].entry_id, part[-1].entry_id),
                "session_id": stretch["session_id"], "user_id": stretch["user_id"],
                "tier": stretch["tier"], "cycle": stretch["cycle"], "kind": span.kind,
                "entry_ids": [t.entry_id for t in part],
                "turns": [part[0].turn_number, part[-1].turn_number],
                "arc_start_time": part[0].created_at.isoformat(),
                "arc_end_time": part[-1].created_at.isoformat(),
                "anterior": span.anterior, "posterior": span.posterior,
                "open_arc": span.open_arc,
                "z": stretch["z"][span.start:span.end + 1],
                "signal": stretch["signal"][span.start:span.end + 1],
                "flux_metrics": _flux_metrics(stretch, span.start, span.end, list(span.arcs),
                                              span.kind),
                "continuity_flag": False, "continues_from": None, "continued_by": None,
            })
        if not made:
            continue
        key = f"s{n}"
        first_last[key] = (made[0]["block_id"], made[-1]["block_id"])
        ends.append(_ends(key, stretch, turns, arcs, cfg))
        if ends[-1].open_arc_vector is not None:
            made[-1]["continuity_flag"] = True  # seed 001 §4.2: session ends mid-arc
        blocks.extend(made)
        ctx.progress.advance()
    by_id = {b["block_id"]: b for b in blocks}
    links = link_continuations(ends, cfg)
    for earlier, later, sim in links:
        a, b = first_last[earlier][1], first_last[later][0]
        by_id[a]["continued_by"] = b
        by_id[b]["continues_from"] = a
        by_id[b]["continuity_similarity"] = round(sim, 4)
    metablocks = []
    for chain in chains(links):
        members = [first_last[chain[0]][1]]
        for i, k in enumerate(chain[1:], start=1):
            members.append(first_last[k][0])
            if i < len(chain) - 1 and first_last[k][1] not in members:
                members.append(first_last[k][1])  # a middle session: its open end links on
        metablocks.append({"block_id": metablock_id(members), "constituents": members})
    summary = {
        "blocks": len(blocks), "arc_blocks": sum(b["kind"] == "arc" for b in blocks),
        "baseline_blocks": sum(b["kind"] == "baseline" for b in blocks),
        "continuity_flags": sum(b["continuity_flag"] for b in blocks),
        "continuations": len(links), "metablocks": len(metablocks),
    }
    return StageOutput(summary, {"blocks": blocks, "metablocks": metablocks})
