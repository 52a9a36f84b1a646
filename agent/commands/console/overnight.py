"""/ui/overnight: the user's latest morning brief, the night cycle's runs with their stage
timings, and the cortex's RAPTOR tree (agent/services/access/console_views.py).

The runs are the installation's (every user's turns and their counts), so an operator
token's only, as `GET /v1/status` keeps the installation's figures to one; so is the
cortex's error text (its URI and the store's answer): any other token reads one fixed
line when the cortex cannot be read.

The tree shows only the nodes whose blocks are all the user's (or of no user), the rule
recall's broad questions use; each node links to its entry below, which opens its
summary and its blocks' text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from markupsafe import Markup

from agent.commands.console import svg
from agent.commands.console.core import UI, Viewer
from agent.domain.broad import ClusterNode
from agent.services.access import console_views as views

BLOCKS_PER_NODE = 12  # a branch's entry lists this many of its blocks, then a count


class ClusterReader:
    """The cortex's RAPTOR nodes (LanceDB cortex_clusters), opened once it exists."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.cortex: Any = None

    def nodes(self) -> tuple[list[ClusterNode], str | None]:
        """The nodes, and why there are none when the cortex cannot be read (an object
        store that does not answer: the page says so and shows the rest)."""
        from agent.cortex.lance import CLUSTERS, CortexOpenError, LanceCortex, cortex_uri
        from agent.domain.tables import need

        uri = cortex_uri(self.settings)
        try:
            if self.cortex is None:
                if "://" not in uri and not (Path(uri) / f"{CLUSTERS}.lance").exists():
                    return [], None
                wait = float(need(self.settings.night_cycle, "cortex_read_consistency_s"))
                self.cortex = LanceCortex.from_settings(self.settings, read_consistency_s=wait)
            if not self.cortex.exists(CLUSTERS):
                return [], None
            rows = self.cortex.rows(CLUSTERS, columns=[
                "cluster_id", "level", "summary_text", "member_ids", "leaf_count"])
        except (CortexOpenError, OSError, RuntimeError, ValueError) as exc:
            self.cortex = None
            found = exc if isinstance(exc, CortexOpenError) else CortexOpenError(uri, exc)
            return [], str(found)
        return [ClusterNode(cluster_id=r["cluster_id"], level=int(r["level"]),
                            summary=r["summary_text"] or "",
                            member_ids=tuple(json.loads(r["member_ids"] or "[]")),
                            leaf_count=int(r["leaf_count"] or 0)) for r in rows], None


def block_text(prose: dict[str, Any]) -> str:
    from night_cycle.prose import full_text

    try:
        return full_text(prose)
    except (KeyError, TypeError, ValueError):
        return ""


def register(ui: UI) -> None:
    console = ui.console
    reader = ClusterReader(console.settings)
    ui.page("/ui/overnight", "Overnight")

    @ui.router.get("/overnight")
    def overnight(request: Request, view: Viewer) -> Response:
        operator = view.caller.operator
        nodes, cortex_error = reader.nodes()
        if cortex_error is not None and not operator:
            cortex_error = "the cortex cannot be read now"
        with console.db() as conn:
            brief = views.latest_brief(conn, view.user_id)
            runs = views.night_runs(conn) if operator else []
            shown, blocks, hidden = views.visible_tree(conn, view.user_id, nodes)
        drawing = svg.tree([svg.TreeNode(v.node.cluster_id, v.node.level, v.node.summary,
                                         v.parent_id, f"#cluster-{v.node.cluster_id}",
                                         len(v.blocks)) for v in shown],
                           title="RAPTOR levels of your cortex", max_width=920)
        summaries = {v.node.cluster_id: v.node.summary for v in shown}
        entries = []
        for v in shown:
            # a branch (level 1) opens its blocks; a higher node its member nodes
            listed = ([blocks[b] for b in v.blocks[:BLOCKS_PER_NODE] if b in blocks]
                      if v.node.level == 1 else [])
            children = [{"id": m, "summary": summaries[m]} for m in v.node.member_ids
                        if m in summaries] if v.node.level > 1 else []
            entries.append({
                "id": v.node.cluster_id, "level": v.node.level, "summary": v.node.summary,
                "leaves": len(v.blocks), "children": children,
                "blocks": [{"id": b["block_id"], "start": b["start"], "end": b["end"],
                            "text": block_text(b["prose"])} for b in listed],
                "more": max(0, len(v.blocks) - len(listed)) if v.node.level == 1 else 0})
        return console.render(request, "overnight.html", view, title="Overnight",
                              brief=brief, runs=runs, tree=Markup(drawing),
                              entries=entries, hidden=hidden, operator=operator,
                              cortex_error=cortex_error)
