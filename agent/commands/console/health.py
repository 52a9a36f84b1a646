"""/ui/health: `cogd status` as a page: processes and their heartbeats, queue depths,
recall latency p50/p95 per hour from recall_log, row counts. Installation-wide figures
(counts and timings, never a row's text: agent/services/access/console_views.py), so an
operator token's only, as `GET /v1/status` keeps processes and table sizes to one: any
other token gets a 403 page without a figure, and no Health entry in the navigation."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response
from markupsafe import Markup

from agent.commands.console import svg
from agent.commands.console.core import UI, ConsoleError, Viewer
from agent.commands.ops import MAIN_TABLES
from agent.services.access import console_views as views

OPERATOR_ONLY = ("Health needs an operator token: its figures are the whole installation's "
                 "(every user's), not one user's (cogd token create --operator)")


def register(ui: UI) -> None:
    console = ui.console
    ui.page("/ui/health", "Health", operator=True)

    @ui.router.get("/health")
    def health(request: Request, view: Viewer) -> Response:
        if not view.caller.operator:
            raise ConsoleError(403, OPERATOR_ONLY)
        with console.db() as conn:
            data = views.health(conn, MAIN_TABLES)
        lat = data["recall_latency"]
        span = f"last {data['latency_days']} days" + (
            f", newest {data['latency_rows']:,} recalls" if data["latency_capped"] else "")
        chart = svg.line_chart({"p50": [(r["hour"], r["p50"]) for r in lat],
                                "p95": [(r["hour"], r["p95"]) for r in lat]},
                               title=f"Recall latency per hour (UTC), {span}",
                               y_min=0, y_label="ms")
        return console.render(request, "health.html", view, title="Health", data=data,
                              latency_chart=Markup(chart))
