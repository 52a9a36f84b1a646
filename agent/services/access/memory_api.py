"""What cogd offers other programs: remember, recall, why, status, goals, identity,
intentions, the latest morning brief, and what a new session's prompt would carry (the
handoff, the mood, the corrections), each scoped to one user.

The MCP server (`cogd mcp`, agent/commands/mcp.py) calls this; the HTTP API of issue 16
will too. One object per process: the embedding model loads once, one connection (as
the app role) is shared under a lock, since an MCP server may run tool calls on threads.

A user is named by handle, as `cogd chat --user` does; an unknown handle is created
(like the REPL's first turn) rather than searched as "no user", which recall would read
as everyone's memories. An explicit memory is written as a day_table turn first, in a
session of this process for that user (channel `mcp`), then kept as a memory:
introspect.remember, the REPL's /remember.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import psycopg

from agent.db import catalog
from agent.db.connect import connect
from agent.db.queries import query
from agent.db.schema import INTENTION_STATUSES, MEMORY_STATUSES
from agent.domain import emotion as emotion_rules
from agent.domain.handoff import correction_line
from agent.domain.prompt import IdentityConfig, identity_hash
from agent.errors import InputError
from agent.services.access import introspect
from agent.services.conversation import emotion
from agent.services.records.identity import load_goals, load_traits
from agent.services.records.sessions import ensure_session, ensure_user
from agent.services.records.turns import TurnWriter

if TYPE_CHECKING:
    from agent.services.memory.contradictions import Contradictions
    from agent.services.memory.forget import Forgetter
    from agent.services.memory.profile import Profile
    from agent.services.memory.recall import Recaller
    from agent.services.reach.handoff import Continuity
    from agent.services.thinking.decisions import DecisionTracker

MAX_TEXT_CHARS = 20_000
MAX_OFFSET = 10_000_000  # one remember: a note, not a document (import a document's turns)
MAX_K = 50


class MemoryAPI:
    def __init__(self, url: str, default_user: str, *, recaller: Recaller, writer: TurnWriter,
                 identity_cfg: IdentityConfig, decisions: DecisionTracker,
                 forgetter: Callable[[psycopg.Connection[Any]], Forgetter],
                 continuity: Callable[[], Continuity],
                 emotion_cfg: emotion_rules.EmotionConfig, profile: Profile,
                 channel: str = "mcp", app: str = "cogd-mcp",
                 contradictions: Callable[[], Contradictions] | None = None) -> None:
        """Runtime.memory_api builds one. `forgetter`: a Forgetter on a connection, built
        for each forget (its cortex handle must read the latest version); `continuity`:
        the loop's handoff service, built on the first handoff() (it counts tokens with
        the system1 model)."""
        if not default_user.strip():
            raise InputError("the default user handle is empty (--user / COGD_USER)")
        self.default_user = default_user.strip()
        self.channel = channel
        self.recaller = recaller
        self.writer = writer
        self.identity_cfg = identity_cfg
        self.decisions = decisions
        self.forgetter = forgetter
        self._continuity_of = continuity
        self._continuity: Continuity | None = None
        self.emotion_cfg = emotion_cfg
        self.profiles = profile
        self.url, self.app = url, app
        self._contradictions_of = contradictions  # issue 42 item 3, built on first use
        self._contradictions: Contradictions | None = None
        self.conn = connect(url, app=app, autocommit=True)
        self._lock = threading.Lock()
        self._auth_lock = threading.Lock()
        self._auth_conn: psycopg.Connection[Any] | None = None
        self._sessions: dict[Any, Any] = {}  # user_id -> this process's session for them

    def close(self) -> None:
        self.conn.close()
        if self._auth_conn is not None:
            self._auth_conn.close()

    @contextmanager
    def _db(self) -> Iterator[psycopg.Connection[Any]]:
        """The shared connection, under the lock; a connection a restart broke is
        replaced first (the call that met the break failed: a write is never replayed)."""
        with self._lock:
            if self.conn.closed or self.conn.broken:
                self.conn = connect(self.url, app=self.app, autocommit=True)
                self._sessions.clear()
            yield self.conn

    # -- scoping -------------------------------------------------------------

    def _user(self, handle: str | None) -> tuple[str, Any]:
        name = (handle if handle is not None else self.default_user).strip()
        if not name:
            raise InputError("the user handle is empty")
        return name, ensure_user(self.conn, name)

    def _session(self, user_id: Any) -> Any:
        if user_id not in self._sessions:
            self._sessions[user_id] = ensure_session(self.conn, user_id, None, self.channel)
        return self._sessions[user_id]

    # -- tools ---------------------------------------------------------------

    def remember(self, text: str, user: str | None = None) -> dict[str, Any]:
        """Keep `text` as an explicit memory of the user (a turn first, then a memory)."""
        text = _text(text, "text")
        with self._db():
            handle, uid = self._user(user)
            sid = self._session(uid)
            mid = introspect.remember(self.conn, SimpleNamespace(writer=self.writer), sid,
                                      uid, text)
        return {"memory_id": str(mid), "user": handle}

    def recall(self, query_text: str, user: str | None = None, k: int | None = None,
               verify: bool = False) -> dict[str, Any]:
        """What memory returns for the query, among the user's memories (and those of no
        user): items with verdict, score, date, speaker and sources."""
        query_text = _text(query_text, "query")
        if k is not None and not 1 <= k <= MAX_K:
            raise InputError(f"k must be between 1 and {MAX_K}, got {k}")
        with self._db():
            handle, uid = self._user(user)
            out = self.recaller.recall(self.conn, query_text, k=k, verify=verify, user_id=uid)
        return {"user": handle, **introspect.recall_payload(out)}

    def why(self, target: str, user: str | None = None) -> dict[str, Any]:
        """Where one of the user's memories comes from (a memory id, or text: the user's
        best-matching memory): introspect.why, scoped to the user."""
        target = _text(target, "target")
        with self._db():
            handle, uid = self._user(user)
            return introspect.why(self.conn, self.decisions, self.recaller, target,
                                  user_id=uid, handle=handle)

    def status(self, user: str | None = None, operator: bool = False) -> dict[str, Any]:
        """How much the user has; with `operator` (an operator token, or the local
        operator: stdio MCP) also the daemon's processes and the installation's table
        sizes, which are no single user's to see."""
        with self._db():
            handle, uid = self._user(user)
            mine = self.conn.execute(query("introspect_counts_for_user"),
                                     {"user_id": uid}).fetchone()
            if operator:
                procs = self.conn.execute(query("introspect_processes")).fetchall()
                counts = catalog.row_counts(self.conn, ("day_table", "memories",
                                                        "holographic_blocks",
                                                        "scratch_buffer"))
        assert mine is not None
        out: dict[str, Any] = {
            "user": {"handle": handle, "turns": mine[0], "active_memories": mine[1],
                     "other_memories": mine[2], "open_intentions": mine[3]},
        }
        if operator:
            out["processes"] = [{"name": n, "pid": p, "state": s, "alive": bool(a)}
                                for n, p, s, a in procs]
            out["tables"] = counts
        return out

    def memories(self, user: str | None = None, status: str | None = None, limit: int = 50,
                 offset: int = 0) -> dict[str, Any]:
        """The user's own memories, newest first (not those of no user)."""
        if status is not None and status not in MEMORY_STATUSES:
            raise InputError(f"status must be one of {', '.join(MEMORY_STATUSES)}")
        if not 1 <= limit <= 500 or not 0 <= offset <= MAX_OFFSET:
            raise InputError(f"limit must be 1-500 and offset 0-{MAX_OFFSET}")
        with self._db():
            handle, uid = self._user(user)
            rows = self.conn.execute(query("introspect_memories_of_user"), {
                "user_id": uid, "status": status, "limit": limit, "offset": offset}).fetchall()
        return {"user": handle, "memories": [_memory(r) for r in rows]}

    def memory(self, memory_id: str, user: str | None = None) -> dict[str, Any] | None:
        """One of the user's memories; None when it is not theirs or does not exist."""
        mid = introspect.parse_uuid(memory_id.removeprefix("memory:"))
        if mid is None:
            raise InputError(f"{memory_id!r} is not a memory id (a uuid)")
        with self._db():
            _, uid = self._user(user)
            row = self.conn.execute(query("introspect_memory_of_user"),
                                    {"memory_id": mid, "user_id": uid}).fetchone()
        return None if row is None else _memory(row)

    def forget(self, memory_id: str, user: str | None = None,
               actor: str = "api") -> dict[str, Any]:
        """Erase one of the user's memories and every verbatim copy of its text
        (agent/services/memory/forget.py); the audit row names the caller."""
        with self._db():
            handle, uid = self._user(user)
            # built for each forget: its cortex handle must read the latest version
            report = self.forgetter(self.conn).memory(
                memory_id, f"{actor}:{handle}", user_id=uid, scoped=True)
        return {"user": handle, **report.as_dict()}

    def authenticate(self, token: str) -> Any:
        """The caller of a bearer token (agent/services/access/tokens.py), or None; on a
        connection of its own, so a long call (a forget) does not hold up every request."""
        from agent.services.access.tokens import authenticate

        with self._auth_db() as conn:
            return authenticate(conn, token)

    def ping(self) -> bool:
        with self._auth_db() as conn:
            return conn.execute("SELECT 1").fetchone() == (1,)

    @contextmanager
    def _auth_db(self) -> Iterator[psycopg.Connection[Any]]:
        with self._auth_lock:
            if self._auth_conn is None or self._auth_conn.closed or self._auth_conn.broken:
                self._auth_conn = connect(self.url, app=f"{self.app}-auth", autocommit=True)
            yield self._auth_conn

    def goals(self, user: str | None = None) -> dict[str, Any]:
        """Layer 1: the active goals the user's prompt carries and their weights (the
        installation-wide ones and the user's own; never another user's)."""
        with self._db():
            _, uid = self._user(user)
            goals = load_goals(self.conn, uid)
        return {"goals": [{"name": g.name, "weight": round(g.weight, 4),
                           "description": g.description} for g in goals]}

    def identity(self, user: str | None = None) -> dict[str, Any]:
        """Layer 0: the identity hash the user's prompt carries (its goals: as goals()),
        and its weighted traits."""
        cfg = self.identity_cfg
        with self._db():
            _, uid = self._user(user)
            traits = load_traits(self.conn)
            goals = load_goals(self.conn, uid)
        return {"hash": identity_hash(traits, goals, cfg) if traits else "",
                "traits": [{"name": t.name, "weight": round(t.weight, 4),
                            "description": t.description, "boundary": t.is_boundary}
                           for t in traits]}

    def intentions(self, user: str | None = None, status: str | None = "open",
                   limit: int = 50) -> dict[str, Any]:
        """The user's intentions (plans, promises, reminders, unfinished work) of one
        status (open, fulfilled, dropped; None or "all": every one), with their ids and
        due dates, open ones first."""
        if status == "all":
            status = None
        if status is not None and status not in INTENTION_STATUSES:
            raise InputError(f"status must be one of {', '.join(INTENTION_STATUSES)} or "
                             f"all, got {status!r}")
        if not 1 <= limit <= 500:
            raise InputError(f"limit must be 1-500, got {limit}")
        with self._db():
            handle, uid = self._user(user)
            rows = self.conn.execute(query("introspect_intentions_of_user"), {
                "user_id": uid, "status": status, "limit": limit}).fetchall()
        return {"user": handle, "intentions": [
            {"id": str(r[0]), "kind": r[1], "content": r[2], "due_at": _iso(r[3]),
             "urgency": r[4], "carried": r[5], "created_at": _iso(r[6]), "status": r[7],
             "resolved_at": _iso(r[8])} for r in rows]}

    def handoff(self, user: str | None = None) -> dict[str, Any]:
        """What the first prompt of a new session of the user would carry now: the gap
        and its mode, the last session's continuation note, the open intentions, the
        corrections that apply to it, and the user's morning brief blocks and overnight
        thoughts (Continuity's session-start handoff; a missing note is written, as at
        the loop's session start; nothing is marked shown)."""
        with self._db():
            handle, uid = self._user(user)
            if self._continuity is None:
                self._continuity = self._continuity_of()
            # a session that has no turn yet: no query to match corrections against (the
            # note's vector still finds those on the last session's topic)
            now = datetime.now(UTC)
            start = self._continuity.start(self.conn, None, uid, None, now)
            start.is_start = True
            made = self._continuity.handoff(self.conn, user_id=uid, at=now, start=start,
                                            query_text="", query_vec=None, matches=[])
        if made is None:
            return {"user": handle, "text": None, "mode": None, "gap_minutes": None,
                    "items": [], "brief": None, "cut": 0,
                    "note": "no handoff: no earlier session, no open intention, no "
                            "morning brief"}
        text, meta = made
        return {"user": handle, "text": text, **meta}

    def profile(self, user: str | None = None) -> dict[str, Any]:
        """Who the user is, from their own words (issue 42 item 1): the current claims
        (name, residence, work, people, preferences, projects), each with the turn it was
        read from, when it was said and its detector; and the superseded ones, kept."""
        with self._db():
            handle, uid = self._user(user)
            shown = self.profiles.show(self.conn, uid)
        return {"user": handle, **shown}

    def mood(self, user: str | None = None) -> dict[str, Any]:
        """The user's emotional state now (decayed toward the temperament; a read changes
        nothing): valence, energy, openness, its nearest emotion, the tendency line the
        prompt carries, and when and by what it last changed (None: the temperament)."""
        now = datetime.now(UTC)
        with self._db():
            handle, uid = self._user(user)
            got = emotion.current(self.conn, uid, now, self.emotion_cfg)
        return {"user": handle, **got.as_dict(),
                "tendency": emotion_rules.render(got.state, self.emotion_cfg),
                "changed_at": _iso(got.changed_at),
                "temperament": got.changed_at is None}

    def corrections(self, user: str | None = None, limit: int = 50) -> dict[str, Any]:
        """The active corrections the user's prompt may show (theirs, and those of no
        user: `shared`), newest first: what was corrected, when it fails, when it is fine,
        and the line the prompt shows."""
        if not 1 <= limit <= 500:
            raise InputError(f"limit must be 1-500, got {limit}")
        with self._db():
            handle, uid = self._user(user)
            rows = self.conn.execute(query("introspect_corrections_of_user"), {
                "user_id": uid, "limit": limit}).fetchall()
        return {"user": handle, "corrections": [
            {"id": str(r[0]), "content": r[1], "fails_when": r[2], "fine_when": r[3],
             "shared": bool(r[4]), "created_at": _iso(r[5]),
             "line": correction_line(r[1], r[2], r[3], str(r[0]))} for r in rows]}

    def brief(self, user: str | None = None) -> dict[str, Any]:
        """The user's own newest morning brief (markdown, night_briefs), or why there is
        none; never another user's, never the operator's brief.md or a path on disk."""
        with self._db():
            handle, uid = self._user(user)
            row = self.conn.execute(query("introspect_latest_brief"),
                                    {"user_id": uid}).fetchone()
        if row is None:
            return {"user": handle, "run_id": None, "text": "",
                    "note": f"no morning brief for {handle} yet: a night cycle "
                            "(`cogd night-cycle`; cron: 0 3 * * *) writes one for each user "
                            "it processed conversations of"}
        return {"user": handle, "run_id": row[0], "finished_at": _iso(row[1]),
                "text": row[2]}

    # -- contradictions and the timeline (issue 42 items 3-4) -------------------------

    def _resolver(self) -> Contradictions:
        if self._contradictions is None:
            if self._contradictions_of is None:
                raise InputError("contradiction resolution is not set up in this process")
            self._contradictions = self._contradictions_of()
        return self._contradictions

    def contradictions(self, user: str | None = None, limit: int = 100) -> dict[str, Any]:
        """The user's open contradictions (both memories theirs), newest flag first: the
        two statements (a: the older, b: the newer) with ids and dates, who flagged them
        and why."""
        with self._db():
            handle, uid = self._user(user)
            items = self._resolver().open(self.conn, uid, limit=limit)
        return {"user": handle, "contradictions": items}

    def resolve_contradiction(self, contradiction_id: str | int, action: str,
                              user: str | None = None, text: str | None = None,
                              actor: str = "api") -> dict[str, Any]:
        """Resolve one of the user's contradictions: keep-a, keep-b or merge (`text`: the
        merged statement). The loser is superseded, never deleted; audit-logged. Another
        user's contradiction, or an unknown id: NotFoundError."""
        with self._db():
            handle, uid = self._user(user)
            got = self._resolver().resolve(self.conn, contradiction_id, action, user_id=uid,
                                           text=text, actor=f"{actor}:{handle}")
        return {"user": handle, **got}

    def timeline(self, user: str | None = None, start: str | None = None,
                 end: str | None = None, limit: int = 200) -> dict[str, Any]:
        """The user's episodes (and their milestones) from `start` to `end` (ISO dates;
        `end` includes its day), oldest first, each with its dates and sources. More than
        `limit` in the range: the newest `limit`, and `truncated` is true."""
        from agent.services.memory import timeline

        lo = timeline.parse_day(start, "from")
        hi = timeline.parse_day(end, "to", end=True)
        with self._db():
            handle, uid = self._user(user)
            items, truncated = timeline.page(self.conn, uid, lo, hi, limit=limit)
        return {"user": handle, "from": start, "to": end, "episodes": items,
                "truncated": truncated}


def _text(value: str, name: str) -> str:
    """Text Postgres can store (NUL and lone surrogates replaced), not empty, not huge."""
    from agent.domain.text import storable_text

    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name} is empty")
    if len(value) > MAX_TEXT_CHARS:
        raise InputError(f"{name} is {len(value)} characters; at most {MAX_TEXT_CHARS}")
    return storable_text(value)[0].strip()


def _memory(r: Any) -> dict[str, Any]:
    return {"id": str(r[0]), "type": r[1], "content": r[2], "status": r[3],
            "importance": round(float(r[4]), 4), "created_at": _iso(r[5]),
            "source_turn": None if r[6] is None else str(r[6])}


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value
