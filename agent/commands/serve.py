"""`cogd serve`: the HTTP API (FastAPI on uvicorn, OpenAPI at /docs), and `cogd token`.

Every /v1 route needs `Authorization: Bearer <token>`; a token is bound to one user
(`cogd token create --user HANDLE`) and every route works on that user's memories only.
Errors are JSON, `{"error": {"message", "type"}}` (OpenAI's shape), with a 4xx for what
the caller can fix; an unexpected failure is a 500 with one line, never a traceback.

`POST /v1/chat/completions` is OpenAI-compatible: the last user message goes through the
same inbox → loop → outbox path as `cogd chat` (a loop thread in this process when no
loop process runs), in one session per token (or per `X-Cogd-Session` name); `stream: true`
sends the reply as server-sent events while it is generated.
"""

# no `from __future__ import annotations` here: FastAPI reads the routes' annotations,
# and the request models are local to build_app
import asyncio
import contextlib
import getpass
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import click

from agent.commands.context import cogd_version, json_option, settings_from
from agent.errors import CogdError, InputError, NotFoundError

log = logging.getLogger("agent.serve")

CHAT_TIMEOUT_S = 600.0
# set when `cogd serve` is asked to stop: a chat still waiting for its reply ends with a
# 503 at once (its inbox row is kept) instead of holding the shutdown (issue 38)
STOPPING = threading.Event()
POLL_S = 0.1
MAX_BODY_BYTES = 64 * 1024 * 1024  # an import larger than this: split it
MAX_SESSION_NAME = 200  # X-Cogd-Session: a name, not a document (sessions.MAX_SESSION_KEY)


class ApiError(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes is refused with a 413 (and
    `Connection: close`) whatever its transfer encoding. A declared Content-Length over
    the limit is refused before anything is read; otherwise the bytes are counted as the
    app reads them (chunked bodies have no length), and the read that passes the limit
    sends the 413 and raises in the app, so no more than `limit` bytes (plus the one
    message in hand, at most uvicorn's 64 KiB read-ahead) are ever buffered or parsed."""

    def __init__(self, app: Any, limit: int) -> None:
        from fastapi import HTTPException

        self.app, self.limit, self.refusal = app, limit, HTTPException
        self.message = f"the body is over {limit} bytes: split it"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = [v for k, v in scope["headers"] if k.lower() == b"content-length"]
        if any(not v.isdigit() or int(v) > self.limit for v in declared):
            await self._refuse(send)
            return
        seen = 0
        started = refused = False

        async def counted() -> Any:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    if not started and not refused:
                        refused = True
                        await self._refuse(send)
                    raise self.refusal(413, self.message)
            return message

        async def tracked(message: Any) -> None:
            nonlocal started
            if refused:  # the 413 is out: what the app answers after it is dropped
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except Exception:
            if not refused:  # the app's own failure; after a 413, the aborted read's
                raise

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"error": {"message": self.message,
                                     "type": "invalid_request_error"}}).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"application/json"), (b"connection", b"close"),
            (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def build_app(settings: Any, url: str, api: Any) -> Any:
    """The FastAPI app over a MemoryAPI (agent/services/access/memory_api.py)."""
    from fastapi import Depends, FastAPI, Header, Query, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, StreamingResponse
    from pydantic import BaseModel, Field

    from agent.services.access.tokens import Caller

    local_loop: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(started: Any) -> AsyncIterator[None]:
        yield
        console = getattr(started.state, "console", None)
        if console is not None:  # the web console's pool (agent/commands/console)
            console.close()
        pair = local_loop.get("worker")
        if pair:  # the loop thread this process started, if it did
            worker, thread = pair
            worker.stop.set()
            # a stuck turn does not hold the shutdown: the thread is a daemon, and its
            # claim dies with this process's connections (issue 38)
            await asyncio.to_thread(thread.join, _shutdown_budget(settings)[1])

    app = FastAPI(title="cogd", version=cogd_version(), lifespan=lifespan, description=(
        "cogd's memory over HTTP. Every /v1 route needs `Authorization: Bearer <token>` "
        "(`cogd token create --user HANDLE`) and sees only that user's memories."))
    loop_lock = asyncio.Lock()

    def error(status: int, message: str, kind: str) -> JSONResponse:
        return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)

    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.middleware("http")
    async def gate(request: Request, call_next: Any) -> Any:
        """Before a /v1 body is read: a request without a live token is refused (401);
        the route then finds the caller again. (A body over the limit: BodyLimit, the
        outer middleware.)"""
        if request.url.path.startswith("/v1/"):
            try:
                request.state.caller = await asyncio.to_thread(
                    check_token, request.headers.get("authorization"))
            except ApiError as exc:
                return error(exc.status, exc.message, exc.kind)
        return await call_next(request)

    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)  # added last: the outermost

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return error(exc.status_code, str(exc.detail), kind)

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error(exc.status, exc.message, exc.kind)

    @app.exception_handler(CogdError)
    async def cogd_error(_: Request, exc: CogdError) -> JSONResponse:
        return error(400 if isinstance(exc, InputError) else 503, str(exc),
                     "invalid_request_error" if isinstance(exc, InputError) else "server_error")

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return error(422, f"{where}: {first.get('msg', 'invalid')}" if where
                     else str(first.get("msg", "invalid request")), "invalid_request_error")

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("cogd serve: request failed")
        return error(500, f"internal error: {exc.__class__.__name__}", "server_error")

    def caller(request: Request,
               authorization: str | None = Header(default=None)) -> Caller:
        """The caller the gate found (it checks every /v1 request's token first)."""
        found = getattr(request.state, "caller", None)
        return found if found is not None else check_token(authorization)

    def check_token(authorization: str | None) -> Caller:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "missing bearer token: send Authorization: Bearer <token> "
                                "(cogd token create --user HANDLE)", "authentication_error")
        found = api.authenticate(token.strip())
        if found is None:
            raise ApiError(401, "unknown or revoked token", "authentication_error")
        return found  # type: ignore[no-any-return]

    class RecallBody(BaseModel):
        query: str = Field(description="What to look for")
        k: int | None = Field(default=None, description="How many items (1-50)")
        verify: bool = Field(default=False, description="The stricter threshold")

    class RememberBody(BaseModel):
        text: str = Field(description="What to keep, as a sentence")

    class Message(BaseModel):
        role: str
        content: str | list[dict[str, Any]] | None = None

    class ChatBody(BaseModel):
        model: str = "cogd"
        messages: list[Message]
        stream: bool = False

    @app.get("/healthz", tags=["ops"])
    def healthz() -> dict[str, Any]:
        """Liveness and database reachability (no token needed)."""
        try:
            ok = api.ping()
        except Exception as exc:
            raise ApiError(503, f"database unreachable: {exc.__class__.__name__}",
                           "server_error") from None
        return {"ok": ok}

    @app.get("/v1/status", tags=["memory"])
    def status(who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """How much memory the caller has; with an operator token (`cogd token create
        --operator`) also the worker processes and the installation's table sizes."""
        return api.status(user=who.handle,  # type: ignore[no-any-return]
                          operator=who.operator)

    @app.post("/v1/recall", tags=["memory"])
    def recall(body: RecallBody, who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """What memory returns for a query: items with verdict, score, date, speaker and
        sources; the caller's memories and those of no user."""
        return api.recall(body.query, user=who.handle, k=body.k,  # type: ignore[no-any-return]
                          verify=body.verify)

    @app.get("/v1/memories", tags=["memory"])
    def memories(who: Annotated[Caller, Depends(caller)],
                 status: str | None = Query(default=None),
                 limit: int = Query(default=50), offset: int = Query(default=0),
                 ) -> dict[str, Any]:
        """The caller's memories, newest first; `status`: active, superseded, archived."""
        return api.memories(user=who.handle, status=status,  # type: ignore[no-any-return]
                            limit=limit, offset=offset)

    @app.post("/v1/memories", tags=["memory"], status_code=201)
    def remember(body: RememberBody, who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """Keep a fact as an explicit memory (a turn first, then a memory)."""
        return api.remember(body.text, user=who.handle)  # type: ignore[no-any-return]

    @app.get("/v1/memories/{memory_id}", tags=["memory"])
    def memory(memory_id: str, who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """One of the caller's memories."""
        got = api.memory(memory_id, user=who.handle)
        if got is None:
            raise ApiError(404, f"no memory {memory_id}", "not_found_error")
        return got  # type: ignore[no-any-return]

    @app.delete("/v1/memories/{memory_id}", tags=["memory"])
    def forget(memory_id: str, who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """Erase one of the caller's memories and every verbatim copy of its text (its
        turn, blocks, cortex, logs); the answer says what was removed. Cannot be undone."""
        if api.memory(memory_id, user=who.handle) is None:
            raise ApiError(404, f"no memory {memory_id}", "not_found_error")
        return api.forget(memory_id, user=who.handle,  # type: ignore[no-any-return]
                          actor=f"api:{who.token_id}")

    @app.get("/v1/memories/{memory_id}/why", tags=["memory"])
    def why(memory_id: str, who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """Where the memory comes from, down to the turns."""
        if api.memory(memory_id, user=who.handle) is None:
            raise ApiError(404, f"no memory {memory_id}", "not_found_error")
        return api.why(memory_id, user=who.handle)  # type: ignore[no-any-return]

    @app.get("/v1/handoff", tags=["session"])
    def handoff(who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """What a new session of the caller would be handed now: `text` (the block the
        first prompt carries; null when there is nothing) and its items: the caller's
        profile first (`profile`), then the gap, the last session's note, open
        intentions, corrections, landmarks and the temporal sweep, the morning brief's
        TL;DR and blocks, and overnight thoughts."""
        return api.handoff(user=who.handle)  # type: ignore[no-any-return]

    @app.get("/v1/profile", tags=["session"])
    def profile(who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """Who the caller is, from their own words: current claims (kind, slot, value,
        said_at, source_ids, detector) and the superseded ones, kept."""
        return api.profile(user=who.handle)  # type: ignore[no-any-return]

    @app.get("/v1/mood", tags=["session"])
    def mood(who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """The emotional state with the caller now: valence, energy, openness, the nearest
        emotion, the prompt's tendency line, when and by what it last changed."""
        return api.mood(user=who.handle)  # type: ignore[no-any-return]

    @app.get("/v1/corrections", tags=["session"])
    def corrections(who: Annotated[Caller, Depends(caller)],
                    limit: int = Query(default=50)) -> dict[str, Any]:
        """The caller's active corrections (and those of no user): id, what was
        corrected, fails_when, fine_when, the prompt's line."""
        return api.corrections(user=who.handle, limit=limit)  # type: ignore[no-any-return]

    @app.get("/v1/intentions", tags=["session"])
    def intentions(who: Annotated[Caller, Depends(caller)],
                   status: str = Query(default="open"),
                   limit: int = Query(default=50)) -> dict[str, Any]:
        """The caller's intentions with ids and due dates; `status`: open (default),
        fulfilled, dropped or all."""
        return api.intentions(user=who.handle, status=status,  # type: ignore[no-any-return]
                              limit=limit)

    class ResolveBody(BaseModel):
        action: str = Field(description="keep-a (the older statement), keep-b (the newer) "
                                        "or merge")
        text: str | None = Field(default=None, description="With merge: the merged "
                                                           "statement")

    @app.get("/v1/contradictions", tags=["memory"])
    def contradictions(who: Annotated[Caller, Depends(caller)],
                       limit: int = Query(default=100)) -> dict[str, Any]:
        """The caller's open contradictions: id, both statements (a: the older, b: the
        newer) with memory ids and dates, who flagged it and why."""
        return api.contradictions(user=who.handle,  # type: ignore[no-any-return]
                                  limit=limit)

    @app.post("/v1/contradictions/{contradiction_id}/resolve", tags=["memory"])
    def resolve_contradiction(contradiction_id: str, body: ResolveBody,
                              who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """Resolve one of the caller's contradictions: keep-a, keep-b or merge (`text`: the
        merged statement). The loser is superseded, never deleted; audit-logged. Another
        user's contradiction: 404; an already resolved one: 400."""
        try:
            return api.resolve_contradiction(  # type: ignore[no-any-return]
                contradiction_id, body.action, user=who.handle, text=body.text,
                actor=f"api:{who.token_id}")
        except NotFoundError as exc:
            raise ApiError(404, str(exc), "not_found_error") from None

    @app.get("/v1/timeline", tags=["memory"])
    def timeline(who: Annotated[Caller, Depends(caller)],
                 start: str | None = Query(default=None, alias="from"),
                 end: str | None = Query(default=None, alias="to"),
                 limit: int = Query(default=200)) -> dict[str, Any]:
        """The caller's episodes from `from` to `to` (YYYY-MM-DD; `to` included), oldest
        first: dates, title, milestones, sources (turn and block ids). More than `limit`
        (1-500) in the range: the newest `limit`, and `truncated` is true."""
        return api.timeline(user=who.handle, start=start,  # type: ignore[no-any-return]
                            end=end, limit=limit)

    @app.post("/v1/import", tags=["memory"])
    async def import_(request: Request, who: Annotated[Caller, Depends(caller)]) -> dict[str, Any]:
        """JSONL in `cogd import`'s format; every line becomes the caller's (a line naming
        another `user` is a bad line). Idempotent on external_id."""
        body = await request.body()  # at most MAX_BODY_BYTES: BodyLimit counts it
        return await asyncio.to_thread(_import, settings, url, who.handle, body)

    @app.get("/v1/export", tags=["memory"])
    def export(who: Annotated[Caller, Depends(caller)]) -> StreamingResponse:
        """The caller's turns as JSONL that /v1/import (or `cogd import`) reads back."""
        return StreamingResponse(_export(url, who.handle), media_type="application/x-ndjson")

    @app.post("/v1/chat/completions", tags=["chat"])
    async def chat(body: ChatBody, who: Annotated[Caller, Depends(caller)],
                   x_cogd_session: str | None = Header(default=None)) -> Any:
        """OpenAI-compatible chat: the last user message, answered by cogd's loop with its
        memory (the earlier messages are cogd's own to remember, not resent context)."""
        text = _last_user_text(body.messages)
        # session keys are one namespace across users: the caller's are prefixed with
        # their user id, so no one can take a key another user will use
        session_key = f"api:{who.user_id}:" + (
            f"token:{who.token_id}" if x_cogd_session is None
            else _session_name(x_cogd_session))
        async with loop_lock:  # a loop process may have stopped, or our thread died
            pair = local_loop.get("worker")
            if pair is None or not pair[1].is_alive():
                local_loop["worker"] = await asyncio.to_thread(_local_loop, settings, url)
        gone = threading.Event()  # this request is over: its wait ends at once
        deadline = time.monotonic() + CHAT_TIMEOUT_S
        client, inbox_id = await asyncio.to_thread(_send, url, who, session_key, text,
                                                   body.stream, deadline, gone)
        created = int(time.time())
        ident = f"chatcmpl-{inbox_id}"
        if not body.stream:
            try:
                reply = await _reply(client, inbox_id, deadline, None)
            finally:
                gone.set()
                await asyncio.to_thread(client.close)
            return {"id": ident, "object": "chat.completion", "created": created,
                    "model": body.model, "choices": [{
                        "index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}

        async def events() -> AsyncIterator[str]:
            def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
                return "data: " + json.dumps({
                    "id": ident, "object": "chat.completion.chunk", "created": created,
                    "model": body.model, "choices": [{"index": 0, "delta": delta,
                                                      "finish_reason": finish}]}) + "\n\n"
            sent = ""
            queue: asyncio.Queue[str] = asyncio.Queue()
            here = asyncio.get_running_loop()

            def partial(text: str) -> None:  # called on the polling thread
                here.call_soon_threadsafe(queue.put_nowait, text)

            task = asyncio.create_task(_reply(client, inbox_id, deadline, partial))
            get: asyncio.Task[str] | None = None
            try:
                yield chunk({"role": "assistant", "content": ""})
                while True:
                    get = asyncio.create_task(queue.get())
                    done, _ = await asyncio.wait({task, get},
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if get in done:
                        part = get.result()
                        if part.startswith(sent) and len(part) > len(sent):
                            yield chunk({"content": part[len(sent):]})
                            sent = part
                    if task in done:
                        try:
                            final = task.result()
                        except ApiError as exc:  # headers are sent: an error event
                            yield "data: " + json.dumps({"error": {
                                "message": exc.message, "type": exc.kind}}) + "\n\n"
                            return
                        if final.startswith(sent) and len(final) > len(sent):
                            yield chunk({"content": final[len(sent):]})
                        elif not final.startswith(sent):  # the loop rewrote its draft
                            yield chunk({"content": "\n" + final})
                        break
                yield chunk({}, "stop")
                yield "data: [DONE]\n\n"
            finally:  # also when the client goes away mid-stream
                gone.set()  # the wait's thread ends within POLL_S
                for pending in (get, task):
                    if pending is not None and not pending.done():
                        pending.cancel()
                        with contextlib.suppress(BaseException):
                            await pending
                await asyncio.to_thread(client.close)

        return StreamingResponse(events(), media_type="text/event-stream")

    from agent.commands.console import mount

    mount(app, settings, url, api)  # the web console under /ui (docs/console.md)
    return app




def _session_name(value: str) -> str:
    """An X-Cogd-Session name, checked (400 when it is not one): 1 to MAX_SESSION_NAME
    printable characters, no control characters or surrounding blanks."""
    if not value.strip():
        raise ApiError(400, "X-Cogd-Session is empty: name the session, or leave the header "
                            "out (one session per token)")
    if len(value) > MAX_SESSION_NAME:
        raise ApiError(400, f"X-Cogd-Session is {len(value)} characters; at most "
                            f"{MAX_SESSION_NAME}")
    if not value.isprintable() or value != value.strip():
        raise ApiError(400, "X-Cogd-Session has control characters or surrounding blanks: "
                            "use printable characters only")
    return value


def _last_user_text(messages: list[Any]) -> str:
    for m in reversed(messages):
        if m.role != "user":
            continue
        if isinstance(m.content, str):
            text = m.content
        else:
            text = "\n".join(str(p.get("text", "")) for p in (m.content or [])
                             if isinstance(p, dict) and p.get("type") == "text")
        if text.strip():
            return text
    raise ApiError(400, "messages: no user message with text", "invalid_request_error")


def _local_loop(settings: Any, url: str) -> Any:
    from agent.commands.context import start_local_loop
    from agent.db.connect import connect

    with connect(url, app="cogd-serve", autocommit=True) as conn:
        return start_local_loop(settings, url, conn, log.info)


def _shutdown_budget(settings: Any) -> tuple[int, float]:
    """([process] shutdown_grace_s split): seconds for open requests to finish, then for
    the in-process loop thread to stop."""
    grace = float(settings.process.shutdown_grace_s)
    requests = max(1, int(grace / 2))
    return requests, max(0.5, grace - requests)


def _send(url: str, who: Any, session_key: str, text: str, stream: bool, deadline: float,
          gone: threading.Event) -> tuple[Any, int]:
    """The request's inbox client (agent/inbox.py `Client`, as `cogd chat` uses) and the
    id of the message it queued in the caller's session; its waits end when the server
    stops or the request is over."""
    from agent import inbox
    from agent.services.records.sessions import ensure_session

    client = inbox.Client(url, "cogd-serve-chat", poll_s=POLL_S,
                          stopped=lambda: STOPPING.is_set() or gone.is_set())
    try:
        sid = ensure_session(client.conn, who.user_id, session_key, channel="api")
        return client, client.send(sid, text, stream=stream, deadline=deadline)
    except BaseException:
        client.close()
        raise


async def _reply(client: Any, inbox_id: int, deadline: float, partial: Any) -> str:
    """The reply's text (`partial(text so far)` when streaming, called on the waiting
    thread); 503 when the server is stopping, 504 past the deadline (the message is kept
    either way)."""
    from agent import inbox

    try:
        got = await asyncio.to_thread(client.wait, inbox_id, deadline, partial)
    except inbox.NoReply as exc:
        if exc.stopped:
            raise ApiError(503, f"cogd serve is stopping ({exc.where})", "server_error") from None
        raise ApiError(504, f"no reply within {CHAT_TIMEOUT_S:.0f} s ({exc.where})",
                       "server_error") from None
    return str(got.content)


def _import(settings: Any, url: str, handle: str, body: bytes) -> dict[str, Any]:
    import io
    from dataclasses import replace

    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.access.importer import Importer, ImportReport, read_lines

    report = ImportReport()
    stream = io.StringIO(body.decode("utf-8", errors="replace"))
    with connect(url, app="cogd-serve-import", autocommit=True) as conn:
        # every line is the caller's: a session key another user holds is then refused
        # (a bad line), never adopted with its owner
        lines = (replace(line, user=handle) for line in read_lines(stream, handle, report,
                                                                   False)
                 if _own_line(line, handle, report))
        Importer(conn, Runtime(settings).turn_writer(), handle).run(lines, report)
    return report.as_dict()


def _own_line(line: Any, handle: str, report: Any) -> bool:
    if line.user is not None and line.user != handle:
        report.errors.append(f"line {line.lineno}: 'user' {line.user!r} is not the token's "
                             f"user {handle!r}")
        return False
    return True


def _export(url: str, handle: str) -> Iterator[str]:
    import io

    from agent.db.connect import connect
    from agent.services.access.exporter import ExportReport, exporting

    with connect(url, app="cogd-serve-export", autocommit=True) as conn, \
            exporting(conn, handle) as exporter:
        buf = io.StringIO()
        report = ExportReport(exporter.handle)
        exporter.write(buf, report)
    yield buf.getvalue()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, envvar="COGD_SERVE_HOST",
              show_envvar=True, help="Address to listen on (0.0.0.0: every interface; "
              "put TLS in front of it).")
@click.option("--port", default=8080, show_default=True, envvar="COGD_SERVE_PORT",
              show_envvar=True, type=click.IntRange(1, 65535))
def serve(host: str, port: int) -> int:
    """Serve the HTTP API: /v1/chat/completions (OpenAI-compatible, streaming), /v1/recall,
    /v1/memories (list, get, why, remember), /v1/import, /v1/export, /v1/status,
    /v1/handoff, /v1/profile, /v1/mood, /v1/corrections, /v1/intentions,
    /v1/contradictions (and POST .../{id}/resolve), /v1/timeline, /healthz; OpenAPI
    at /docs.
    Every /v1 route needs a bearer token bound to a user (cogd token create --user
    HANDLE). The web console is at /ui (log in with such a token)."""
    import uvicorn

    from agent.commands.context import ready_url
    from agent.runtime import Runtime

    settings = settings_from()
    url = ready_url(settings)
    api = Runtime(settings).memory_api(url, "api", channel="api", app="cogd-serve")
    try:
        app = build_app(settings, url, api)
        log.info("cogd serve: http://%s:%d (OpenAPI at /docs)", host, port)
        # open requests (a chat waiting on a stuck turn) get half of [process]
        # shutdown_grace_s, the loop thread the rest
        class Server(uvicorn.Server):
            def handle_exit(self, sig: int, frame: Any) -> None:
                STOPPING.set()  # waiting chats answer 503 now
                super().handle_exit(sig, frame)

        Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                              timeout_graceful_shutdown=_shutdown_budget(settings)[0])).run()
    finally:
        api.close()
    return 0


@click.group()
def token() -> None:
    """Bearer tokens of the HTTP API, one user each (only a hash is stored)."""


@token.command("create")
@click.option("--user", "handle", required=True, metavar="HANDLE",
              help="The user whose memories the token reads and writes.")
@click.option("--name", default="", help="A label (which client holds it).")
@click.option("--create-user", is_flag=True,
              help="Create the user if there is none by that handle (else: an error, so a "
              "mistyped handle does not get a token of its own).")
@click.option("--operator", is_flag=True,
              help="An operator token: it also sees the installation-wide figures of "
              "/v1/status and MCP status (worker processes, every user's row counts) and "
              "the web console's Health page and night-cycle runs.")
@json_option
def token_create(handle: str, name: str, create_user: bool, operator: bool,
                 as_json: bool) -> int:
    """Make a token and print it once (it cannot be shown again)."""
    from agent.commands.context import ready_url
    from agent.db.connect import connect
    from agent.services.access.tokens import create
    from agent.services.records.sessions import ensure_user, user_by_handle

    url = ready_url(settings_from())
    with connect(url, app="cogd-token", autocommit=True) as conn:
        uid = ensure_user(conn, handle) if create_user else user_by_handle(conn, handle.strip())
        made = create(conn, uid, handle.strip(), name, getpass.getuser(), operator)
    if as_json:
        click.echo(json.dumps(made))
    else:
        click.echo(made["token"])
        click.echo(f"{'operator token' if operator else 'token'} {made['token_id']} for "
                   f"{made['user']}: keep it now, it is not shown again", err=True)
    return 0


@token.command("list")
@click.option("--user", "handle", default=None, metavar="HANDLE")
@json_option
def token_list(handle: str | None, as_json: bool) -> int:
    """Tokens (their first characters, never the token), live and revoked."""
    from agent.commands.context import ready_url
    from agent.db.connect import connect
    from agent.services.access.tokens import listing

    url = ready_url(settings_from())
    with connect(url, app="cogd-token", autocommit=True) as conn:
        rows = listing(conn, handle)
    if as_json:
        click.echo(json.dumps(rows))
        return 0
    if not rows:
        click.echo("no tokens (cogd token create --user HANDLE)")
    for r in rows:
        state = f"revoked {r['revoked_at'][:19]}" if r["revoked_at"] else (
            f"last used {r['last_used_at'][:19]}" if r["last_used_at"] else "never used")
        click.echo(f"{r['token_id']}  {r['prefix']}...  {r['user']}  {r['name'] or '-'}  "
                   f"{state}" + ("  operator" if r["operator"] else ""))
    return 0


@token.command("revoke")
@click.argument("ref")
@json_option
def token_revoke(ref: str, as_json: bool) -> int:
    """Revoke a token: REF is its id or its first 12 characters."""
    from agent.commands.context import ready_url
    from agent.db.connect import connect
    from agent.services.access.tokens import revoke

    url = ready_url(settings_from())
    with connect(url, app="cogd-token", autocommit=True) as conn:
        done = revoke(conn, ref, getpass.getuser())
    click.echo(json.dumps(done) if as_json else (
        f"token {done['token_id']} of {done['user']} revoked" if done["revoked"]
        else f"token {done['token_id']}: {done['note']}"))
    return 0


COMMANDS = (serve, token)
