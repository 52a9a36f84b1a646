"""Logging in and out of the console.

`GET /ui/login`: the token form. `POST /ui/login` with the form field `token` (an API
token, `cogd token create --user HANDLE`) alone logs in, scripts too: a live token opens
a console session, sets its cookie and answers 303 to `next` (a /ui path) or
/ui/timeline; an unknown or revoked token answers 401 with the form and the error, and
sets no cookie. There is no CSRF field to send before a session exists; a browser's
login from another site (Origin or Sec-Fetch-Site) is refused with 403.
A login from a browser whose cookie names a live session ends that session first
(`ended_by` 'relogin'). `POST /ui/logout` (a page's button, with the CSRF field) ends the
session.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import Form, Request
from fastapi.responses import RedirectResponse, Response

from agent.commands.console.core import (
    COOKIE,
    Viewer,
    clear_cookie,
    console_of,
    safe_next,
    same_site,
    set_cookie,
)


def register(app: Any) -> None:
    """/ui/login (no session needed) and /ui/logout (behind the guard), on the app."""

    @app.api_route("/ui/login", methods=["GET", "HEAD"], include_in_schema=False)
    async def login_form(request: Request, next: str | None = None) -> Response:
        console = console_of(request)
        secret = request.cookies.get(COOKIE, "")
        if secret and await asyncio.to_thread(console.find, secret) is not None:
            return RedirectResponse(safe_next(next), status_code=303)
        return console.render(request, "login.html", None, title="Log in", error=None,
                              next=safe_next(next))

    @app.post("/ui/login", include_in_schema=False)
    async def login(request: Request, token: str = Form(default=""),
                    next: str | None = Form(default=None)) -> Response:
        same_site(request)
        console = console_of(request)
        token = token.strip()
        caller = await asyncio.to_thread(console.api.authenticate, token) if token else None
        if caller is None:
            return console.render(
                request, "login.html", None, status=401, title="Log in", next=safe_next(next),
                error="unknown or revoked token" if token else "enter a token")
        # a cookie that names a live session (another login in this browser): end it
        # first, so one browser holds one live session
        old_secret = request.cookies.get(COOKIE, "")
        old = await asyncio.to_thread(console.find, old_secret) if old_secret else None
        if old is not None:
            await asyncio.to_thread(console.end, old, "relogin")
        secret, _ = await asyncio.to_thread(console.open, caller,
                                            request.headers.get("user-agent", ""))
        response = RedirectResponse(safe_next(next), status_code=303)
        set_cookie(response, request, secret, console.session_seconds)
        return response

    @app.post("/ui/logout", include_in_schema=False)  # Viewer: session and CSRF checked
    async def logout(request: Request, view: Viewer) -> Response:
        await asyncio.to_thread(console_of(request).end, view.session)
        response = RedirectResponse("/ui/login", status_code=303)
        clear_cookie(response, request)
        return response
