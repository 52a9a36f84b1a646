"""/ui/mind: what cogd holds about itself and this user: identity and goal weights over
time, the emotional state over time (valence, energy), predictions and their calibration,
principles and open intentions (agent/services/access/console_views.py)."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response
from markupsafe import Markup

from agent.commands.console import svg
from agent.commands.console.core import UI, Viewer
from agent.services.access import console_views as views


def register(ui: UI) -> None:
    console = ui.console
    ui.page("/ui/mind", "Mind")

    @ui.router.get("/mind")
    def mind(request: Request, view: Viewer) -> Response:
        with console.db() as conn:
            data = views.mind(conn, view.user_id, view.handle)
        emotion = data["emotion"]
        charts = {
            "identity": svg.line_chart(data["identity"], title="Identity weights",
                                       y_min=0, y_max=1, y_label="weight"),
            "goals": svg.line_chart(data["goals"], title="Goal weights", y_min=0, y_max=1,
                                    y_label="weight"),
            "emotion": svg.line_chart(
                {"valence": [(e["at"], e["valence"]) for e in emotion],
                 "energy": [(e["at"], e["energy"]) for e in emotion]},
                title="Emotional state", y_min=-1, y_max=1, y_label="valence -1..1, energy 0..1"),
            "calibration": svg.calibration_plot(
                [svg.CalibrationBin(s, o, n) for s, o, n in data["calibration_bins"]],
                title="Calibration"),
        }
        return console.render(request, "mind.html", view, title="Mind", data=data,
                              charts={k: Markup(v) for k, v in charts.items()},
                              mood=emotion[-1] if emotion else None)
