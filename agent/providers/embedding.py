"""What every Embedder adapter shares: cleaning, prefixes, batching, normalising, recording."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from agent.errors import InputError, ProviderError
from agent.providers.ports import CallRecord, CallRecorder, NullRecorder
from agent.providers.retry import ProviderCallError, redact
from agent.providers.text import clean_text, with_prefix

EmbedTask = Literal["document", "query", "clustering", "similarity"]
EMBED_TASKS: tuple[str, ...] = ("document", "query", "clustering", "similarity")
FloatArray = npt.NDArray[np.float32]


def normalise(vectors: npt.NDArray[np.floating]) -> FloatArray:
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return (arr / np.maximum(norms, 1e-12)).astype(np.float32)


class BaseEmbedder:
    """Subclasses implement `_embed_batch(texts, task) -> (vectors, tokens_in, attempts)`."""

    provider = "base"
    secrets: tuple[str, ...] = ()  # redacted from recorded errors (API keys)

    def __init__(
        self,
        model: str,
        dim: int,
        batch_size: int = 64,
        max_chars: int = 8000,
        recorder: CallRecorder | None = None,
        role: str | None = None,
    ) -> None:
        self._model = model
        self._dim = dim
        self.batch_size = max(1, batch_size)
        self.max_chars = max_chars
        self.recorder: CallRecorder = recorder or NullRecorder()
        self.role = role

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self._model}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed_documents(
        self, texts: Sequence[str], memory_type: str | None = None
    ) -> FloatArray:
        """Unit vectors (n x dim) for memories; `memory_type` adds the seeds' prefix."""
        return self.embed_texts(texts, "document", memory_type)

    def embed_query(self, text: str) -> FloatArray:
        """One unit vector for a search query (asymmetric where the provider supports it).
        A loop turn embeds its query and message once and passes the vectors on
        (Cognition.prepare_turn, RecallOutcome.vectors)."""
        return self.embed_texts([text], "query")[0]

    def embed_texts(
        self, texts: Sequence[str], task: EmbedTask = "document", memory_type: str | None = None
    ) -> FloatArray:
        if isinstance(texts, str | bytes):
            raise InputError("embed_documents takes a list of texts, not one string")
        if task not in EMBED_TASKS:
            raise InputError(f"unknown embedding task {task!r}; valid: {', '.join(EMBED_TASKS)}")
        cleaned = [
            with_prefix(clean_text(t, self.max_chars, "text to embed"), memory_type) for t in texts
        ]
        if not cleaned:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts = [
            self._timed_batch(cleaned[i : i + self.batch_size], task)
            for i in range(0, len(cleaned), self.batch_size)
        ]
        out = normalise(np.vstack(parts))
        if out.shape[1] != self._dim:
            raise ProviderError(
                f"{self.model_id} returned {out.shape[1]}-dimensional vectors but the "
                f"configuration says {self._dim}: set embedding.native_dim to {out.shape[1]} "
                "(before `cogd migrate`) or choose the matching model"
            )
        return out

    def _timed_batch(self, batch: list[str], task: EmbedTask) -> npt.NDArray[np.floating]:
        start = time.perf_counter()
        try:
            vectors, tokens_in, attempts = self._embed_batch(batch, task)
        except Exception as exc:
            self._record(start, 0, False, exc)
            raise
        self._record(start, tokens_in, True, None, attempts)
        return vectors

    def _error_text(self, exc: BaseException) -> str:
        return redact(f"{type(exc).__name__}: {exc}", self.secrets)[:2000]

    def _record(
        self, start: float, tokens_in: int, ok: bool, exc: BaseException | None, attempts: int = 1
    ) -> None:
        if isinstance(exc, ProviderCallError):
            attempts = exc.attempts
        self.recorder.record(
            CallRecord(
                provider=self.provider, model=self._model, role=self.role, kind="embed",
                tokens_in=tokens_in, tokens_out=0,
                latency_ms=(time.perf_counter() - start) * 1000.0, ok=ok,
                error=None if exc is None else self._error_text(exc),
                attempts=attempts,
            )
        )

    def _embed_batch(
        self, texts: list[str], task: EmbedTask
    ) -> tuple[npt.NDArray[np.floating], int, int]:
        raise NotImplementedError
