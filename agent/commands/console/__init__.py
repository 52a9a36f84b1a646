"""The web console: `cogd serve` serves it under /ui (issue 44; docs/console.md).

Server-rendered HTML (Jinja2, autoescaped) over the same MemoryAPI and tokens as the
HTTP API: a token logs in (`POST /ui/login`, form field `token`), a server-side session
(console_sessions, revision 0027) in an HttpOnly, SameSite=Strict cookie on /ui keeps
it, and every page shows the token's user only. `mount(app, settings, url, api)` adds it
to the FastAPI app `build_app` makes (agent/commands/serve.py).

A page is a module with `register(ui: UI)` (agent/commands/console/core.py) listed in
PAGES; /work/notes/console-interface.md for the helpers building on it.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from agent.commands.console import auth, health, mind, overnight, pages
from agent.commands.console.core import (
    HEADERS,
    STATIC,
    UI,
    Console,
    ConsoleError,
    LoginRequired,
    Routes,
    View,
    Viewer,
    login_redirect,
)
from agent.errors import CogdError, InputError, NotFoundError

log = logging.getLogger("agent.console")
UNAVAILABLE = "cogd cannot answer this now: try again shortly (the server's log says why)"

__all__ = ["PAGES", "UI", "Console", "ConsoleError", "View", "Viewer", "mount"]

# each adds its routes and its navigation entry, in this order
PAGES: tuple[ModuleType, ...] = (pages, overnight, mind, health)


def mount(app: Any, settings: Any, url: str, api: Any) -> Console:
    """Add the console to `app`: /ui/login and /ui/logout, /ui/static, every page of
    PAGES, HTML error pages for /ui paths, and the security headers of every /ui
    response. The console's pool closes with `Console.close()` (serve's lifespan)."""
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import RedirectResponse, Response
    from fastapi.staticfiles import StaticFiles
    from starlette.exceptions import HTTPException as StarletteHTTPException

    console = Console(settings, url, api)
    app.state.console = console
    auth.register(app)
    ui = UI(console, Routes(app))

    @ui.router.get("")
    def home(view: Viewer) -> Response:
        return RedirectResponse("/ui/timeline", status_code=303)

    for page in PAGES:
        page.register(ui)
    app.mount("/ui/static", StaticFiles(directory=str(STATIC)), name="console-static")

    def is_ui(request: Request) -> bool:
        return request.url.path == "/ui" or request.url.path.startswith("/ui/")

    def page_error(request: Request, status: int, message: str,
                   headers: Any = None) -> Response:
        view = getattr(request.state, "view", None)
        response = console.render(request, "error.html", view, status=status,
                                  title=f"{status}", message=message)
        # a 500 is answered by ServerErrorMiddleware, outside UIHeaders: set them here
        for name, value in {**HEADERS, **(headers or {})}.items():
            if name.lower() == "allow":
                # Starlette joins a route's methods from a set, so its order follows
                # the hash seed; answer one fixed order
                value = ", ".join(sorted(m.strip() for m in value.split(",")))
            response.headers[name] = value
        return response

    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, _: LoginRequired) -> Response:
        if request.method in ("GET", "HEAD"):
            return login_redirect(request)
        return console.render(request, "login.html", None, status=401, title="Log in",
                              error="log in first: this console session has ended",
                              next=None)

    @app.exception_handler(ConsoleError)
    async def console_error(request: Request, exc: ConsoleError) -> Response:
        return page_error(request, exc.status, exc.message)

    # the API's JSON handlers stay the API's; a /ui path gets an HTML page instead
    def html_on_ui(exc_class: Any, status_of: Any, message_of: Any) -> None:
        json_handler = app.exception_handlers.get(exc_class)

        async def handler(request: Request, exc: Exception) -> Response:
            if is_ui(request) or json_handler is None:
                if status_of(exc) >= 500:
                    log.exception("console: %s failed", request.url.path)
                # a 405 keeps its Allow header
                return page_error(request, status_of(exc), message_of(exc),
                                  getattr(exc, "headers", None))
            return await json_handler(request, exc)  # type: ignore[no-any-return]

        app.add_exception_handler(exc_class, handler)

    html_on_ui(StarletteHTTPException, lambda e: e.status_code,
               lambda e: "no such page" if e.status_code == 404 else str(e.detail))
    html_on_ui(RequestValidationError, lambda e: 400, lambda e: "a bad value in the request")
    # a service's error: bad input (404: what it named is not found) says what was wrong;
    # anything else (the database, a provider) one fixed line, its text only in the log
    html_on_ui(CogdError, lambda e: (404 if isinstance(e, NotFoundError) else 400)
               if isinstance(e, InputError) else 503,
               lambda e: str(e) if isinstance(e, InputError) else UNAVAILABLE)
    html_on_ui(Exception, lambda e: 500, lambda e: f"internal error: {e.__class__.__name__}")

    app.add_middleware(UIHeaders)
    return console


class UIHeaders:
    """ASGI middleware: HEADERS on every /ui response (pages, redirects, errors, static
    files); any other path passes through untouched (a /v1 stream is not wrapped)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path != "/ui" and not path.startswith("/ui/"):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                from starlette.datastructures import MutableHeaders

                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)
