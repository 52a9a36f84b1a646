"""The web console (agent/commands/console) for tests: cogd serve's own app
(`build_app`) in a Starlette TestClient on a real Postgres, tokens for two users, and a
login as a browser does it (the form's `token`; the cookie is kept by the client).

    with console_app(settings, db_url, ("alice", "bob")) as (http, api, tokens):
        csrf = login(http, tokens["alice"])
        page = http.get("/ui/timeline")
        http.post(f"/ui/memory/{mid}/forget", data={"csrf": csrf})

One TestClient holds one cookie jar: log in again (or `fresh(http)`) to act as another
user, or open a second client on the same app (`TestClient(http.app)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CSRF = re.compile(r'<input type="hidden" name="csrf" value="([^"]+)">')


@contextmanager
def console_app(settings: Any, db_url: str, users: tuple[str, ...] = ("alice", "bob"),
                ) -> Iterator[tuple[Any, Any, dict[str, str]]]:
    """(TestClient over build_app, its MemoryAPI, {handle: token}) with the heuristic
    models (no model file needed)."""
    from fastapi.testclient import TestClient

    from agent.commands.serve import build_app
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.access.tokens import create
    from agent.services.records.sessions import ensure_user

    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    settings.llm.roles["consolidation"] = "heuristic"
    api = Runtime(settings).memory_api(db_url, users[0], channel="api", app="cogd-test-ui")
    try:
        with connect(db_url, autocommit=True) as conn:
            tokens = {h: create(conn, ensure_user(conn, h), h, "test", "tester")["token"]
                      for h in users}
        with TestClient(build_app(settings, db_url, api)) as http:
            yield http, api, tokens
    finally:
        api.close()


def csrf_of(html: str) -> str:
    """The CSRF field's value in a console page (every logged-in page has the logout
    form's)."""
    found = CSRF.search(html)
    assert found, "no CSRF field in the page"
    return found.group(1)


def login(http: Any, token: str) -> str:
    """Log in with `token` (the cookie stays in `http`); the session's CSRF value."""
    fresh(http)
    got = http.post("/ui/login", data={"token": token}, follow_redirects=False)
    assert got.status_code == 303, got.text
    page = http.get(got.headers["location"])
    assert page.status_code == 200, page.text
    return csrf_of(page.text)


def fresh(http: Any) -> None:
    """Forget the client's cookies (logged out, as far as the client knows)."""
    http.cookies.clear()
