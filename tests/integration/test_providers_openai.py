"""The real `openai` SDK against the stub server: chat, stream, embeddings, retries, records."""

from __future__ import annotations

import numpy as np
import pytest

from agent.providers.openai import OpenAIEmbedder, OpenAILLM, list_models
from agent.providers.ports import Endpoint, ListRecorder
from agent.providers.retry import ProviderCallError, RetryPolicy
from agent.providers.text import default_counter
from tests.stubserver import StubServer, stub_server_fixture, stub_vector  # noqa: F401

KEY = "sk-test-not-real-0123"
HELLO = [{"role": "system", "content": "You are terse."},
         {"role": "user", "content": "What did I say about the garden?"}]


def endpoint(stub: StubServer) -> Endpoint:
    return Endpoint("openai", KEY, stub.openai_base_url, "OPENAI_API_KEY", timeout_s=10)


def llm(stub: StubServer, rec: ListRecorder, sleeps: list[float]) -> OpenAILLM:
    return OpenAILLM(endpoint(stub), "stub-chat", temperature=0.2, max_tokens=64,
                     recorder=rec, role="system1", sleep=sleeps.append,
                     policy=RetryPolicy(jitter=0.0))


def test_chat_with_logprobs_usage_and_auth(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    result = llm(stub_server, rec, sleeps).chat(HELLO, want_logprobs=True)
    assert result.text == (
        "The stub heard you say did I say about the garden?. That is all it knows."
    )
    assert result.fallback is False and result.attempts == 1
    assert result.logprobs and result.logprobs[0].token == "The "
    assert result.logprobs[1].logprob == pytest.approx(-0.2)
    req = stub_server.requests[-1]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body["logprobs"] is True and req.body["max_tokens"] == 64
    assert req.body["temperature"] == 0.2 and req.body["messages"] == HELLO
    (r,) = rec.records
    assert (r.provider, r.model, r.role, r.kind, r.ok, r.attempts) == (
        "openai", "stub-chat", "system1", "chat", True, 1)
    assert (r.tokens_in, r.tokens_out) == (result.usage.tokens_in, result.usage.tokens_out)
    assert r.tokens_in > 0 and KEY not in repr(r)


def test_stream_yields_chunks_and_records_usage(stub_server: StubServer) -> None:
    rec = ListRecorder()
    chunks = list(llm(stub_server, rec, []).stream(HELLO))
    assert len(chunks) > 3
    assert "".join(chunks).startswith("The stub heard you say")
    assert stub_server.requests[-1].body["stream"] is True
    (r,) = rec.records
    assert r.kind == "stream" and r.ok and r.tokens_out > 0


def test_embeddings_ask_base64_and_come_back_normalised(stub_server: StubServer) -> None:
    rec = ListRecorder()
    emb = OpenAIEmbedder(endpoint(stub_server), "stub-embed", 8, batch_size=2, recorder=rec)
    texts = ["alpha", "beta", "gamma"]
    out = emb.embed_documents(texts)
    assert out.shape == (3, 8) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    raw = np.array(stub_vector("beta"), dtype=np.float32)
    np.testing.assert_allclose(out[1], raw / np.linalg.norm(raw), rtol=1e-5)
    bodies = [r.body for r in stub_server.requests]
    assert [b["input"] for b in bodies] == [["alpha", "beta"], ["gamma"]]  # batched by 2
    assert all(b["encoding_format"] == "base64" for b in bodies)
    assert [r.kind for r in rec.records] == ["embed", "embed"]
    assert emb.model_id == "openai:stub-embed"
    q = emb.embed_query("gamma")
    np.testing.assert_allclose(q, out[2], rtol=1e-5)  # OpenAI embeddings are symmetric


def test_embedding_dimension_mismatch_is_a_clear_error(stub_server: StubServer) -> None:
    emb = OpenAIEmbedder(endpoint(stub_server), "stub-embed", 1536)
    with pytest.raises(Exception, match="returned 8-dimensional vectors"):
        emb.embed_documents(["x"])


def test_models_list(stub_server: StubServer) -> None:
    assert list_models(endpoint(stub_server)) == ["stub-chat", "stub-embed"]


def test_429_with_retry_after_then_success(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(2, 429, retry_after="3")
    result = llm(stub_server, rec, sleeps).chat(HELLO)
    assert result.attempts == 3 and sleeps == [3.0, 3.0]
    assert len(stub_server.requests) == 3  # the SDK itself retried nothing
    assert rec.records[-1].attempts == 3 and rec.records[-1].ok


def test_500_then_success_backs_off(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(1, 500)
    result = llm(stub_server, rec, sleeps).chat(HELLO)
    assert result.attempts == 2 and sleeps == [1.0]


def test_dropped_connection_then_success(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(1, 0)
    emb = OpenAIEmbedder(endpoint(stub_server), "stub-embed", 8, recorder=rec,
                         sleep=sleeps.append)
    assert emb.embed_documents(["x"]).shape == (1, 8)
    assert rec.records[-1].attempts == 2 and len(sleeps) == 1


def test_401_fails_fast_and_is_recorded(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(1, 401)
    with pytest.raises(ProviderCallError, match="openai: HTTP 401: check OPENAI_API_KEY") as info:
        llm(stub_server, rec, sleeps).chat(HELLO)
    assert info.value.attempts == 1 and sleeps == [] and len(stub_server.requests) == 1
    (r,) = rec.records
    assert not r.ok and r.attempts == 1 and "HTTP 401" in (r.error or "")
    assert KEY not in (r.error or "")


def test_retries_exhausted_on_503(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(10, 503)
    with pytest.raises(ProviderCallError, match="after 4 attempts"):
        llm(stub_server, rec, sleeps).chat(HELLO)
    assert sleeps == [1.0, 2.0, 4.0] and rec.records[-1].attempts == 4


def test_stream_retries_before_the_first_chunk(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(1, 502)
    text = "".join(llm(stub_server, rec, sleeps).stream(HELLO))
    assert text.endswith("That is all it knows.")
    assert rec.records[-1].attempts == 2 and rec.records[-1].kind == "stream"


def test_offline_token_count_is_within_20_percent_of_reported_usage(
    stub_server: StubServer,
) -> None:
    """The stub counts with SmolLM2's BPE vocabulary; cogd with MiniLM's WordPiece."""
    counter = default_counter()
    assert counter.method == "wordpiece"
    model = llm(stub_server, ListRecorder(), [])
    conversations = [
        HELLO,
        [{"role": "user", "content": "I moved to a small flat near the river last spring and "
          "I still miss the garden we had, especially the tomatoes and the old apple tree."}],
        [{"role": "system", "content": "You remember what the user tells you about their life."},
         {"role": "user", "content": "My sister is visiting next week; remind me to clean the "
          "guest room and to buy the coffee she likes."},
         {"role": "assistant", "content": "Noted: clean the guest room and buy coffee."},
         {"role": "user", "content": "Also, she is allergic to cats, so the neighbour's cat "
          "should not come in while she is here."}],
    ]
    for messages in conversations:
        result = model.chat(messages)
        estimate_in = counter.count_messages(messages)
        estimate_out = counter.count(result.text)
        assert abs(estimate_in - result.usage.tokens_in) <= 0.2 * result.usage.tokens_in
        assert abs(estimate_out - result.usage.tokens_out) <= 0.2 * result.usage.tokens_out
