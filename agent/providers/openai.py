"""OpenAI-compatible adapters (OpenAI, Ollama, vLLM, llama.cpp server) over the `openai` SDK.

The SDK's own retries are off (max_retries=0): agent.providers.retry is the only layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.providers.embedding import BaseEmbedder, EmbedTask
from agent.providers.llm_base import BaseLLM, StreamMeta
from agent.providers.ports import CallRecorder, ChatResult, Endpoint, TokenLogprob, Usage
from agent.providers.retry import (
    Failure,
    Retrier,
    RetryPolicy,
    body_failure,
    is_transport_error,
    status_failure,
)


def classify(exc: BaseException) -> Failure | None:
    """openai SDK exceptions → retry decisions."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = str(body.get("message") or exc.message)
        return status_failure(exc.status_code, dict(exc.response.headers), detail)
    if isinstance(exc, openai.APIConnectionError) or is_transport_error(exc):
        return Failure(True, None, None, f"{type(exc).__name__}: {exc}")
    return body_failure(exc)


def make_client(endpoint: Endpoint, timeout_s: float | None = None) -> Any:
    import openai

    return openai.OpenAI(
        api_key=endpoint.api_key,
        base_url=endpoint.base_url,
        max_retries=0,
        timeout=timeout_s or endpoint.timeout_s,
    )


def list_models(endpoint: Endpoint, timeout_s: float = 5.0) -> list[str]:
    """Model ids the endpoint offers: the cheap reachability check of `cogd models`."""
    client = make_client(endpoint, timeout_s)
    return [m.id for m in client.models.list()]


def _retrier(endpoint: Endpoint, model: str, policy: RetryPolicy, **kw: Any) -> Retrier:
    return Retrier(
        policy=policy, provider=endpoint.provider, model=model, classify=classify,
        key_env=endpoint.key_env, base_url=endpoint.base_url, secrets=(endpoint.api_key,), **kw,
    )


class OpenAILLM(BaseLLM):
    provider = "openai"

    def __init__(
        self,
        endpoint: Endpoint,
        model: str,
        temperature: float = 0.7,
        max_tokens: int = 256,
        policy: RetryPolicy | None = None,
        recorder: CallRecorder | None = None,
        role: str | None = None,
        **retry_kw: Any,
    ) -> None:
        super().__init__(model, temperature, max_tokens, recorder, role)
        self.endpoint = endpoint
        self.secrets = (endpoint.api_key,)
        self.retrier = _retrier(endpoint, model, policy or RetryPolicy(), **retry_kw)
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_client(self.endpoint)
        return self._client

    def close(self) -> None:
        """Close the SDK client's connections (a long-lived process keeps it open)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _chat(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
        want_logprobs: bool,
    ) -> ChatResult:
        extra: dict[str, Any] = {"logprobs": True} if want_logprobs else {}
        resp, attempts = self.retrier.call(
            lambda: self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=temperature,
                max_tokens=max_tokens, **extra,
            )
        )
        try:
            choice = resp.choices[0]
            text = choice.message.content or ""
        except (AttributeError, IndexError, TypeError) as exc:  # a 200 of another shape
            failure = Failure(False, 200, None, f"the response has no choices[0].message: {exc}")
            raise self.retrier.error(failure, attempts) from None
        logprobs = None
        if want_logprobs and choice.logprobs is not None and choice.logprobs.content:
            logprobs = [TokenLogprob(t.token, float(t.logprob)) for t in choice.logprobs.content]
        usage = (
            Usage(resp.usage.prompt_tokens, resp.usage.completion_tokens)
            if resp.usage is not None
            else Usage(self.counter.count_messages(messages), self.counter.count(text))
        )
        return ChatResult(
            text=text, provider=self.provider, model=self.model, usage=usage,
            logprobs=logprobs, attempts=attempts, finish_reason=choice.finish_reason,
        )

    def _stream(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int
    ) -> Iterator[str | StreamMeta]:
        # retries cover opening the stream; a stream cut mid-answer is an error, not a retry
        stream, attempts = self.retrier.call(
            lambda: self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=temperature,
                max_tokens=max_tokens, stream=True, stream_options={"include_usage": True},
            )
        )
        yield StreamMeta(attempts=attempts)
        try:
            for chunk in stream:
                if chunk.usage is not None:
                    yield StreamMeta(
                        usage=Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    )
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            raise self.retrier.error(failure, attempts) from None
        finally:
            stream.close()


class OpenAIEmbedder(BaseEmbedder):
    """Symmetric embeddings (OpenAI has no query/document task types)."""

    provider = "openai"

    def __init__(
        self,
        endpoint: Endpoint,
        model: str,
        dim: int,
        batch_size: int = 64,
        max_chars: int = 8000,
        policy: RetryPolicy | None = None,
        recorder: CallRecorder | None = None,
        role: str | None = None,
        **retry_kw: Any,
    ) -> None:
        super().__init__(model, dim, batch_size, max_chars, recorder, role)
        self.endpoint = endpoint
        self.secrets = (endpoint.api_key,)
        self.retrier = _retrier(endpoint, model, policy or RetryPolicy(), **retry_kw)
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_client(self.endpoint)
        return self._client

    def close(self) -> None:
        """Close the SDK client's connections (a long-lived process keeps it open)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _embed_batch(
        self, texts: list[str], task: EmbedTask
    ) -> tuple[npt.NDArray[np.floating], int, int]:
        extra: dict[str, Any] = {}
        if self._model.startswith("text-embedding-3"):
            extra["dimensions"] = self._dim  # only these models accept a shortened output
        resp, attempts = self.retrier.call(
            lambda: self.client.embeddings.create(model=self._model, input=texts, **extra)
        )
        rows = sorted(resp.data, key=lambda d: d.index)
        vectors = np.array([r.embedding for r in rows], dtype=np.float32)
        tokens = resp.usage.prompt_tokens if resp.usage is not None else 0
        return vectors, int(tokens), attempts
