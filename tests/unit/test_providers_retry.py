"""The retry layer: backoff, jitter, Retry-After, fail fast, attempts; no real sleeping."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time

import pytest

from agent.errors import ProviderError
from agent.providers.retry import (
    Failure,
    ProviderCallError,
    Retrier,
    RetryPolicy,
    is_transport_error,
    parse_retry_after,
    status_failure,
)


class StatusError(Exception):
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"status {status}")
        self.status = status
        self.headers = headers or {}


def classify(exc: BaseException) -> Failure | None:
    if isinstance(exc, StatusError):
        return status_failure(exc.status, exc.headers, str(exc))
    if is_transport_error(exc):
        return Failure(True, None, None, str(exc))
    return None


def make(script: list[BaseException | str], **policy: float) -> tuple[Retrier, list[float], list]:
    """A retrier over a scripted function; returns (retrier, sleeps, calls)."""
    sleeps: list[float] = []
    retrier = Retrier(
        policy=RetryPolicy(**policy),  # type: ignore[arg-type]
        provider="stubprov", model="m1", classify=classify, key_env="STUB_KEY",
        base_url="http://x", secrets=("sk-secret-123",), sleep=sleeps.append,
        rng=random.Random(7),
    )
    return retrier, sleeps, list(script)


def run(retrier: Retrier, script: list) -> tuple[str, int]:
    def fn() -> str:
        item = script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return str(item)

    return retrier.call(fn)


def test_defaults_match_the_issue() -> None:
    p = RetryPolicy()
    assert (p.max_retries, p.base_delay_s, p.max_delay_s, p.jitter) == (3, 1.0, 30.0, 0.5)


def test_delays_double_and_cap_without_jitter() -> None:
    p = RetryPolicy(max_retries=10, base_delay_s=1.0, max_delay_s=30.0, jitter=0.0)
    rng = random.Random(0)
    assert [p.delay(a, rng) for a in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_jitter_stays_within_half_either_side() -> None:
    p = RetryPolicy(jitter=0.5)
    rng = random.Random(1)
    samples = [p.delay(2, rng) for _ in range(500)]
    assert min(samples) >= 1.0 and max(samples) <= 3.0
    assert max(samples) - min(samples) > 1.0  # it really jitters


def test_retry_after_wins_and_is_capped() -> None:
    p = RetryPolicy(max_delay_s=30.0)
    rng = random.Random(0)
    assert p.delay(1, rng, retry_after=7.0) == 7.0
    assert p.delay(1, rng, retry_after=120.0) == 30.0


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    future = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (parse_retry_after({"retry-after": future}) or 0) <= 61
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_429_then_success_honours_retry_after() -> None:
    retrier, sleeps, script = make([StatusError(429, {"Retry-After": "2"}), "ok"])
    assert run(retrier, script) == ("ok", 2)
    assert sleeps == [2.0]


def test_5xx_and_connection_drops_are_retried_with_backoff() -> None:
    retrier, sleeps, script = make(
        [StatusError(500), ConnectionResetError("reset"), TimeoutError("slow"), "ok"], jitter=0.0
    )
    assert run(retrier, script) == ("ok", 4)
    assert sleeps == [1.0, 2.0, 4.0]


@pytest.mark.parametrize(("status", "hint"), [
    (400, "check the model name 'm1'"),
    (401, "check STUB_KEY"),
    (403, "check that the key in STUB_KEY may use model 'm1'"),
])
def test_client_errors_fail_fast_with_a_clear_message(status: int, hint: str) -> None:
    retrier, sleeps, script = make([StatusError(status), "never"])
    with pytest.raises(ProviderCallError) as info:
        run(retrier, script)
    assert isinstance(info.value, ProviderError)
    assert info.value.attempts == 1 and info.value.status == status
    assert sleeps == [] and script == ["never"]
    message = str(info.value)
    assert message.startswith(f"stubprov: HTTP {status}") and hint in message


def test_exhausted_retries_count_every_attempt() -> None:
    retrier, sleeps, script = make([StatusError(503)] * 5, max_retries=3)
    with pytest.raises(ProviderCallError, match="after 4 attempts") as info:
        run(retrier, script)
    assert info.value.attempts == 4 and len(sleeps) == 3


def test_unknown_exceptions_are_not_retried_or_wrapped() -> None:
    retrier, sleeps, script = make([KeyError("bug"), "ok"])
    with pytest.raises(KeyError):
        run(retrier, script)
    assert sleeps == []


def test_secrets_never_reach_the_message() -> None:
    retrier, _, _ = make([])
    err = retrier.error(Failure(False, 401, None, "bad key sk-secret-123 given"), 1)
    assert "sk-secret-123" not in str(err) and "***" in str(err)


def test_async_variant_uses_the_injected_sleep() -> None:
    waits: list[float] = []

    async def fake_sleep(s: float) -> None:
        waits.append(s)

    retrier = Retrier(
        policy=RetryPolicy(jitter=0.0), provider="p", model="m", classify=classify,
        async_sleep=fake_sleep,
    )
    script: list[BaseException | str] = [StatusError(502), StatusError(429, {"retry-after": "5"}),
                                         "done"]

    async def fn() -> str:
        item = script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    assert asyncio.run(retrier.acall(fn)) == ("done", 3)
    assert waits == [1.0, 5.0]


def test_async_fail_fast() -> None:
    retrier = Retrier(policy=RetryPolicy(), provider="p", model="m", classify=classify)

    async def fn() -> str:
        raise StatusError(401)

    with pytest.raises(ProviderCallError) as info:
        asyncio.run(retrier.acall(fn))
    assert info.value.attempts == 1
