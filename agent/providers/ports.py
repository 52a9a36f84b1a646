"""Ports every provider adapter implements, and the records of model calls."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

CallKind = Literal["chat", "stream", "embed", "rerank"]
Vector = npt.NDArray[np.float32]
Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass(frozen=True)
class CallRecord:
    """One model call, success or failure; never carries an API key."""

    provider: str
    model: str
    role: str | None
    kind: CallKind
    tokens_in: int
    tokens_out: int
    latency_ms: float
    ok: bool
    error: str | None
    attempts: int


@runtime_checkable
class CallRecorder(Protocol):
    def record(self, rec: CallRecord) -> None: ...


class NullRecorder:
    """Drops records (tests, one-shot commands without a database)."""

    def record(self, rec: CallRecord) -> None:
        return None


class ListRecorder:
    """Keeps records in memory (tests, `cogd ask --json`)."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []
        self._lock = threading.Lock()

    def record(self, rec: CallRecord) -> None:
        with self._lock:
            self.records.append(rec)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach a provider; the key never leaves this object."""

    provider: str
    api_key: str
    base_url: str | None
    key_env: str | None
    timeout_s: float = 60.0

    def __repr__(self) -> str:  # keep the key out of logs and tracebacks
        return f"Endpoint({self.provider!r}, base_url={self.base_url!r}, key_env={self.key_env!r})"


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float


@dataclass(frozen=True)
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass(frozen=True)
class ChatResult:
    """An LLM answer. `fallback` is True only for the heuristic (extractive) fallback."""

    text: str
    provider: str
    model: str
    usage: Usage = field(default_factory=Usage)
    logprobs: list[TokenLogprob] | None = None
    fallback: bool = False
    attempts: int = 1
    finish_reason: str | None = None


@runtime_checkable
class Embedder(Protocol):
    """Text → unit vectors. `model_id` versions native embeddings ("local:...", "openai:...")."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(
        self, texts: Sequence[str], memory_type: str | None = None
    ) -> npt.NDArray[np.float32]: ...

    def embed_query(self, text: str) -> npt.NDArray[np.float32]: ...


@runtime_checkable
class LLM(Protocol):
    """Chat model. None for temperature / max_tokens means the profile's value."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def chat(
        self,
        messages: Sequence[Message],
        temperature: float | None = None,
        max_tokens: int | None = None,
        want_logprobs: bool = False,
    ) -> ChatResult: ...

    def stream(
        self,
        messages: Sequence[Message],
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[str]: ...

    def count_tokens(self, text: str) -> int: ...


@dataclass(frozen=True)
class Ranked:
    """One reranked passage: its index in the input and its score."""

    index: int
    score: float


@runtime_checkable
class Reranker(Protocol):
    @property
    def status(self) -> str: ...

    @property
    def enabled(self) -> bool: ...

    def rerank(
        self, query: str, passages: Sequence[str], scores: Sequence[float] | None = None
    ) -> list[Ranked]: ...
