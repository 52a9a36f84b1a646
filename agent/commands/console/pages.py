"""The Timeline and Memory pages, and Forget.

- `GET /ui/timeline`: the user's turns by day, newest first, PAGE_TURNS entries a page
  (the cursor `before`/`before_id` is the last entry of the page before), each with its
  session and a link to the memory made from it, and among them the user's memories
  that have no turn in day_table (insights; memories whose turn the night cycle's
  cleanup removed); `?q=` runs the same recall as /v1/recall
  (MemoryAPI.recall) and lists the hits with verdict, speaker and date.
- `GET /ui/memory/{id}`: one of the user's memories (MemoryAPI.memory), its provenance
  chain (MemoryAPI.why: insight -> superseded sources -> turns), importance, use and
  decay, and links. Another user's memory, a forgotten one or a malformed id: 404.
- `POST /ui/contradiction/{id}/resolve` (CSRF field; `action` keep-a, keep-b or merge,
  `text` for merge): MemoryAPI.resolve_contradiction, as
  POST /v1/contradictions/{id}/resolve; the memory page shows the memory's open
  contradictions with these buttons.
- `GET /ui/memory/{id}/forget`: the confirmation, naming the memory (id and text);
  `POST` there (CSRF field): MemoryAPI.forget, as DELETE /v1/memories/{id}, and the page
  says what was removed.
"""

from __future__ import annotations

import contextlib
import uuid
from datetime import UTC, datetime, timedelta
from itertools import groupby
from typing import Any

from fastapi import Form, Request
from fastapi.responses import Response

from agent.commands.console.core import UI, ConsoleError, Viewer
from agent.errors import InputError, NotFoundError
from agent.services.access import console as reads

PAGE_TURNS = 50
MAX_CONTRADICTIONS = 1000  # open ones read to find this memory's (Contradictions.open's cap)


def register(ui: UI) -> None:
    console = ui.console
    ui.page("/ui/timeline", "Timeline")

    @ui.router.get("/timeline")
    def timeline(request: Request, view: Viewer, q: str = "", before: str = "",
                 before_id: str = "") -> Response:
        cursor = _cursor(before, before_id)
        search: dict[str, Any] | None = None
        search_error = None
        if q.strip():
            try:
                search = console.api.recall(q, user=view.handle)
            except InputError as exc:
                search_error = str(exc)
        with console.db() as conn:
            turns = reads.timeline(conn, view.user_id, cursor, PAGE_TURNS + 1)
            if search is not None:
                turn_ids = [i["id"].split(":", 1)[1] for i in search["items"]
                            if i["kind"] == "day_table"]
                made = reads.memories_of_turns(conn, view.user_id, turn_ids)
                own = reads.own_memories(conn, view.user_id, [
                    i["id"].split(":", 1)[1] for i in search["items"] if i["kind"] == "memory"])
                for item in search["items"]:
                    item["memory_id"] = _memory_of(item, made, own)
        more = len(turns) > PAGE_TURNS
        turns = turns[:PAGE_TURNS]
        last = turns[-1] if more else None
        return console.render(
            request, "timeline.html", view, title="Timeline", q=q, search=search,
            search_error=search_error, days=_by_day(turns), paged=cursor is not None,
            next_page=None if last is None else {
                "before": last["created_at"].isoformat(), "before_id": last["id"]})

    @ui.router.get("/memory/{memory_id}")
    def memory(request: Request, view: Viewer, memory_id: str) -> Response:
        got = _own_memory(console, view, memory_id)
        try:
            why = console.api.why(got["id"], user=view.handle)
        except InputError:
            why = {"chain": [], "trails": []}
        with console.db() as conn:
            detail = reads.memory_detail(conn, uuid.UUID(got["id"]), view.user_id)
            own = reads.own_memories(conn, view.user_id, [
                h["memory_id"] for n in why["chain"]
                for h in [n, *n.get("held_by", [])]])
        if detail is None:  # forgotten between the two reads
            raise ConsoleError(404, f"no memory {memory_id}")
        disputes: list[dict[str, Any]] = []
        if detail["link_count"] > len(detail["links"]) or any(
                link["type"] == "contradicts" for link in detail["links"]):  # else: none
            open_ = console.api.contradictions(user=view.handle, limit=MAX_CONTRADICTIONS)
            disputes = [c for c in open_["contradictions"]
                        if got["id"] in (c["a"]["memory_id"], c["b"]["memory_id"])]
        return console.render(request, "memory.html", view, title="Memory", memory=got,
                              chain=why["chain"], trails=why.get("trails", []),
                              detail=detail, own=own, disputes=disputes,
                              decay=_decay(console.settings, got, detail))

    @ui.router.post("/contradiction/{contradiction_id}/resolve")
    def resolve(request: Request, view: Viewer, contradiction_id: str,
                action: str = Form(default=""), text: str = Form(default=""),
                back: str = Form(default="")) -> Response:
        try:
            done = console.api.resolve_contradiction(
                contradiction_id, action, user=view.handle, text=text.strip() or None,
                actor=f"console:{view.caller.token_id}")
        except NotFoundError:
            raise ConsoleError(404, f"no contradiction {contradiction_id}") from None
        except InputError as exc:
            raise ConsoleError(400, str(exc)) from None
        return console.render(request, "resolved.html", view, title="Resolved",
                              done=done, back=back if _is_memory_path(back) else None)

    @ui.router.get("/memory/{memory_id}/forget")
    def forget_form(request: Request, view: Viewer, memory_id: str) -> Response:
        got = _own_memory(console, view, memory_id)
        return console.render(request, "forget.html", view, title="Forget", memory=got,
                              report=None)

    @ui.router.post("/memory/{memory_id}/forget")
    def forget(request: Request, view: Viewer, memory_id: str) -> Response:
        got = _own_memory(console, view, memory_id)
        report = console.api.forget(got["id"], user=view.handle,
                                    actor=f"console:{view.caller.token_id}")
        return console.render(request, "forget.html", view, title="Forgotten", memory=got,
                              report=report)


def _is_memory_path(path: str) -> bool:
    head, _, ident = path.rpartition("/")
    return head == "/ui/memory" and _is_uuid(ident)


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _own_memory(console: Any, view: Any, memory_id: str) -> dict[str, Any]:
    """The caller's memory, or a 404 page (also for another user's: the page does not
    say that it exists)."""
    try:
        got = console.api.memory(memory_id, user=view.handle)
    except InputError:
        got = None
    if got is None:
        raise ConsoleError(404, f"no memory {memory_id}")
    return got  # type: ignore[no-any-return]


def _memory_of(item: dict[str, Any], made: dict[str, str], own: set[str]) -> str | None:
    """The id of the memory page a recall item links to: the user's own memory, or the
    user's memory made from a turn; None for anything else (a block, a memory of no
    user)."""
    kind, _, ident = item["id"].partition(":")
    if kind == "memory":
        return ident if ident in own else None
    if kind == "day_table":
        return made.get(ident)
    return None


def _cursor(before: str, before_id: str) -> tuple[datetime, uuid.UUID] | None:
    if not before and not before_id:
        return None
    try:
        at = datetime.fromisoformat(before)
        entry = uuid.UUID(before_id)
    except ValueError:
        raise ConsoleError(400, "before must be a time (ISO 8601) and before_id an id: "
                                "follow the Older link") from None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)), entry


def _by_day(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turns (newest first) as days, each a list of runs of one session."""
    days = []
    for on, of_day in groupby(turns, key=lambda t: t["created_at"].astimezone(UTC).date()):
        runs = [{"session_id": sid, "turns": list(run)}
                for sid, run in groupby(of_day, key=lambda t: t["session_id"])]
        for run in runs:
            first = run["turns"][0]
            run["channel"] = first["channel"]
            run["started_at"] = first["session_started_at"]
            run["external_id"] = first["session_external_id"]
        days.append({"day": on.isoformat(), "runs": runs})
    return days


def _decay(settings: Any, memory: dict[str, Any], detail: dict[str, Any]) -> str:
    """When the consolidation's decay pass (agent/domain/consolidation.py should_decay)
    would next lower this memory's importance, in words."""
    cfg = settings.consolidation
    if memory["status"] != "active":
        return f"{memory['status']}: no longer decays"
    if memory["importance"] >= cfg.landmark_min_importance or memory["type"] == "correction":
        return ("never decays: " + ("a correction" if memory["type"] == "correction"
                                    else f"a landmark (importance >= "
                                         f"{cfg.landmark_min_importance})"))
    if detail["access_count"] >= cfg.decay_max_access_count:
        return (f"kept: recalled {detail['access_count']} times (decay spares memories "
                f"recalled {cfg.decay_max_access_count} times or more)")
    period = timedelta(days=cfg.decay_after_days)
    touched = detail["last_accessed"] or detail["written_at"]
    due = touched + period
    if detail["decayed_at"]:
        with contextlib.suppress(ValueError):  # a decayed_at that is not a time: ignored
            due = max(due, datetime.fromisoformat(detail["decayed_at"]) + period)
    after = memory["importance"] * cfg.decay_factor
    fate = ("then archived" if after < cfg.archive_below_importance else "stays active")
    return (f"unless recalled, importance x{cfg.decay_factor} on or after "
            f"{due.astimezone(UTC).strftime('%Y-%m-%d')} ({memory['importance']:.2f} -> "
            f"{after:.2f}, {fate}; archived below {cfg.archive_below_importance})")
