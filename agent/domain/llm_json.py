"""JSON from a model's answer, with the fallbacks of seed 000 §10.6.

(1) direct JSON parse, (2) extraction from markdown code blocks, (3) boundary
detection: the first balanced object/array in the text that parses. If all of them
fail, the caller applies no structured update and counts a parse failure; this
module never raises, whatever the text (huge, deeply nested, truncated, binary junk).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

Strategy = Literal["direct", "fenced", "boundary"]

MAX_INPUT_CHARS = 200_000  # cogd choice: far above any answer (max_tokens ≤ a few thousand)
MAX_BOUNDARY_TRIES = 64  # cogd choice: candidate openings tried before giving up (bounds the work)

# strict=False: models put raw newlines and tabs inside strings
_DECODER = json.JSONDecoder(strict=False)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_OPENING = re.compile(r"[\[{]")
_YES_NO = re.compile(r"^\W*(yes|no|true|false)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ParseResult:
    """`value` is the parsed JSON when `strategy` names how it was found; else `error` says why."""

    value: Any
    strategy: Strategy | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.strategy is not None


def _fits(value: Any, expect: type | None) -> bool:
    if expect is None:
        return isinstance(value, dict | list)  # a bare scalar is never a structured answer
    return isinstance(value, expect)


def _loads(text: str) -> tuple[Any, str | None]:
    """(value, None) or (None, the reason it failed)."""
    try:
        value, end = _DECODER.raw_decode(text)
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return None, "nested too deeply"
    except (ValueError, MemoryError) as exc:  # e.g. int digits limit
        return None, f"{type(exc).__name__}: {exc}"[:200]
    if text[end:].strip():
        return None, f"extra text after the JSON value at char {end}"
    return value, None


def _expected(expect: type | None) -> str:
    if expect is dict:
        return "JSON object"
    return "JSON array" if expect is list else "JSON object or array"


def _boundary(text: str, expect: type | None) -> tuple[Any, bool]:
    """The first top-level object/array in `text` that parses and fits `expect`."""
    pos = 0
    failures = 0
    while failures < MAX_BOUNDARY_TRIES:
        match = _OPENING.search(text, pos)
        if match is None:
            return None, False
        start = match.start()
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError, MemoryError):
            failures += 1
            pos = start + 1
            continue
        if _fits(value, expect):
            return value, True
        pos = end  # a value of the wrong type: do not look inside it
        failures += 1
    return None, False


def parse_llm_json(text: Any, expect: type | None = None) -> ParseResult:
    """Parse a model's JSON answer: direct, then fenced code blocks, then boundary detection.

    `expect` is dict, list or None (either). Never raises; a failed parse returns
    ParseResult(None, None, error) with the reason of the direct attempt.
    """
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        return ParseResult(None, None, f"expected text, got {type(text).__name__}")
    if len(text) > MAX_INPUT_CHARS:
        return ParseResult(
            None, None, f"answer of {len(text)} characters is over {MAX_INPUT_CHARS}; not parsed"
        )
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        return ParseResult(None, None, "empty answer")
    want = _expected(expect)
    # (1) the whole answer is JSON
    value, direct_error = _loads(stripped)
    if direct_error is None:
        if _fits(value, expect):
            return ParseResult(value, "direct")
        direct_error = f"parsed a {type(value).__name__}, not a {want}"
    # (2) markdown code blocks, in order (an unclosed block runs to the end)
    if "```" in stripped:
        for match in _FENCE.finditer(stripped):
            block = match.group(2).strip()
            if not block:
                continue
            value, error = _loads(block)
            if error is None and _fits(value, expect):
                return ParseResult(value, "fenced")
    # (3) boundary detection: the first balanced object/array that parses
    value, found = _boundary(stripped, expect)
    if found:
        return ParseResult(value, "boundary")
    hint = "" if _OPENING.search(stripped) else "; no '{' or '[' in it"
    return ParseResult(None, None, f"no {want} found (direct parse: {direct_error}){hint}")


def parse_yes_no(text: Any) -> bool | None:
    """A bare yes/no (or true/false) answer, the last fallback for small local models."""
    if not isinstance(text, str):
        return None
    match = _YES_NO.match(text[:200])
    if match is None:
        return None
    return match.group(1).lower() in ("yes", "true")
