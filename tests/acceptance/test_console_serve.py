"""The web console as `cogd serve` serves it (a real uvicorn on 127.0.0.1, started by the
CLI with its own settings and database roles): a script logs in with the form field
`token` alone, keeps the cookie, reads its pages and forgets a memory with the CSRF field
(issue 44). tests/integration/test_console.py covers the rest in-process."""

from __future__ import annotations

from typing import Any

import httpx

from tests.acceptance.test_serve import client, server  # noqa: F401  (the fixture)
from tests.integration.console_client import csrf_of


def test_a_script_logs_in_with_its_token_and_forgets_through_the_console(
        server: dict[str, Any]) -> None:  # noqa: F811
    made = client(server, "alice").post("/v1/memories",
                                        json={"text": "The spare key is under the blue pot."})
    assert made.status_code == 201, made.text
    mid = made.json()["memory_id"]
    with httpx.Client(base_url=server["base"], timeout=120) as ui:
        assert ui.get("/ui/timeline").headers["location"] == "/ui/login?next=/ui/timeline"
        logged = ui.post("/ui/login", data={"token": server["tokens"]["alice"]["token"]})
        assert logged.status_code == 303 and logged.headers["location"] == "/ui/timeline"
        assert "httponly" in logged.headers["set-cookie"].lower()
        page = ui.get("/ui/timeline")
        assert page.status_code == 200 and "blue pot" in page.text
        found = ui.get("/ui/timeline", params={"q": "Where is the spare key?"}).text
        assert f'href="/ui/memory/{mid}"' in found
        csrf = csrf_of(ui.get(f"/ui/memory/{mid}").text)
        assert ui.post(f"/ui/memory/{mid}/forget", data={}).status_code == 403
        assert ui.post(f"/ui/memory/{mid}/forget", data={"csrf": csrf}).status_code == 200
        assert ui.get(f"/ui/memory/{mid}").status_code == 404
        assert "blue pot" not in ui.get("/ui/timeline").text
        assert ui.post("/ui/logout", data={"csrf": csrf}).status_code == 303
        assert ui.get("/ui/timeline").status_code == 303
    # bob's token: none of alice's pages
    with httpx.Client(base_url=server["base"], timeout=120) as ui:
        ui.post("/ui/login", data={"token": server["tokens"]["bob"]["token"]})
        assert ui.get(f"/ui/memory/{mid}").status_code == 404
