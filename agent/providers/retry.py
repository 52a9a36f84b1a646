"""The one retry layer: exponential backoff with jitter, Retry-After, fail fast on 4xx.

The SDKs' own retries are switched off (openai max_retries=0, google-genai one
attempt) so that attempts, delays and records are counted here only.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from agent.errors import ProviderError

logger = logging.getLogger(__name__)
T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_TRANSPORT_NAMES = frozenset(
    {"TransportError", "TimeoutException", "NetworkError", "RemoteProtocolError",
     "APIConnectionError", "APITimeoutError", "ClientConnectorError", "ServerDisconnectedError"}
)


@dataclass(frozen=True)
class RetryPolicy:
    """Delays 1 s → 2 s → 4 s (times 1 ± jitter), capped; Retry-After wins when given."""

    max_retries: int = 3
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.5

    @classmethod
    def from_settings(cls, retry: Any) -> RetryPolicy:
        return cls(
            max_retries=int(retry.max_retries),
            base_delay_s=float(retry.base_delay_s),
            max_delay_s=float(retry.max_delay_s),
            jitter=float(retry.jitter),
        )

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_delay_s))
        base = min(self.base_delay_s * 2 ** (attempt - 1), self.max_delay_s)
        jittered = base * (1.0 + self.jitter * rng.uniform(-1.0, 1.0))
        return max(0.0, min(jittered, self.max_delay_s))


@dataclass(frozen=True)
class Failure:
    """A provider failure, as the retry loop sees it."""

    retryable: bool
    status: int | None
    retry_after: float | None
    detail: str


class ProviderCallError(ProviderError):
    """A call that failed for good: names the provider, the HTTP status and what to check."""

    def __init__(self, message: str, provider: str, status: int | None, attempts: int) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.attempts = attempts


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lower:
        try:
            return float(lower["retry-after-ms"]) / 1000.0
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


def is_transport_error(exc: BaseException) -> bool:
    """Timeouts and dropped connections of any HTTP stack (httpx, httpx2, aiohttp)."""
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    return any(cls.__name__ in _TRANSPORT_NAMES for cls in type(exc).__mro__)


def body_failure(exc: BaseException) -> Failure | None:
    """A 200 whose body is not JSON (cut short, a proxy's error page): retried like a drop."""
    if isinstance(exc, json.JSONDecodeError):
        return Failure(True, 200, None, f"malformed response body: {exc}")
    return None


def status_failure(status: int, headers: Mapping[str, str] | None, detail: str) -> Failure:
    retryable = status in RETRYABLE_STATUS or status >= 500
    return Failure(retryable, status, parse_retry_after(headers) if retryable else None, detail)


def hint_for(status: int | None, key_env: str | None, base_url: str | None, model: str) -> str:
    """What the user should check for a failure with this status."""
    where = base_url or "the provider's default endpoint"
    if status == 401:
        return f"check {key_env or 'the API key'}: the key was refused"
    if status == 403:
        return f"check that the key in {key_env or 'the API key'} may use model {model!r}"
    if status == 404:
        return f"check the model name {model!r} and base_url {where}"
    if status == 400 or status == 422:
        return f"check the model name {model!r} and the request parameters"
    if status == 429:
        return "rate limited or out of quota: lower the call rate or check the account's quota"
    if status is None:
        return f"check that {where} is reachable (network, proxy, base_url)"
    return "the provider is failing; try again later"


def redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


@dataclass
class Retrier:
    """Runs a call under a RetryPolicy; `sleep` and `rng` are injected for tests."""

    policy: RetryPolicy
    provider: str
    model: str
    classify: Callable[[BaseException], Failure | None]
    key_env: str | None = None
    base_url: str | None = None
    secrets: tuple[str, ...] = ()
    sleep: Callable[[float], None] = time.sleep
    async_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random | None = None

    def __post_init__(self) -> None:
        if self.rng is None:
            self.rng = random.Random()

    def call(self, fn: Callable[[], T]) -> tuple[T, int]:
        """fn's value and the number of attempts it took; raises ProviderCallError."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return fn(), attempt
            except Exception as exc:
                wait = self._after_failure(exc, attempt)
            self.sleep(wait)

    async def acall(self, fn: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await fn(), attempt
            except Exception as exc:
                wait = self._after_failure(exc, attempt)
            await self.async_sleep(wait)

    def _after_failure(self, exc: Exception, attempt: int) -> float:
        """The delay before the next attempt, or raise ProviderCallError."""
        if isinstance(exc, ProviderCallError):
            raise exc
        failure = self.classify(exc)
        if failure is None:
            raise exc
        if failure.retryable and attempt <= self.policy.max_retries:
            assert self.rng is not None
            wait = self.policy.delay(attempt, self.rng, failure.retry_after)
            logger.warning(
                "%s: %s (attempt %d of %d); retrying in %.1f s",
                self.provider, self._status_text(failure), attempt,
                self.policy.max_retries + 1, wait,
            )
            return wait
        raise self.error(failure, attempt) from None  # the SDK error may echo the key

    def error(self, failure: Failure, attempts: int) -> ProviderCallError:
        hint = hint_for(failure.status, self.key_env, self.base_url, self.model)
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        detail = redact(failure.detail, self.secrets)[:300]
        message = f"{self.provider}: {self._status_text(failure)}{tries}: {hint} ({detail})"
        return ProviderCallError(message, self.provider, failure.status, attempts)

    @staticmethod
    def _status_text(failure: Failure) -> str:
        return f"HTTP {failure.status}" if failure.status else "no response"
