"""What every LLM adapter shares: cleaning, profile defaults, recording chat and stream calls."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agent.providers.ports import (
    CallKind,
    CallRecord,
    CallRecorder,
    ChatResult,
    Message,
    NullRecorder,
    Usage,
)
from agent.providers.retry import ProviderCallError, redact
from agent.providers.text import TokenCounter, clean_messages, default_counter


@dataclass(frozen=True)
class StreamMeta:
    """Yielded by `_stream` besides text: the attempts it took and the usage when known."""

    attempts: int | None = None
    usage: Usage | None = None


class BaseLLM:
    """Subclasses implement `_chat` and `_stream` over cleaned messages."""

    provider = "base"
    secrets: tuple[str, ...] = ()  # redacted from recorded errors (API keys)

    def __init__(
        self,
        model: str,
        temperature: float = 0.7,
        max_tokens: int = 256,
        recorder: CallRecorder | None = None,
        role: str | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self._model = model
        self.default_temperature = temperature
        self.default_max_tokens = max_tokens
        self.recorder: CallRecorder = recorder or NullRecorder()
        self.role = role
        self._counter = counter

    @property
    def model(self) -> str:
        return self._model

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = default_counter()
        return self._counter

    def count_tokens(self, text: str) -> int:
        """Offline token count (an estimate for cloud models)."""
        return self.counter.count(text)

    def chat(
        self,
        messages: Sequence[Message],
        temperature: float | None = None,
        max_tokens: int | None = None,
        want_logprobs: bool = False,
    ) -> ChatResult:
        """One answer; recorded as a 'chat' call whether it succeeds or fails."""
        cleaned = clean_messages(messages)
        temp = self.default_temperature if temperature is None else temperature
        limit = self.default_max_tokens if max_tokens is None else max_tokens
        start = time.perf_counter()
        try:
            result = self._chat(cleaned, temp, limit, want_logprobs)
        except Exception as exc:
            self._record("chat", start, Usage(self.counter.count_messages(cleaned), 0), exc)
            raise
        self._record("chat", start, result.usage, None, result.attempts)
        return result

    def stream(
        self,
        messages: Sequence[Message],
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[str]:
        """Text chunks as they arrive; recorded as one 'stream' call when it ends."""
        cleaned = clean_messages(messages)
        temp = self.default_temperature if temperature is None else temperature
        limit = self.default_max_tokens if max_tokens is None else max_tokens
        return self._recorded_stream(cleaned, temp, limit)

    def _recorded_stream(
        self, cleaned: list[dict[str, str]], temp: float, limit: int
    ) -> Iterator[str]:
        start = time.perf_counter()
        parts: list[str] = []
        usage: Usage | None = None
        attempts = 1
        error: BaseException | None = None
        try:
            for item in self._stream(cleaned, temp, limit):
                if isinstance(item, StreamMeta):
                    attempts = item.attempts or attempts
                    usage = item.usage or usage
                elif item:
                    parts.append(item)
                    yield item
        except Exception as exc:
            error = exc
            raise
        finally:
            if usage is None:
                usage = Usage(
                    self.counter.count_messages(cleaned), self.counter.count("".join(parts))
                )
            self._record("stream", start, usage, error, attempts)

    def _error_text(self, exc: BaseException) -> str:
        return redact(f"{type(exc).__name__}: {exc}", self.secrets)[:2000]

    def _record(
        self,
        kind: CallKind,
        start: float,
        usage: Usage,
        exc: BaseException | None,
        attempts: int = 1,
    ) -> None:
        if isinstance(exc, ProviderCallError):
            attempts = exc.attempts
        self.recorder.record(
            CallRecord(
                provider=self.provider, model=self._model, role=self.role, kind=kind,
                tokens_in=usage.tokens_in, tokens_out=usage.tokens_out,
                latency_ms=(time.perf_counter() - start) * 1000.0, ok=exc is None,
                error=None if exc is None else self._error_text(exc),
                attempts=attempts,
            )
        )

    def _chat(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
        want_logprobs: bool,
    ) -> ChatResult:
        raise NotImplementedError

    def _stream(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int
    ) -> Iterator[str | StreamMeta]:
        raise NotImplementedError
