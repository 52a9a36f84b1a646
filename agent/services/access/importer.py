"""`cogd import FILE.jsonl`: conversation history, in bulk (agent/services/access/bulk_import.py
writes each batch: the live write path's rows and gates, a few statements per batch).

One message per line: {"session", "speaker", "role", "content", "timestamp",
"external_id", "user"}. `speaker` is who said it (a name: stored in day_table.speaker and
indexed, so "what did Ana say" finds Ana's turns); `user` is the account the session
belongs to (default: the speaker of the session's first user line, else the importing
user). Idempotent on external_id, per user (a line without one gets a stable id
derived from its session, speaker, role, timestamp and content): another user's key is
neither a duplicate nor in the way, and session keys are per user too (revision 0019).
A line's `timestamp` is its event time (created_at: recall's dates, the timeline); the row's
written_at is the server's, which promotion and decay read: back-dated lines are no
evidence that something recurred. A bad line is
reported with its line number and skipped, or stops the import.

Resumable: each batch is one transaction, and a rerun of an interrupted import skips
what was written (one lookup per batch, nothing embedded again), so it continues where
the last committed batch ended and adds nothing twice (the schema's unique keys:
day_table's (user_id, external_id), one entry-gate decision per turn, revision 0026).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

import psycopg

from agent.db.queries import query
from agent.errors import InputError
from agent.services.access.bulk_import import Prepared, embed, insert, prepare
from agent.services.records.sessions import ensure_session, ensure_user
from agent.services.records.turns import ROLES, TurnInput, TurnWriter
from agent.testhooks import fault_hook

# cogd choice: session, speaker and external_id are unique-index keys; 500 characters stay
# under Postgres's B-tree row limit (2704 bytes) even at 4 bytes per character
MAX_KEY_CHARS = 500


@dataclass(frozen=True)
class ImportLine:
    lineno: int
    session: str
    speaker: str
    role: str
    content: str
    timestamp: datetime | None
    external_id: str
    named: str | None = None  # the speaker as the line gave it (None: not given)
    user: str | None = None  # the account the session belongs to


@dataclass
class ImportReport:
    lines: int = 0
    inserted: int = 0
    duplicates: int = 0
    errors: list[str] = field(default_factory=list)
    scratched: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines, "inserted": self.inserted, "duplicates": self.duplicates,
            "errors": len(self.errors), "scratched": self.scratched,
            "error_lines": self.errors[:50],
        }


def parse_line(lineno: int, raw: str, default_user: str) -> ImportLine:
    """One JSONL line, validated; InputError naming the line and the problem."""
    where = f"line {lineno}"
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # ValueError: also a huge integer literal
        reason = f"{exc.__class__.__name__}: {exc}"[:200]
        raise InputError(f"{where}: not JSON ({reason})") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(data).__name__}")
    content = data.get("content")
    if not isinstance(content, str) or not content.strip():
        raise InputError(f"{where}: 'content' must be a non-empty string")
    role = data.get("role", "user")
    if role not in ROLES:
        raise InputError(f"{where}: 'role' must be one of {', '.join(ROLES)}, got {role!r}")
    session = data.get("session")
    if session is None or not str(session).strip():
        raise InputError(f"{where}: 'session' is required")
    check_key(where, "session", str(session))
    named = data.get("speaker")
    if named is not None and not isinstance(named, str):
        raise InputError(f"{where}: 'speaker' must be a string")
    speaker = named or (default_user if role == "user" else role)
    check_key(where, "speaker", speaker)
    user = data.get("user")
    if user is not None:
        if not isinstance(user, str):
            raise InputError(f"{where}: 'user' must be a string (an account handle)")
        check_key(where, "user", user)
    stamp = data.get("timestamp")
    when = parse_timestamp(where, "'timestamp'", stamp)
    ext = data.get("external_id")
    if ext is None:
        digest = hashlib.sha256(
            json.dumps([str(session), speaker, role, stamp, content]).encode()
        ).hexdigest()[:32]
        ext = f"sha256:{digest}"
    elif not isinstance(ext, str | int) or not str(ext).strip():
        raise InputError(f"{where}: 'external_id' must be a non-empty string")
    check_key(where, "external_id", str(ext))
    return ImportLine(lineno, str(session), speaker, role, content, when, str(ext),
                      named=named.strip() if named and named.strip() else None, user=user)


def parse_timestamp(where: str, what: str, stamp: Any, *, naive_is_utc: bool = False
                    ) -> datetime | None:
    """An ISO 8601 time (a trailing Z allowed) or None; a clear InputError naming `where`
    and `what` otherwise. Without a zone it is refused, or read as UTC with
    `naive_is_utc` (exports that write UTC without saying so)."""
    if stamp is None:
        return None
    if not isinstance(stamp, str):
        raise InputError(f"{where}: {what} must be an ISO 8601 string")
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{where}: {what} {stamp!r} is not ISO 8601") from None
    if when.tzinfo is None:
        if not naive_is_utc:
            raise InputError(f"{where}: {what} {stamp!r} has no time zone")
        when = when.replace(tzinfo=UTC)
    try:
        when.astimezone(UTC)
    except OverflowError:
        raise InputError(f"{where}: {what} {stamp!r} is out of range in UTC") from None
    return when


def check_key(where: str, name: str, value: str) -> None:
    """Refuse a key Postgres cannot store or index (NUL, lone surrogates, blank, too long)."""
    if not value.strip():
        raise InputError(f"{where}: '{name}' must not be blank")
    if "\x00" in value:
        raise InputError(f"{where}: '{name}' contains a NUL character")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{where}: '{name}' contains an unpaired surrogate") from None
    if len(value) > MAX_KEY_CHARS:
        raise InputError(f"{where}: '{name}' is over {MAX_KEY_CHARS} characters")


def read_lines(
    stream: IO[str], default_user: str, report: ImportReport, stop_on_error: bool
) -> Iterator[ImportLine]:
    for lineno, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        report.lines += 1
        try:
            yield parse_line(lineno, raw, default_user)
        except InputError as exc:
            if stop_on_error:
                raise
            report.errors.append(str(exc))


class Importer:
    def __init__(
        self, conn: psycopg.Connection[Any], writer: TurnWriter, default_user: str,
        batch_size: int = 256,
    ) -> None:
        self.conn = conn
        self.batches = 0  # batches committed by this importer
        self.writer = writer
        self.default_user = default_user
        self.batch_size = batch_size
        self._sessions: dict[str, tuple[Any, Any, str]] = {}
        self._tiers: dict[Any, str] = {}

    def _session(self, line: ImportLine) -> tuple[Any, Any, str]:
        """The session of a line, its user and tier. A session that exists keeps its
        owner when the line names no `user` (a rerun, or a file appended to, whose first
        new line may be another speaker's); a line whose `user` is not the owner of an
        existing session is refused (InputError: a bad line, not an import stopped)."""
        if line.session not in self._sessions:
            handle = line.user or (line.speaker if line.role == "user"
                                   else self.default_user)
            known = None if line.user else self.conn.execute(
                query("importer_session_owner"),
                {"key": line.session, "handle": handle}).fetchone()
            if known is not None:
                sid, user_id = known[0], known[1]
            else:
                user_id = ensure_user(self.conn, handle)
                sid = ensure_session(self.conn, user_id, line.session, channel="import")
            if user_id not in self._tiers:
                tier = self.conn.execute(query("importer_user_tier"), (user_id,)).fetchone()
                self._tiers[user_id] = tier[0] if tier else "normal"
            self._sessions[line.session] = (sid, user_id, self._tiers[user_id])
        return self._sessions[line.session]

    def run(
        self,
        lines: Iterator[ImportLine],
        report: ImportReport,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import `lines`, `batch_size` per transaction. While Postgres writes one batch,
        the next one is embedded in a thread (the embedder and a Postgres backend each
        have a core), so a batch costs about the larger of the two, not their sum."""
        with ThreadPoolExecutor(1, thread_name_prefix="cogd-import-embed") as pool:
            waiting: tuple[Future[Prepared], Prepared, int] | None = None
            for batch in _chunks(lines, self.batch_size):
                # prepare reads the batch before's turns, never its vectors (still coming)
                ready = self._prepare(batch, report, None if waiting is None else waiting[1])
                embedding = pool.submit(embed, self.writer, ready)  # queued after the last
                if waiting is not None:
                    self._insert(waiting[0], waiting[2], report, progress)
                waiting = (embedding, ready, len(batch))
            if waiting is not None:
                self._insert(waiting[0], waiting[2], report, progress)
        return report

    def _prepare(self, batch: list[ImportLine], report: ImportReport,
                 before: Prepared | None) -> Prepared:
        """The batch's sessions (created if new), its lines not imported before, cleaned,
        indexed and judged. `before`: the batch before it, embedded, not yet committed."""
        with self.conn.transaction():
            owned = []
            for line in batch:
                try:
                    owned.append((line, *self._session(line)))
                except InputError as exc:
                    report.errors.append(f"line {line.lineno}: {exc}")
            # lines imported before (by the same user: keys are unique per user) are
            # counted without embedding them again: a rerun of an interrupted import
            # costs a lookup per batch for what it had written
            seen = {(r[0], r[1]) for r in self.conn.execute(
                query("importer_known_external_ids"),
                {"users": [str(uid) for _, _, uid, _ in owned],
                 "ids": [line.external_id for line, *_ in owned]},
            )}
            if before is not None:  # not committed yet
                seen.update((str(t.user_id), str(t.external_id)) for t in before.turns)
            turns = []
            for line, sid, uid, tier in owned:
                key = (str(uid), line.external_id)
                if key in seen:  # before, or earlier in this batch
                    report.duplicates += 1
                    continue
                seen.add(key)
                turns.append(
                    TurnInput(
                        session_id=sid, user_id=uid, user_tier=tier, role=line.role,
                        content=line.content, external_id=line.external_id,
                        created_at=line.timestamp, speaker=line.named,
                    )
                )
            return prepare(self.conn, self.writer, turns, before)

    def _insert(self, embedded: Future[Prepared], lines: int, report: ImportReport,
                progress: Callable[[int], None] | None) -> None:
        """Write an embedded batch in one transaction; count it."""
        batch = embedded.result()
        with self.conn.transaction():
            written = insert(self.conn, self.writer, batch)
            self.batches += 1
            fault_hook(f"import-batch-{self.batches}")  # tests: die before this commit
        for turn in written:
            if turn is None:
                report.duplicates += 1
            else:
                report.inserted += 1
                report.scratched += int(turn.scratched)
        if progress:
            progress(lines)


def _chunks(lines: Iterator[ImportLine], size: int) -> Iterator[list[ImportLine]]:
    batch: list[ImportLine] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
