"""Gemini adapters over `google-genai` (Gemini Developer API, key in x-goog-api-key).

The SDK retries nothing (HttpRetryOptions(attempts=1)): agent.providers.retry is the only layer.
Embeddings are asymmetric: documents RETRIEVAL_DOCUMENT, queries RETRIEVAL_QUERY.
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
from agent.providers.text import default_counter

GEMINI_API_VERSION = "v1beta"  # the Developer API version that has logprobs and task types
TASK_TYPES: dict[str, str] = {
    "document": "RETRIEVAL_DOCUMENT",
    "query": "RETRIEVAL_QUERY",
    "clustering": "CLUSTERING",
    "similarity": "SEMANTIC_SIMILARITY",
}


def classify(exc: BaseException) -> Failure | None:
    """google-genai exceptions (and raw transport errors) → retry decisions."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        headers = getattr(getattr(exc, "response", None), "headers", None)
        return status_failure(
            int(exc.code), dict(headers) if headers else None, str(exc.message or exc.status)
        )
    if is_transport_error(exc):
        return Failure(True, None, None, f"{type(exc).__name__}: {exc}")
    return body_failure(exc)


def make_client(endpoint: Endpoint, timeout_s: float | None = None) -> Any:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=endpoint.base_url,
        api_version=GEMINI_API_VERSION,
        timeout=int((timeout_s or endpoint.timeout_s) * 1000),  # milliseconds
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=endpoint.api_key, http_options=options)


def list_models(endpoint: Endpoint, timeout_s: float = 5.0) -> list[str]:
    """Model names the endpoint offers: the cheap reachability check of `cogd models`."""
    client = make_client(endpoint, timeout_s)
    return [str(m.name) for m in client.models.list(config={"page_size": 50})]


def _retrier(endpoint: Endpoint, model: str, policy: RetryPolicy, **kw: Any) -> Retrier:
    return Retrier(
        policy=policy, provider=endpoint.provider, model=model, classify=classify,
        key_env=endpoint.key_env, base_url=endpoint.base_url, secrets=(endpoint.api_key,), **kw,
    )


def _contents(messages: list[dict[str, str]]) -> tuple[str | None, list[Any]]:
    from google.genai import types

    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
    contents = [
        types.Content(
            role="model" if m["role"] == "assistant" else "user",
            parts=[types.Part(text=m["content"])],
        )
        for m in messages
        if m["role"] != "system"
    ]
    return system, contents


def _text(resp: Any) -> str:
    if not resp.candidates or resp.candidates[0].content is None:
        return ""
    return "".join(p.text or "" for p in resp.candidates[0].content.parts or [])


def _usage(resp: Any) -> Usage | None:
    meta = resp.usage_metadata
    if meta is None or meta.prompt_token_count is None:
        return None
    return Usage(int(meta.prompt_token_count or 0), int(meta.candidates_token_count or 0))


class GeminiLLM(BaseLLM):
    provider = "gemini"

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

    def _config(
        self, system: str | None, temperature: float, max_tokens: int, logprobs: bool
    ) -> Any:
        from google.genai import types

        return types.GenerateContentConfig(
            system_instruction=system, temperature=temperature, max_output_tokens=max_tokens,
            response_logprobs=True if logprobs else None,
        )

    def _chat(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
        want_logprobs: bool,
    ) -> ChatResult:
        system, contents = _contents(messages)
        config = self._config(system, temperature, max_tokens, want_logprobs)
        resp, attempts = self.retrier.call(
            lambda: self.client.models.generate_content(
                model=self.model, contents=contents, config=config
            )
        )
        text = _text(resp)
        logprobs = None
        candidate = resp.candidates[0] if resp.candidates else None
        result = getattr(candidate, "logprobs_result", None)
        if want_logprobs and result is not None and result.chosen_candidates:
            logprobs = [
                TokenLogprob(str(c.token), float(c.log_probability or 0.0))
                for c in result.chosen_candidates
            ]
        usage = _usage(resp) or Usage(
            self.counter.count_messages(messages), self.counter.count(text)
        )
        finish = getattr(candidate, "finish_reason", None)
        return ChatResult(
            text=text, provider=self.provider, model=self.model, usage=usage, logprobs=logprobs,
            attempts=attempts,
            finish_reason=None if finish is None else str(getattr(finish, "value", finish)),
        )

    def _stream(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int
    ) -> Iterator[str | StreamMeta]:
        system, contents = _contents(messages)
        config = self._config(system, temperature, max_tokens, False)

        def open_stream() -> tuple[Iterator[Any], Any]:
            # the request is sent on the first next(): open it inside the retry
            it = iter(self.client.models.generate_content_stream(
                model=self.model, contents=contents, config=config
            ))
            return it, next(it, None)

        (chunks, first), attempts = self.retrier.call(open_stream)
        yield StreamMeta(attempts=attempts)
        try:
            chunk = first
            while chunk is not None:
                usage = _usage(chunk)
                if usage is not None:
                    yield StreamMeta(usage=usage)
                text = _text(chunk)
                if text:
                    yield text
                chunk = next(chunks, None)
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            raise self.retrier.error(failure, attempts) from None


class GeminiEmbedder(BaseEmbedder):
    """batchEmbedContents with a task type per call (asymmetric retrieval)."""

    provider = "gemini"

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
        from google.genai import types

        config = types.EmbedContentConfig(
            task_type=TASK_TYPES[task], output_dimensionality=self._dim
        )
        resp, attempts = self.retrier.call(
            lambda: self.client.models.embed_content(
                model=self._model, contents=texts, config=config
            )
        )
        vectors = np.array([e.values for e in resp.embeddings or []], dtype=np.float32)
        # batchEmbedContents reports no usage: count offline
        return vectors, sum(default_counter().count(t) for t in texts), attempts
