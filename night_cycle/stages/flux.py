"""Stage 1, flux detection (seed 001 §3.2): surprise per turn, flux states, arcs.

The turns of this run (day_table rows before the run's cutoff that no block covers yet)
are cut into stretches, one per session and cycle. Each stretch gets its surprise signal
(perplexity when the provider stored one for every turn, else the named embedding-novelty
proxy) and its arcs. `surprise` and `flux_state` are written to day_table in the stage's
transaction; `perplexity_score` stays what the provider measured.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent.db.queries import query
from agent.domain.night_flux import FluxConfig, choose_signal, detect_flux
from night_cycle.context import RunContext, Turn
from night_cycle.hooks import fault_hook
from night_cycle.stages import StageOutput

NAME = "flux detection"
TRANSACTIONAL = True

def stretches(ctx: RunContext, turns: list[Turn]) -> list[list[Turn]]:
    """One session's turns within one cycle, in order."""
    groups: dict[tuple[str, str], list[Turn]] = {}
    for t in turns:
        groups.setdefault((t.session_id, ctx.cycle_key(t.created_at)), []).append(t)
    return [groups[k] for k in sorted(groups, key=lambda k: (groups[k][0].created_at, k))]


def run(ctx: RunContext, _inputs: Any = None) -> StageOutput:
    cfg = FluxConfig.from_table(ctx.cfg)
    turns = ctx.candidate_turns()
    groups = stretches(ctx, turns)
    ctx.progress.stage(1, NAME, len(groups))
    out: list[dict[str, Any]] = []
    ids: list[str] = []
    values: list[float | None] = []
    states: list[str] = []
    signals: Counter[str] = Counter()
    arcs = 0
    for group in groups:
        name, signal = choose_signal([t.perplexity for t in group],
                                     [t.vector for t in group], cfg.novelty_context_turns)
        trace = detect_flux(signal, cfg)
        signals[name] += len(group)
        arcs += len(trace.arcs)
        first = group[0]
        out.append({
            "session_id": first.session_id, "user_id": first.user_id, "tier": first.tier,
            "cycle": ctx.cycle_key(first.created_at),
            "entry_ids": [t.entry_id for t in group], "signal_name": name,
            "signal": trace.signal, "z": [round(z, 6) for z in trace.z],
            "smoothed": trace.smoothed, "baseline": trace.baseline, "states": trace.states,
            "arcs": [a.as_dict() for a in trace.arcs],
        })
        ids.extend(t.entry_id for t in group)
        values.extend(trace.signal)
        states.extend(trace.states)
        ctx.progress.advance()
    if len(groups) > 1:
        fault_hook(1, "mid")
    for start in range(0, len(ids), 5000):
        ctx.conn.execute(query("night_flux_update"),
                         (ids[start:start + 5000], values[start:start + 5000],
                          states[start:start + 5000]))
    summary = {"turns": len(turns), "stretches": len(groups), "arcs": arcs,
               "signals": dict(signals), "states": dict(Counter(states))}
    return StageOutput(summary, {"stretches": out})
