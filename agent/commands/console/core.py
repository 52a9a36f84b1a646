"""The console's machinery: sessions and the login gate, CSRF, templates, errors.

Every page route is added with `UI.router` (prefix /ui), whose dependency `guard` runs
before the route: a request without a live session is sent to the login page (GET: 303
to /ui/login?next=...; any other method: 401 with the login page), and a request that
is not GET or HEAD must carry the session's CSRF secret in the form field `csrf` (403
otherwise, before the route runs) and must not come from another site (a browser's
Origin or Sec-Fetch-Site header). A route gets the caller as `view: Viewer`
(`view.caller`: token_id, user_id, handle, operator).

Templates are Jinja2 with autoescaping on for every template: user text is always
escaped; `csrf_input` (the hidden field) and what a page marks `Markup` itself are the
only raw HTML.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlsplit

import psycopg
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from agent.services.access import console as sessions
from agent.services.access.console import ConsoleSession
from agent.services.access.tokens import Caller

log = logging.getLogger("agent.console")

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
PREFIX = "/ui"
COOKIE = "cogd_console"
SESSION_SECONDS = 12 * 3600  # a login lasts 12 hours (then: log in again)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
HEADERS = {  # on every /ui response
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; "
                                "img-src 'self' data:; form-action 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class LoginRequired(Exception):
    """No live console session: the login page answers."""


class ConsoleError(Exception):
    """A console page's error: an HTML page with this status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class View:
    """The logged-in request: whose it is and the CSRF secret its forms carry."""
    session: ConsoleSession

    @property
    def caller(self) -> Caller:
        return self.session.caller

    @property
    def handle(self) -> str:
        return self.caller.handle

    @property
    def user_id(self) -> Any:
        return self.caller.user_id

    @property
    def csrf(self) -> str:
        return self.session.csrf


class Console:
    """One per app (`app.state.console`): the MemoryAPI the HTTP API uses (`api`: recall,
    memory, why, forget, ... scoped by handle), a connection pool for the pages' own reads
    (`db()`), the templates (`render`) and the navigation."""

    def __init__(self, settings: Any, url: str, api: Any) -> None:
        from agent.runtime import Runtime

        self.settings, self.url, self.api = settings, url, api
        # the composition root builds the pool (agent/db/pool.py; as [database] app_role,
        # connections opened on demand)
        self.runtime = Runtime(settings, url=url, process="serve-console")
        self.env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                               undefined=StrictUndefined, trim_blocks=True,
                               lstrip_blocks=True)
        self.env.filters["when"] = when
        self.env.filters["day"] = day
        self.env.filters["excerpt"] = excerpt
        self.nav: list[tuple[str, str]] = []
        self.operator_pages: set[str] = set()  # nav entries shown to operator tokens only
        self.session_seconds = SESSION_SECONDS

    @contextmanager
    def db(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled autocommit connection for the length of the block."""
        with self.runtime.pool.connection() as conn:
            yield conn

    def close(self) -> None:
        self.runtime.close_pool()

    def render(self, request: Request, template: str, view: View | None, *,
               status: int = 200, title: str = "", **values: Any) -> HTMLResponse:
        """A template as the response. Its context: `values`, plus `view` (None when
        logged out), `title`, `nav` [(path, label)], `active` (the request's path),
        `csrf_input` (the hidden CSRF field: put it in every POST form). An operator
        page's entry is in `nav` for an operator token only."""
        operator = view is not None and view.caller.operator
        nav = [(p, label) for p, label in self.nav if operator or p not in self.operator_pages]
        html = self.env.get_template(template).render(
            view=view, title=title, nav=nav, active=request.url.path,
            csrf_input=csrf_input(view), **values)
        return HTMLResponse(html, status_code=status)

    # -- sessions ------------------------------------------------------------------------

    def find(self, secret: str) -> ConsoleSession | None:
        with self.db() as conn:
            return sessions.find_session(conn, secret)

    def open(self, caller: Caller, user_agent: str) -> tuple[str, ConsoleSession]:
        with self.db() as conn:
            return sessions.open_session(conn, caller, self.session_seconds, user_agent)

    def end(self, session: ConsoleSession, how: str = "logout") -> bool:
        with self.db() as conn:
            return sessions.end_session(conn, session, how)


def csrf_input(view: View | None) -> Markup:
    if view is None:
        return Markup("")
    return Markup('<input type="hidden" name="csrf" value="%s">') % view.csrf


def console_of(request: Request) -> Console:
    found: Console = request.app.state.console
    return found


async def guard(request: Request) -> View:
    """Every /ui page's dependency (UI.router adds it): the live session of the request's
    cookie, and for a request that changes something its CSRF field and origin."""
    console = console_of(request)
    secret = request.cookies.get(COOKIE, "")
    session = await asyncio.to_thread(console.find, secret) if secret else None
    if session is None:
        raise LoginRequired()
    if request.method not in SAFE_METHODS:
        same_site(request)
        form = await request.form()  # parsed once: a route's Form() reads the same
        sent = form.get("csrf")
        if not isinstance(sent, str) or not hmac.compare_digest(
                sent.encode(), session.csrf.encode()):
            raise ConsoleError(403, "this form has no valid CSRF field (reload the page "
                                    "and try again)")
    view = View(session)
    request.state.view = view
    return view


Viewer = Annotated[View, Depends(guard)]


def same_site(request: Request) -> None:
    """403 for a browser's request from another site: an Origin that is not this one,
    or Sec-Fetch-Site cross-site (scripts send neither)."""
    origin = request.headers.get("origin")
    here = f"{request.url.scheme}://{request.url.netloc}"
    if origin is not None and origin != here:
        raise ConsoleError(403, "a request from another site is refused")
    if request.headers.get("sec-fetch-site") == "cross-site":
        raise ConsoleError(403, "a request from another site is refused")


def safe_next(target: str | None) -> str:
    """Where to go after login: a /ui path of this server, else the timeline."""
    if not target or not target.startswith("/ui/") or "//" in target or "\\" in target:
        return "/ui/timeline"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return "/ui/timeline"
    return target


def login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/ui/login?next={quote(target, safe='/')}", status_code=303)


def set_cookie(response: Response, request: Request, secret: str, seconds: int) -> None:
    response.set_cookie(COOKIE, secret, max_age=seconds, path="/ui", httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")


def clear_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict",
                           secure=request.url.scheme == "https")


class Routes:
    """`ui.router`: `@ui.router.get("/x")` / `.post("/x")` add the route `/ui/x` to the
    app itself, behind `guard`, out of the OpenAPI schema. The routes land in the app's
    own route table, one APIRoute each (an included APIRouter would sit there as one
    opaque entry, which the isolation test's route listing could not read)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def api_route(self, path: str, methods: list[str], **options: Any) -> Any:
        return self.app.api_route(PREFIX + path, methods=methods,
                                  dependencies=[Depends(guard)], include_in_schema=False,
                                  **options)

    def get(self, path: str, **options: Any) -> Any:
        """GET and HEAD (a HEAD answers as the GET would, without the body)."""
        return self.api_route(path, ["GET", "HEAD"], **options)

    def post(self, path: str, **options: Any) -> Any:
        return self.api_route(path, ["POST"], **options)


@dataclass
class UI:
    """What a page module's `register(ui)` gets: the console and the routes to add to
    (`ui.router.get(path)`: /ui + path, behind `guard`); `page(path, label)` adds a
    navigation entry (`operator=True`: shown to an operator token only; the page's route
    checks `view.caller.operator` itself)."""
    console: Console
    router: Routes

    def page(self, path: str, label: str, operator: bool = False) -> None:
        self.console.nav.append((path, label))
        if operator:
            self.console.operator_pages.add(path)


# -- template filters ------------------------------------------------------------------

def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def when(value: Any) -> str:
    """A time as 'YYYY-MM-DD HH:MM' (UTC); '' for none."""
    at = _as_datetime(value)
    if at is None:
        return "" if value is None else str(value)
    if at.tzinfo is not None:
        from datetime import UTC

        at = at.astimezone(UTC)
    return at.strftime("%Y-%m-%d %H:%M")


def day(value: Any) -> str:
    """A time's day, 'YYYY-MM-DD' (UTC)."""
    return when(value)[:10]


def excerpt(value: Any, chars: int = 200) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= chars else text[: chars - 1] + "…"
