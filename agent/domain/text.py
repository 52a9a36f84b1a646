"""Text Postgres can store: what every write path cleans before it stores a turn or a
reply (NUL bytes, lone surrogates, undecodable bytes), and the refusal of empty input."""

from __future__ import annotations

from agent.errors import InputError


def storable_text(text: str, nul: str = "\ufffd") -> tuple[str, list[str]]:
    """Text Postgres (text and jsonb) can hold: NUL becomes `nul`, lone surrogates "?";
    with what was changed. Empty text stays empty (model output, partial replies)."""
    notes: list[str] = []
    if "\x00" in text:
        text = text.replace("\x00", nul)  # Postgres text cannot hold NUL
        notes.append("nul_bytes_replaced")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        text = text.encode("utf-8", "replace").decode("utf-8")
        notes.append("surrogates_replaced")
    return text, notes


def clean_content(raw: str | bytes) -> tuple[str, list[str]]:
    """Text Postgres can store, and what was changed; empty content is refused."""
    notes: list[str] = []
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", errors="replace")
        if "\ufffd" in text:
            notes.append("invalid_utf8_replaced")
    else:
        text = raw
    text, changed = storable_text(text)
    notes += changed
    if not text.strip():
        raise InputError("empty message: nothing to store (send some text)")
    return text, notes
