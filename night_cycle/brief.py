"""The morning briefs: what the night produced, as markdown, written once and never
overwritten.

- The operator's brief: DATA_DIR/night_cycle/<date>_run<id>/brief.md, installation-wide
  (every user's strongest blocks, the cortex's themes, the preoccupations, the stages'
  figures). The CLI prints its path (`cogd night-cycle`); no API returns it.
- Each user's brief (night_briefs, revision 0021): made from that user's own blocks and
  overnight thoughts, with a TL;DR, predictions falling due, model updates and open
  contradictions (seed 000 §9.7, night_cycle/user_brief.py), for every user the run
  wrote something of or who has one of those. MCP
  `cogd://brief/latest` (MemoryAPI.brief) gives a caller their own newest one. The
  installation-level sections (cortex themes, preoccupations) are left out of it: they
  are made across users, so they could quote another user's words.
"""

from __future__ import annotations

import json
from typing import Any

from agent.cortex.lance import CLUSTERS
from agent.db.queries import query
from agent.services.thinking import problems
from night_cycle import user_brief
from night_cycle.artifacts import RunDir
from night_cycle.context import RunContext


def _excerpt(prose: dict[str, Any], n: int = 280) -> str:
    zones = prose.get("live_zones") or prose.get("dead_zone_summaries") or []
    text = zones[0].get("content") or zones[0].get("summary") if zones else ""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= n else flat[: n - 3] + "..."


def _stage_lines(result: dict[str, Any]) -> list[str]:
    names = {"1": "flux detection", "2": "block formation", "3": "salience",
             "4": "compression", "5": "dual embedding", "6": "storage",
             "7": "cortex migration", "8": "RAPTOR clustering", "9": "day-table cleanup",
             "10": "overnight thinking", "11": "episodes and milestones"}
    lines = []
    for k, v in result["stages"].items():
        shown = {kk: vv for kk, vv in v.items() if kk not in ("artifact_sha256",)}
        lines.append(f"- **{k}. {names.get(k, k)}**: `{json.dumps(shown, default=str)}`")
    return lines


def render(ctx: RunContext, result: dict[str, Any]) -> str:
    s = result["stages"]
    conn = ctx.conn
    out = [f"# Morning brief: night cycle run {result['run_id']}", "",
           f"Turns before {result['cutoff']} were processed"
           + (" (resumed after an interruption)." if result["resumed"] else ".")]
    flux, compress = s.get("1", {}), s.get("4", {})
    if flux:
        out += ["", f"- {flux.get('turns', 0)} turns in {flux.get('stretches', 0)} stretches, "
                f"{flux.get('arcs', 0)} flux arcs. Surprise signal per turn: "
                f"{flux.get('signals', {})} (`embedding_novelty_proxy` = 1 - cosine to the "
                "recent context: a proxy, used when the provider gave no perplexity)."]
    if compress:
        out.append(f"- {compress.get('live_zones', 0)} live zones kept verbatim, "
                   f"{compress.get('dead_zones_summarised', 0)} dead zones summarised by "
                   f"**{compress.get('summarizer')}**.")
    rows = conn.execute(query("night_brief_top_blocks"), (ctx.run.run_id,)).fetchall()
    if rows:
        out += ["", "## Strongest blocks (TIES weight)", ""]
        for bid, ties, gain, when, prose, kind, signal in rows:
            out.append(f"- `{bid}` {kind} block, {when:%Y-%m-%d %H:%M}, weight {ties:.2f}, "
                       f"coherence gain {gain:.2f} ({signal}): {_excerpt(prose)}")
    cortex = ctx.cortex()
    clusters = cortex.rows(CLUSTERS, columns=["level", "summary_text", "leaf_count"])
    if clusters:
        out += ["", "## Cortex themes (RAPTOR)", ""]
        for c in sorted(clusters, key=lambda c: (-c["level"], -c["leaf_count"]))[:8]:
            text = " ".join(str(c["summary_text"]).split())[:240]
            out.append(f"- level {c['level']}, {c['leaf_count']} blocks: {text}")
    cents = conn.execute(query("night_brief_centroids"), (ctx.now, ctx.now)).fetchall()
    if cents:
        out += ["", "## Preoccupations", ""]
        out += [f"- {kind} ({status}): {label}" for kind, status, label in cents]
    thoughts = problems.of_run(conn, f"night-cycle run {result['run_id']}")
    if thoughts:  # stage 10 (seed 000 §9.5-9.6); offline: low confidence, said in each
        out += ["", "## Overnight thinking", ""]
        for kind, content, conf, handle, tid in thoughts:
            shown = " ".join(str(content).split())[:400]
            out.append(f"- {kind.replace('_', ' ')} for {handle or 'no user'}, confidence "
                       f"{(conf or 0.0):.2f} (`thought:{tid}`): {shown}")
    out += ["", "## Stages", "", *_stage_lines(result), ""]
    return "\n".join(out)


def render_for_user(ctx: RunContext, result: dict[str, Any], user_id: Any,
                    handle: str) -> str:
    """A user's own brief of the run: a TL;DR first (its third line), their blocks and
    overnight thoughts, their predictions falling due, model updates and open
    contradictions (night_cycle/user_brief.py); nothing of anyone else's (no cortex
    themes, no preoccupations: those are made across users)."""
    conn, run = ctx.conn, result["run_id"]
    who = {"run": run, "user": user_id}
    blocks, turns = conn.execute(query("night_brief_user_counts"), who).fetchone() or (0, 0)
    out = [f"# Morning brief for {handle}: night cycle run {run}", "",
           f"Your conversations before {result['cutoff']} were processed"
           + (" (resumed after an interruption)" if result["resumed"] else "")
           + f": {turns} turns in {blocks} blocks."]
    rows = conn.execute(query("night_brief_top_blocks_of_user"), who).fetchall()
    # seed 000 §9.7: a TL;DR first, and the sections after the blocks (issue 42 item 8)
    cfg = user_brief.BriefConfig.from_table(ctx.cfg)
    sections = user_brief.gather(conn, user_id, run, ctx.now, cfg)
    out[2:2] = ["TL;DR: " + user_brief.tldr(turns, blocks, _excerpt(rows[0][4]) if rows
                                            else None, sections, ctx.now), ""]
    if rows:
        out += ["", "## Your strongest blocks (TIES weight)", ""]
        for bid, ties, gain, when, prose, kind, signal in rows:
            out.append(f"- `{bid}` {kind} block, {when:%Y-%m-%d %H:%M}, weight {ties:.2f}, "
                       f"coherence gain {gain:.2f} ({signal}): {_excerpt(prose)}")
    thoughts = conn.execute(query("night_brief_thoughts_of_user"), {
        "theme": f"night-cycle run {run}", "user": user_id}).fetchall()
    if thoughts:  # stage 10; offline: low confidence, said in each
        out += ["", "## Overnight thinking", ""]
        for kind, content, conf, tid in thoughts:
            shown = " ".join(str(content).split())[:400]
            out.append(f"- {kind.replace('_', ' ')}, confidence {(conf or 0.0):.2f} "
                       f"(`thought:{tid}`): {shown}")
    out += user_brief.render(sections, ctx.now)
    return "\n".join(out) + "\n"


def write_for_users(ctx: RunContext, result: dict[str, Any]) -> int:
    """Each user's brief of the run (night_briefs; call in the transaction that finishes
    the run); a brief already written for the run and user is kept. How many users."""
    run = result["run_id"]
    users = ctx.conn.execute(query("night_brief_users"), {
        "run": run, "theme": f"night-cycle run {run}"}).fetchall()
    # and those with a prediction due, a model changed or a contradiction open (§9.7)
    users += [u for u in user_brief.users(ctx.conn, ctx.now, user_brief.BriefConfig.from_table(
        ctx.cfg)) if u[0] not in {x[0] for x in users}]
    for user_id, handle in users:
        ctx.conn.execute(query("night_brief_insert"), {
            "run": run, "user": user_id,
            "content": render_for_user(ctx, result, user_id, handle)})
    return len(users)


def write(ctx: RunContext, rundir: RunDir, result: dict[str, Any]) -> str:
    """Write the operator's brief.md and summary.json once; an existing brief is kept as
    it is."""
    path = rundir.write_once("brief.md", render(ctx, result))
    rundir.write_once("summary.json", json.dumps(result, indent=2, default=str))
    return str(path or rundir.path / "brief.md")
