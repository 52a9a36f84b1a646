"""The real `google-genai` SDK against the stub server (Gemini Developer API, v1beta)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.providers.gemini import GeminiEmbedder, GeminiLLM, list_models
from agent.providers.ports import Endpoint, ListRecorder
from agent.providers.retry import ProviderCallError, RetryPolicy
from tests.stubserver import StubServer, stub_server_fixture, stub_vector  # noqa: F401

KEY = "AIza-test-not-real"
CHAT = [{"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello there"},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "Where is my umbrella?"}]


def endpoint(stub: StubServer) -> Endpoint:
    return Endpoint("gemini", KEY, stub.url, "GEMINI_API_KEY", timeout_s=10)


def llm(stub: StubServer, rec: ListRecorder, sleeps: list[float]) -> GeminiLLM:
    return GeminiLLM(endpoint(stub), "gemini-stub", temperature=0.3, max_tokens=48,
                     recorder=rec, role="system2", sleep=sleeps.append,
                     policy=RetryPolicy(jitter=0.0))


def test_generate_content_maps_roles_and_returns_logprobs(stub_server: StubServer) -> None:
    rec = ListRecorder()
    result = llm(stub_server, rec, []).chat(CHAT, want_logprobs=True)
    assert result.text == "The stub heard you say Where is my umbrella?. That is all it knows."
    assert result.logprobs and result.logprobs[2].logprob == pytest.approx(-0.3)
    assert result.finish_reason == "STOP"
    req = stub_server.requests[-1]
    assert req.path == "/v1beta/models/gemini-stub:generateContent"
    assert req.headers["x-goog-api-key"] == KEY and "authorization" not in req.headers
    assert req.body["systemInstruction"]["parts"][0]["text"] == "Be brief."
    assert [c["role"] for c in req.body["contents"]] == ["user", "model", "user"]
    config = req.body["generationConfig"]
    assert config["maxOutputTokens"] == 48 and config["responseLogprobs"] is True
    (r,) = rec.records
    assert (r.provider, r.role, r.kind, r.ok) == ("gemini", "system2", "chat", True)
    assert r.tokens_in == result.usage.tokens_in > 0 and r.tokens_out > 0


def test_stream_uses_sse(stub_server: StubServer) -> None:
    rec = ListRecorder()
    chunks = list(llm(stub_server, rec, []).stream(CHAT))
    assert len(chunks) > 3 and "".join(chunks).endswith("That is all it knows.")
    req = stub_server.requests[-1]
    assert req.path.endswith(":streamGenerateContent") and req.query == {"alt": ["sse"]}
    assert rec.records[-1].kind == "stream" and rec.records[-1].tokens_out > 0


def test_embeddings_are_asymmetric_by_task_type(stub_server: StubServer) -> None:
    rec = ListRecorder()
    emb = GeminiEmbedder(endpoint(stub_server), "text-embedding-004", 8, recorder=rec)
    docs = emb.embed_documents(["my umbrella is blue"], memory_type="fact")
    query = emb.embed_query("my umbrella is blue")
    clusters = emb.embed_texts(["a", "b"], task="clustering")
    tasks = [r.body["requests"][0]["taskType"] for r in stub_server.requests]
    assert tasks == ["RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY", "CLUSTERING"]
    first = stub_server.requests[0].body["requests"][0]
    assert first["content"]["parts"][0]["text"] == "Factual knowledge: my umbrella is blue"
    assert first["outputDimensionality"] == 8
    assert stub_server.requests[0].path == "/v1beta/models/text-embedding-004:batchEmbedContents"
    raw = np.array(stub_vector("my umbrella is blue", 8, "RETRIEVAL_QUERY"), dtype=np.float32)
    np.testing.assert_allclose(query, raw / np.linalg.norm(raw), rtol=1e-5)
    assert docs.shape == (1, 8) and clusters.shape == (2, 8)
    assert emb.model_id == "gemini:text-embedding-004"
    assert [r.kind for r in rec.records] == ["embed"] * 3


def test_models_list(stub_server: StubServer) -> None:
    assert list_models(endpoint(stub_server)) == ["models/gemini-stub"]
    assert stub_server.requests[-1].headers["x-goog-api-key"] == KEY


def test_429_then_success_honours_retry_after(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(1, 429, retry_after="2")
    result = llm(stub_server, rec, sleeps).chat(CHAT)
    assert result.attempts == 2 and sleeps == [2.0] and len(stub_server.requests) == 2
    assert rec.records[-1].attempts == 2


def test_500_then_success(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(2, 500)
    assert llm(stub_server, rec, sleeps).chat(CHAT).attempts == 3
    assert sleeps == [1.0, 2.0] and len(stub_server.requests) == 3


def test_dropped_connection_on_stream_then_success(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(1, 0)
    assert "".join(llm(stub_server, rec, sleeps).stream(CHAT))
    assert rec.records[-1].attempts == 2


def test_401_fails_fast(stub_server: StubServer) -> None:
    rec, sleeps = ListRecorder(), []
    stub_server.fail_next(1, 401)
    emb = GeminiEmbedder(endpoint(stub_server), "text-embedding-004", 8, recorder=rec,
                         sleep=sleeps.append)
    with pytest.raises(ProviderCallError, match="gemini: HTTP 401: check GEMINI_API_KEY"):
        emb.embed_query("x")
    assert sleeps == [] and len(stub_server.requests) == 1
    (r,) = rec.records
    assert not r.ok and r.attempts == 1 and r.kind == "embed" and KEY not in (r.error or "")
