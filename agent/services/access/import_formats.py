"""Readers for real conversation exports: each turns a file into cogd's ImportLine list.

Formats (`cogd import FILE --format auto|cogd|chatgpt|claude|text`):

- chatgpt: ChatGPT's `conversations.json`, a list of conversations, each a tree of
  `mapping` nodes ({id, message, parent, children}). The branch the user saw is the one
  from `current_node` back through its parents to the root; other branches (an edited
  message, a regenerated reply) are skipped. System and tool messages, assistant tool
  calls (recipient not "all"), hidden messages and non-text content types are skipped too,
  and counted by reason. Session key: the conversation id; external_id `chatgpt:<node id>`.
- claude: Claude.ai's `conversations.json`, a list of {uuid, name, created_at,
  chat_messages: [{uuid, sender: human|assistant, text, content: [{type, text}],
  created_at}]}. Session key: the conversation uuid; external_id `claude:<message uuid>`.
- text: a plain-text or Markdown log of `Name: message` lines (also `**Name:** message`,
  `- Name: message`, `[2024-05-01 10:00] Name: message`); other lines continue the
  message before them; a `## 2024-05-01` heading dates the messages under it (a message
  without a time takes the time of the one before it). Times without a zone are UTC.
  Who speaks is the *text-log speaker heuristic* (_SPEAKER): a line that starts with one
  to three words and a colon starts a message by that speaker, so a line inside a
  message such as "Note: ..." or "Step 2: ..." starts a message by "Note" or "Step 2".
  The assistant is the speaker named by --assistant, or one of ASSISTANT_NAMES. The
  whole file is one session, keyed by the file name.
- cogd: cogd's own JSONL (agent/services/access/importer.py reads it line by line).

`--format auto` (detect_format) is a guess, the *format-detection heuristic*: a `.jsonl`
name, then the first PEEK_CHARS characters (a JSON array with "mapping" or
"chat_messages", a JSON line with "content", a first "Name: message" line).

These readers are pure (no database). They parse and validate a whole file before the
import writes anything: these exports fit in memory (a large ChatGPT history is tens of
MB), and a truncated or foreign file must raise one InputError naming the line or node
instead of leaving half a conversation imported.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from agent.errors import InputError
from agent.services.access.importer import ImportLine, check_key, parse_timestamp

FORMATS = ("auto", "cogd", "chatgpt", "claude", "text")
# cogd choice: speakers a text log's assistant usually goes by (compared case-insensitively)
ASSISTANT_NAMES = frozenset({"assistant", "chatgpt", "gpt", "claude", "ai", "bot", "cogd"})
PEEK_CHARS = 1 << 20  # how much of a file detect_format reads


@dataclass
class Parsed:
    """A whole file read: its format, its lines (in order) and what was skipped, by reason."""

    format: str
    lines: list[ImportLine] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def read_text_file(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def detect_format(path: Path, text: str | None = None) -> str:
    """chatgpt, claude, cogd or text, guessed from the file's name and first characters
    (the format-detection heuristic: e.g. JSON whose first characters hold "mapping" is
    read as ChatGPT's); InputError if none fits.

    A `.jsonl` file is cogd's own format (as before --format existed: its bad lines are
    reported one by one)."""
    if path.suffix.lower() == ".jsonl":
        return "cogd"
    peek = (text if text is not None else read_text_file(path))[:PEEK_CHARS]
    head = peek.lstrip()
    if not head:
        raise InputError(f"{path}: the file is empty")
    if "\x00" in peek:
        raise InputError(f"{path}: binary data, not a conversation export")
    if head[0] in "[{":
        if '"mapping"' in peek:
            return "chatgpt"
        if '"chat_messages"' in peek:
            return "claude"
        if head[0] == "{":
            first = head.splitlines()[0]
            try:
                data = json.loads(first)
            except ValueError:
                data = None
            if isinstance(data, dict) and "content" in data:
                return "cogd"
            raise InputError(f"{path}: line 1 is JSON but not a cogd JSONL line (no "
                             "'content'), a ChatGPT export (no 'mapping') or a Claude "
                             "export (no 'chat_messages')")
        raise InputError(f"{path}: a JSON array, but neither a ChatGPT export (no 'mapping') "
                         "nor a Claude export (no 'chat_messages')")
    for lineno, line in enumerate(peek.splitlines(), start=1):
        if not line.strip() or _HEADING.match(line):
            continue
        if _SPEAKER.match(line):
            return "text"
        raise InputError(f"{path}: line {lineno} is neither JSON nor a 'Name: message' line; "
                         "not a format cogd imports (give --format to say which it is)")
    raise InputError(f"{path}: no messages (only headings and blank lines)")


_PARTIAL = re.compile(r"[A-Za-z0-9.+\-]*\s*")


def load_json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # the file was cut if the error is at its end, in a literal or number running to
        # its end, or in a string running to its end (a raw newline in a string is another
        # error)
        if _PARTIAL.fullmatch(text, exc.pos) or exc.msg.startswith("Unterminated string"):
            lineno = text.count("\n") + 1
            colno = len(text) - text.rfind("\n")
            raise InputError(f"{name}: truncated JSON (it ends at line {lineno} "
                             f"column {colno})") from None
        raise InputError(f"{name}: not valid JSON at line {exc.lineno} column {exc.colno} "
                         f"({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{name}: not valid JSON ({exc.__class__.__name__})") from None


def _epoch(where: str, value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{where}: create_time {value!r} is not a Unix time")
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise InputError(f"{where}: create_time {value!r} is out of range") from None


def _line(where: str, n: int, session: str, speaker: str, role: str, content: str,
          when: datetime | None, ext: str, named: str | None) -> ImportLine:
    for key, value in (("session", session), ("speaker", speaker), ("external_id", ext)):
        check_key(where, key, value)
    if "\x00" in content:
        raise InputError(f"{where}: the message contains a NUL character")
    return ImportLine(n, session, speaker, role, content, when, ext, named=named)


def _conversations(name: str, data: Any, what: str, needs: str) -> list[Any]:
    if isinstance(data, dict) and needs in data:
        return [data]  # one conversation on its own
    if not isinstance(data, list):
        raise InputError(f"{name}: not a {what} export: expected a list of conversations, "
                         f"got a JSON {type(data).__name__}")
    return data


# -- ChatGPT ---------------------------------------------------------------------------

def read_chatgpt(name: str, text: str, default_user: str) -> Parsed:
    out = Parsed("chatgpt")
    for i, conv in enumerate(_conversations(name, load_json(name, text), "ChatGPT",
                                            "mapping"), start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            raise InputError(f"{name}: not a ChatGPT export: conversation {i} has no "
                             "'mapping' object")
        cid = conv.get("conversation_id") or conv.get("id")
        session = str(cid) if cid else f"{conv.get('title') or 'untitled'} " \
                                       f"{conv.get('create_time')}"
        where = f"{name}: conversation {str(cid or i)!r}"
        mapping: dict[str, Any] = conv["mapping"]
        for node_id, node in mapping.items():
            if not isinstance(node, dict):
                raise InputError(f"{where}: not a ChatGPT export: node {node_id!r} is not "
                                 "an object")
        branch = _branch(where, mapping, conv.get("current_node"))
        on_branch = set(branch)
        out.skipped["other branch"] += sum(
            1 for nid, node in mapping.items()
            if nid not in on_branch and node.get("message") is not None)
        for node_id in branch:
            _chatgpt_node(where, node_id, mapping[node_id], session, default_user, out)
    return out


def _branch(where: str, mapping: dict[str, Any], current: Any) -> list[str]:
    """The node ids from the root to `current` (or, with none, the last child each step)."""
    if current is None:
        roots = [nid for nid, node in mapping.items() if node.get("parent") is None]
        if not roots:
            return []
        current = roots[0]
        while True:
            children = mapping[current].get("children") or []
            if not children:
                break
            nxt = children[-1]
            if nxt not in mapping:
                raise InputError(f"{where}: node {current!r} has child {nxt!r}, which is "
                                 "not in mapping")
            current = nxt
    if not isinstance(current, str) or current not in mapping:
        raise InputError(f"{where}: current_node {current!r} is not in mapping")
    path: list[str] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if node_id in seen:
            raise InputError(f"{where}: node {node_id!r} is its own ancestor")
        if not isinstance(node_id, str) or node_id not in mapping:
            raise InputError(f"{where}: node {path[-1]!r} has parent {node_id!r}, which is "
                             "not in mapping")
        seen.add(node_id)
        path.append(node_id)
        node_id = mapping[node_id].get("parent")
    return path[::-1]


def _chatgpt_node(where: str, node_id: str, node: dict[str, Any], session: str,
                  default_user: str, out: Parsed) -> None:
    msg = node.get("message")
    if msg is None:
        return  # the root, or a placeholder: no message at all
    at = f"{where}: node {node_id!r}"
    if not isinstance(msg, dict):
        raise InputError(f"{at}: not a ChatGPT export: 'message' is not an object")
    author: dict[str, Any] = msg["author"] if isinstance(msg.get("author"), dict) else {}
    role = author.get("role")
    if not isinstance(role, str):
        raise InputError(f"{at}: not a ChatGPT export: no message.author.role")
    content = msg.get("content")
    if not isinstance(content, dict) or not isinstance(content.get("content_type"), str):
        raise InputError(f"{at}: not a ChatGPT export: no message.content.content_type")
    meta: dict[str, Any] = msg["metadata"] if isinstance(msg.get("metadata"), dict) else {}
    if role in ("system", "tool"):
        out.skipped[role] += 1
        return
    if role not in ("user", "assistant"):
        out.skipped[f"role {role}"] += 1
        return
    if meta.get("is_visually_hidden_from_conversation"):
        out.skipped["hidden"] += 1
        return
    if role == "assistant" and msg.get("recipient") not in (None, "all"):
        out.skipped["tool call"] += 1
        return
    ctype = content["content_type"]
    if ctype not in ("text", "multimodal_text"):
        out.skipped[f"content_type {ctype}"] += 1
        return
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise InputError(f"{at}: not a ChatGPT export: message.content.parts is not a list")
    texts = [p.strip() for p in parts if isinstance(p, str) and p.strip()]
    out.skipped["non-text part"] += sum(1 for p in parts if not isinstance(p, str))
    body = "\n".join(texts).strip()
    if not body:
        out.skipped["empty"] += 1
        return
    named = author.get("name") if isinstance(author.get("name"), str) else None
    speaker = default_user if role == "user" else (named or "ChatGPT")
    out.lines.append(_line(at, len(out.lines) + 1, session, speaker, role, body,
                           _epoch(at, msg.get("create_time")), f"chatgpt:{node_id}",
                           None if role == "user" else speaker))


# -- Claude.ai -------------------------------------------------------------------------

def read_claude(name: str, text: str, default_user: str) -> Parsed:
    out = Parsed("claude")
    for i, conv in enumerate(_conversations(name, load_json(name, text), "Claude",
                                            "chat_messages"), start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            raise InputError(f"{name}: not a Claude export: conversation {i} has no "
                             "'chat_messages' list")
        cid = conv.get("uuid")
        if not isinstance(cid, str) or not cid.strip():
            raise InputError(f"{name}: not a Claude export: conversation {i} has no 'uuid'")
        where = f"{name}: conversation {cid!r}"
        if not conv["chat_messages"]:
            out.skipped["empty conversation"] += 1
        for j, msg in enumerate(conv["chat_messages"], start=1):
            if not isinstance(msg, dict) or not isinstance(msg.get("uuid"), str):
                raise InputError(f"{where}: not a Claude export: message {j} has no 'uuid'")
            at = f"{where}: message {msg['uuid']!r}"
            sender = msg.get("sender")
            if sender not in ("human", "assistant"):
                if not isinstance(sender, str):
                    raise InputError(f"{at}: not a Claude export: no 'sender'")
                out.skipped[f"sender {sender}"] += 1
                continue
            body = _claude_text(at, msg, out)
            if not body:
                out.skipped["empty"] += 1
                continue
            role = "user" if sender == "human" else "assistant"
            speaker = default_user if role == "user" else "Claude"
            when = parse_timestamp(at, "created_at", msg.get("created_at"), naive_is_utc=True)
            out.lines.append(_line(at, len(out.lines) + 1, cid, speaker, role, body, when,
                                   f"claude:{msg['uuid']}", None if role == "user" else speaker))
    return out


def _claude_text(at: str, msg: dict[str, Any], out: Parsed) -> str:
    content = msg.get("content")
    if isinstance(content, list) and content:
        texts = []
        for part in content:
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise InputError(f"{at}: not a Claude export: a content part has no 'type'")
            if part["type"] == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                out.skipped[f"{part['type']} part"] += 1
        body = "\n\n".join(t.strip() for t in texts if t.strip())
    else:
        text = msg.get("text")
        if text is not None and not isinstance(text, str):
            raise InputError(f"{at}: not a Claude export: 'text' is not a string")
        body = (text or "").strip()
    for key in ("attachments", "files"):
        if isinstance(msg.get(key), list) and msg[key]:
            out.skipped[key[:-1]] += len(msg[key])
    return body


# -- text and Markdown -----------------------------------------------------------------

_STAMP = r"\[(?P<stamp>[0-9][0-9:TZ+\-. ]*)\]"
# the text-log speaker heuristic: one to three words (or a **bold** name) and a colon at a
# line's start name a new speaker. It cannot tell a name from a label: "Note: ..." or
# "Step 2: ..." inside a message starts a new message by "Note" / "Step 2"
_SPEAKER = re.compile(
    r"^\s*(?:[-*]\s+)?(?:" + _STAMP + r"\s*)?"
    r"(?:\*\*(?P<bold>[^\W\d][\w .'-]{0,39}?)(?::\*\*|\*\*:)"
    r"|(?P<plain>[^\W\d][\w.'-]*(?: [\w.'-]+){0,2}):)"
    r"(?:\s+(?P<text>.*))?$")
_HEADING = re.compile(r"^\s*#{1,6}\s+(?P<title>.*?)\s*#*\s*$")
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})\b")


def read_text(name: str, text: str, default_user: str, session: str,
              assistant: Iterable[str] = ()) -> Parsed:
    out = Parsed("text")
    names = {n.casefold() for n in assistant} or set(ASSISTANT_NAMES)
    day: date | None = None
    last: datetime | None = None  # the time of the message before, under the same heading
    current: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        where = f"{name}: line {lineno}"
        heading = _HEADING.match(raw)
        if heading:
            found = _DATE.match(heading["title"])
            if found:
                day = _day(where, found[1])
                last = None
            current = None  # a heading ends the message before it
            continue
        match = _SPEAKER.match(raw)
        if match:
            speaker = (match["bold"] or match["plain"]).strip()
            last = _stamp(where, match["stamp"], day, last)
            current = {"lineno": lineno, "speaker": speaker, "when": last,
                       "text": [match["text"] or ""]}
            messages.append(current)
        elif current is not None:
            current["text"].append(raw)
        elif raw.strip():
            raise InputError(f"{where}: expected 'Name: message' (the text before the "
                             "first message needs a speaker)")
    for n, msg in enumerate(messages, start=1):
        where = f"{name}: line {msg['lineno']}"
        body = "\n".join(msg["text"]).strip()
        if not body:
            out.skipped["empty"] += 1
            continue
        speaker = msg["speaker"]
        role = "assistant" if speaker.casefold() in names else "user"
        digest = hashlib.sha256(json.dumps([speaker, body]).encode()).hexdigest()[:16]
        out.lines.append(_line(where, msg["lineno"], session, speaker, role, body,
                               msg["when"], f"text:{session}:{n}:{digest}", speaker))
    if not out.lines:
        raise InputError(f"{name}: no 'Name: message' lines")
    return out


def _day(where: str, value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InputError(f"{where}: {value!r} is not a date") from None


def _stamp(where: str, stamp: str | None, day: date | None,
           last: datetime | None) -> datetime | None:
    """[2024-05-01 10:00], [2024-05-01T10:00:00Z] or [10:00] under a date heading; a
    message with no time of its own takes the time of the message before it under the
    same heading, else its heading's date (midnight UTC), else none."""
    if stamp is None:
        return last or (datetime.combine(day, time(), UTC) if day else None)
    value = stamp.strip().replace("Z", "+00:00")
    try:
        if _DATE.match(value):
            when = datetime.fromisoformat(value)
        else:
            if day is None:
                raise InputError(f"{where}: time [{stamp}] without a date (put it under a "
                                 "'## YYYY-MM-DD' heading, or write the date)")
            when = datetime.combine(day, time.fromisoformat(value))
    except ValueError:
        raise InputError(f"{where}: [{stamp}] is not a date or time") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def parse_file(path: Path, fmt: str, default_user: str, assistant: Iterable[str] = (),
               text: str | None = None) -> Parsed:
    """A chatgpt, claude or text file, read whole and validated (InputError on the first
    problem, naming the file and the node or line)."""
    body = text if text is not None else read_text_file(path)
    name = str(path)
    if fmt == "chatgpt":
        return read_chatgpt(name, body, default_user)
    if fmt == "claude":
        return read_claude(name, body, default_user)
    if fmt == "text":
        return read_text(name, body, default_user, session=path.stem or "stdin",
                         assistant=assistant)
    raise InputError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
