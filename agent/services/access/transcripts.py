"""Another assistant's transcripts as cogd turns (seed 002: a daemon that tails the
session JSONL of Claude Code and remembers every exchange).

`cogd watch PATH` polls transcript files (a file, or every *.jsonl under a directory),
reads the lines added since the last poll and imports each user or assistant message
with the live write path's rows (agent/services/access/importer.py, in bulk: embeddings,
entry gate, scratch_buffer, NOTIFY). Each file's read offset is kept in worker_state; a turn is
keyed by its transcript id (`claude:<uuid>`, day_table's unique external_id), so
reading a line twice (a crash between an import and the offset save, a file copied
elsewhere) adds nothing. A line still being written (no newline yet) waits for the next
poll. A truncated or replaced file (smaller than the offset, another inode) is read
from the start.

Claude Code's format (one JSON object per line): `type` "user" / "assistant", `message`
{`role`, `content`: a string or a list of blocks}, `uuid`, `sessionId`, `timestamp`.
Kept: the text blocks of user and assistant messages. Skipped, as not said by either:
tool calls and tool results, thinking blocks, meta lines (`isMeta`), compaction summaries
(`isCompactSummary`), subagents' transcripts (`isSidechain`), summaries and other line
types. A line the database refuses (e.g. text over Postgres's tsvector limit) is reported
and skipped, as is a file that cannot be read; the others go on. The session becomes
`claude:<sessionId>`, owned by the watching user.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from agent.errors import InputError
from agent.services.access.importer import Importer, ImportLine, ImportReport, parse_line
from agent.services.background.consolidation import get_state, set_state
from agent.services.records.turns import TurnWriter

PREFIX = "claude:"
STATE_KEY = "watch:"  # + the file's absolute path
MAX_LINE_BYTES = 8 * 1024 * 1024  # cogd choice: a longer line is reported, not parsed
# lines neither the user nor the assistant said in the conversation: meta lines (slash
# command echoes), compaction summaries written as a user line, a subagent's transcript
# (its prompts come from the main agent), lines shown in the transcript only
SKIPPED_FLAGS = ("isMeta", "isCompactSummary", "isSidechain", "isVisibleInTranscriptOnly")


def claude_session(session_id: str) -> str:
    """The cogd session key of a Claude Code session id."""
    return f"{PREFIX}{session_id}"


def claude_turn(lineno: int, raw: str, user: str) -> ImportLine | None:
    """One Claude Code transcript line as a turn of `user`'s session, or None when the
    line is not a user or assistant message with text; InputError for a broken line."""
    where = f"line {lineno}"
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise InputError(f"{where}: not JSON") from None
    if not isinstance(data, dict) or data.get("type") not in ("user", "assistant"):
        return None
    if any(data.get(flag) for flag in SKIPPED_FLAGS):
        return None
    message = data.get("message")
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return None
    text = _text(message.get("content"))
    if not text:
        return None
    ident, session = data.get("uuid"), data.get("sessionId")
    if not isinstance(ident, str) or not isinstance(session, str):
        raise InputError(f"{where}: a {data['type']} line without 'uuid' or 'sessionId'")
    role = str(message["role"])
    line = {"session": claude_session(session), "role": role, "content": text,
            "external_id": f"{PREFIX}{ident}", "user": user,
            "speaker": user if role == "user" else "assistant"}
    if data.get("timestamp") is not None:
        line["timestamp"] = data["timestamp"]
    return parse_line(lineno, json.dumps(line), user)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")).strip() for b in content
                         if isinstance(b, dict) and b.get("type") == "text"
                         and str(b.get("text", "")).strip())
    return ""


@dataclass
class WatchReport:
    files: int = 0
    lines: int = 0
    skipped: int = 0  # lines that are not a user or assistant message with text
    imported: ImportReport = field(default_factory=ImportReport)
    errors: list[str] = field(default_factory=list)

    def add(self, other: WatchReport) -> None:
        self.files = max(self.files, other.files)
        self.lines += other.lines
        self.skipped += other.skipped
        self.imported.inserted += other.imported.inserted
        self.imported.duplicates += other.imported.duplicates
        self.imported.scratched += other.imported.scratched
        self.errors += other.errors

    def as_dict(self) -> dict[str, Any]:
        return {"files": self.files, "lines": self.lines, "skipped": self.skipped,
                "inserted": self.imported.inserted, "duplicates": self.imported.duplicates,
                "scratched": self.imported.scratched, "errors": len(self.errors),
                "error_lines": self.errors[:50]}


class TranscriptWatcher:
    def __init__(self, conn: psycopg.Connection[Any], writer: TurnWriter, user: str,
                 paths: list[Path], batch_size: int = 64) -> None:
        self.conn = conn
        self.user = user
        self.paths = [p.expanduser().resolve() for p in paths]
        self.importer = Importer(conn, writer, user, batch_size)

    def files(self) -> list[Path]:
        out: list[Path] = []
        for p in self.paths:
            if p.is_dir():
                out += sorted(f for f in p.rglob("*.jsonl") if f.is_file())
            elif p.is_file():
                out.append(p)
        return out

    def poll(self) -> WatchReport:
        """Import what each file gained since the last poll."""
        report = WatchReport()
        files = self.files()
        report.files = len(files)
        for path in files:
            try:
                self._poll_file(path, report)
            except OSError as exc:  # removed, unreadable: the next poll tries again
                report.errors.append(f"{path}: {exc.strerror or exc}")
        return report

    def _poll_file(self, path: Path, report: WatchReport) -> None:
        key = STATE_KEY + str(path)
        try:
            st = path.stat()
        except OSError:
            return  # removed between listing and reading
        state = get_state(self.conn, key)
        offset, lineno = int(state.get("offset", 0)), int(state.get("lineno", 0))
        if state.get("inode") != st.st_ino or st.st_size < offset:
            offset, lineno = 0, 0  # a new or truncated file: from the start
        if st.st_size == offset:
            return
        with path.open("rb") as f:
            f.seek(offset)
            data = f.read(st.st_size - offset)
        end = data.rfind(b"\n")
        if end < 0:
            return  # a line still being written
        chunk = data[: end + 1]
        lines = list(self._turns(path, chunk, lineno, report))
        self._import(path, lines, report)
        lineno += chunk.count(b"\n")
        with self.conn.transaction():
            set_state(self.conn, key, {"offset": offset + len(chunk), "lineno": lineno,
                                       "inode": st.st_ino, "size": st.st_size})

    def _import(self, path: Path, lines: list[ImportLine], report: WatchReport) -> None:
        """Import the lines; when the database refuses one, the batch is rolled back and
        the lines go one by one, the refused ones reported. A lost connection is raised
        (the watcher reconnects; the offset was not saved, so nothing is skipped)."""
        attempt = ImportReport()
        try:
            self.importer.run(iter(lines), attempt)
        except psycopg.Error:
            if self.conn.broken or self.conn.closed:
                raise  # the connection, not a line (a limit error is an OperationalError too)
            attempt = ImportReport()
            for line in lines:
                try:
                    self.importer.run(iter([line]), attempt)
                except psycopg.Error as exc:
                    if self.conn.broken or self.conn.closed:
                        raise
                    reason = (str(exc).splitlines() or [exc.__class__.__name__])[0][:200]
                    attempt.errors.append(f"line {line.lineno}: refused by the database "
                                          f"({reason})")
        report.imported.inserted += attempt.inserted
        report.imported.duplicates += attempt.duplicates
        report.imported.scratched += attempt.scratched
        report.errors += [f"{path.name} {e}" for e in attempt.errors]

    def _turns(self, path: Path, chunk: bytes, lineno: int,
               report: WatchReport) -> Iterator[ImportLine]:
        for raw in chunk.split(b"\n")[:-1]:
            lineno += 1
            if not raw.strip():
                continue
            report.lines += 1
            if len(raw) > MAX_LINE_BYTES:
                report.errors.append(f"{path.name} line {lineno}: over {MAX_LINE_BYTES} bytes")
                continue
            try:
                turn = claude_turn(lineno, raw.decode("utf-8", errors="replace"), self.user)
            except InputError as exc:
                report.errors.append(f"{path.name} {exc}")
                continue
            if turn is None:
                report.skipped += 1
            else:
                yield turn


def default_claude_dir() -> Path:
    """Where Claude Code keeps its session transcripts."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"
