"""`cogd export --user HANDLE`: one user's conversation as JSONL that `cogd import` reads back.

One turn per line, oldest first, in the import format: {"session", "speaker", "role",
"content", "timestamp", "external_id", "user"}. A turn is the user's by day_table.user_id,
else (NULL there) by its session's user. `session` is the session's external id, else its
uuid; `external_id` is the turn's own, else "cogd:<entry_id>" (stable, so importing the
file twice adds nothing); `timestamp` is UTC ISO 8601; `speaker` is null where the turn
was named by its role. Turns are the round-trip contract: memories, insights and the
cortex are derived from them again by consolidation and the night cycle, not exported.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import IO, Any

import psycopg

from agent.db.queries import query
from agent.errors import InputError
from agent.services.access.importer import parse_line
from agent.services.records.sessions import user_by_handle

# dialogue, and explicit /remember turns ('system': the user's own words). Left out:
# 'internal_monologue' and 'epiphany', the agent's own notes, which the import format
# (no message_type) would turn into things said in the conversation
EXPORTED_TYPES = ("dialogue", "system")
# a turn without an external_id (a live one) is exported as "cogd:<entry_id>"
STABLE_ID_PREFIX = "cogd:"
PROGRESS_EVERY = 500


@dataclass
class ExportReport:
    user: str
    turns: int = 0
    sessions: int = 0
    skipped: list[str] = field(default_factory=list)
    path: str | None = None  # None: stdout

    def as_dict(self) -> dict[str, Any]:
        return {"user": self.user, "turns": self.turns, "sessions": self.sessions,
                "path": self.path, "skipped": len(self.skipped),
                "skipped_turns": self.skipped[:50]}


def turn_record(row: Sequence[Any], handle: str) -> dict[str, Any]:
    """An export_turns row as one import-format object."""
    _entry_id, session, speaker, role, content, created_at, external_id = row
    return {"session": session, "speaker": speaker, "role": role, "content": content,
            "timestamp": created_at.astimezone(UTC).isoformat(),
            "external_id": external_id, "user": handle}


def encode(record: dict[str, Any]) -> str:
    """One JSONL line; ASCII (\\u escapes), so no character in the text can split a line
    and any stdout encoding takes it."""
    return json.dumps(record) + "\n"


class Exporter:
    """One user's turns from one read-only snapshot (made by `exporting`)."""

    def __init__(self, conn: psycopg.Connection[Any], handle: str, user_id: Any) -> None:
        self.conn = conn
        self.handle = handle
        self.params = {"user_id": user_id, "message_types": list(EXPORTED_TYPES),
                       "id_prefix": STABLE_ID_PREFIX}

    def count(self) -> int:
        row = self.conn.execute(query("export_count"), self.params).fetchone()
        return int(row[0]) if row else 0

    def write(
        self, out: IO[str], report: ExportReport, progress: Callable[[int], None] | None = None,
    ) -> ExportReport:
        """Write the turns to `out`; a turn `cogd import` would refuse is left out and
        named in report.skipped, so the file always reads back with no bad line."""
        sessions: set[str] = set()
        pending = 0
        # a server-side cursor: the export streams, whatever its size
        with self.conn.cursor(name="cogd_export") as cur:
            cur.itersize = PROGRESS_EVERY
            cur.execute(query("export_turns"), self.params)
            for row in cur:
                line = encode(turn_record(row, self.handle))
                try:
                    parse_line(report.turns + 1, line, self.handle)
                except InputError as exc:
                    report.skipped.append(f"turn {row[0]}: `cogd import` would refuse it ({exc})")
                else:
                    out.write(line)
                    report.turns += 1
                    sessions.add(row[1])
                pending += 1
                if progress and pending >= PROGRESS_EVERY:
                    progress(pending)
                    pending = 0
        if progress and pending:
            progress(pending)
        report.sessions = len(sessions)
        return report


@contextlib.contextmanager
def exporting(conn: psycopg.Connection[Any], handle: str) -> Iterator[Exporter]:
    """An Exporter over one repeatable-read, read-only transaction on an autocommit
    connection; InputError for an unknown handle (before anything is written)."""
    handle = handle.strip()
    with conn.transaction():
        conn.execute(query("export_snapshot"))
        yield Exporter(conn, handle, user_by_handle(conn, handle))


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[IO[str]]:
    """A file that appears whole or not at all: a temp file beside `path` (mode 0600:
    it is conversation text), fsynced, renamed over it; removed on any error."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk, a directory in the way: say so
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
    with contextlib.suppress(OSError):  # the rename itself survives a crash
        dirfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
