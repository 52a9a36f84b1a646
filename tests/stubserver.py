"""A stub of the OpenAI and Gemini HTTP APIs on 127.0.0.1, for the real SDKs to talk to.

Scriptable faults, one per request in order (`fail_next`: an HTTP error or a dropped
connection, with Retry-After; `delay_next`: an answer that comes too late, so the
client times out; `malformed_next`: a 200 whose body is not JSON), scripted chat
answers (`queue_replies`: malformed, fenced or truncated JSON, prose), recorded
requests (headers and JSON bodies), and usage computed by a real tokenizer
(SmolLM2's BPE vocabulary, loaded vocab-only), so that cogd's offline token counter
can be checked against it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

EMBED_DIM = 8
MESSAGE_OVERHEAD = 4  # OpenAI's documented per-message framing


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    status: int  # 0 = drop the connection without an answer; 200 = answer (after delay_s)
    retry_after: str | None = None
    delay_s: float = 0.0  # wait this long before answering (the client's timeout fires first)
    body: str | None = None  # sent verbatim as the response body (malformed JSON)


@dataclass
class StubState:
    requests: list[Recorded] = field(default_factory=list)
    faults: deque[Fault] = field(default_factory=deque)
    replies: deque[str] = field(default_factory=deque)
    reply: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Tokenizer:
    """SmolLM2's BPE vocabulary: a real tokenizer, unlike cogd's WordPiece."""

    def count(self, text: str) -> int:
        from agent.providers.local import smollm2_tokenizer

        text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate
        return len(smollm2_tokenizer().encode(text, add_special_tokens=False).ids)

    def close(self) -> None:
        pass


def stub_vector(text: str, dim: int = EMBED_DIM, task: str = "") -> list[float]:
    """Deterministic, deliberately not unit-length (cogd must normalise)."""
    seed = int.from_bytes(hashlib.sha256(f"{task}|{text}".encode()).digest()[:8], "little")
    return (np.random.default_rng(seed).normal(size=dim) * 3.0).astype(np.float32).tolist()


class StubServer:
    def __init__(self) -> None:
        self.state = StubState()
        self.tokenizer = _Tokenizer()
        self.stopping = threading.Event()  # wakes delayed handlers when the stub stops
        handler = type("Handler", (_Handler,), {"stub": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[Recorded]:
        with self.state.lock:
            return list(self.state.requests)

    def start(self) -> StubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self.tokenizer.close()

    def reset(self) -> None:
        with self.state.lock:
            self.state.requests.clear()
            self.state.faults.clear()
            self.state.replies.clear()
            self.state.reply = None

    def fail_next(self, n: int, status: int, retry_after: str | None = None) -> None:
        """The next n requests get `status` (0: the connection is dropped)."""
        with self.state.lock:
            self.state.faults.extend(Fault(status, retry_after) for _ in range(n))

    def delay_next(self, n: int, seconds: float, status: int = 200) -> None:
        """The next n requests are answered only after `seconds` (then normally, or `status`)."""
        with self.state.lock:
            self.state.faults.extend(Fault(status, delay_s=seconds) for _ in range(n))

    def malformed_next(self, n: int, body: str = '{"id": "chatcmpl-stub", "choices": [{"ind',
                       status: int = 200) -> None:
        """The next n requests get `status` with `body` verbatim (by default truncated JSON)."""
        with self.state.lock:
            self.state.faults.extend(Fault(status, body=body) for _ in range(n))

    def queue_replies(self, *texts: str) -> None:
        """The content of the next chat answers, one each, before `set_reply`'s or the default."""
        with self.state.lock:
            self.state.replies.extend(texts)

    def pending(self) -> tuple[int, int]:
        """(faults, scripted replies) not used yet."""
        with self.state.lock:
            return len(self.state.faults), len(self.state.replies)

    def count(self, path: str | None = None) -> int:
        """Requests received (to `path`, when given), faulted ones included."""
        with self.state.lock:
            return sum(1 for r in self.state.requests if path is None or r.path == path)

    def route(self, settings: Any, monkeypatch: pytest.MonkeyPatch, *roles: str,
              retries: int | None = 0) -> None:
        """Route `roles` to this server through an openai profile named "stub" (a fake key
        in OPENAI_API_KEY); `retries`: retry.max_retries (None: leave it)."""
        from agent.config import LLMProfile

        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
        settings.llm.profiles["stub"] = LLMProfile(
            provider="openai", model="stub-chat", base_url=self.openai_base_url,
            api_key_env="OPENAI_API_KEY", timeout_s=10)
        for role in roles:
            settings.llm.roles[role] = "stub"
        if retries is not None:
            settings.retry.max_retries = retries

    def set_reply(self, text: str | None) -> None:
        with self.state.lock:
            self.state.reply = text

    def reply_for(self, prompt: str) -> str:
        with self.state.lock:
            if self.state.replies:
                return self.state.replies.popleft()
            if self.state.reply is not None:
                return self.state.reply
        words = prompt.split()[-6:]
        return "The stub heard you say " + " ".join(words) + ". That is all it knows."


class _Handler(BaseHTTPRequestHandler):
    stub: StubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return

    # -- plumbing ---------------------------------------------------------------
    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        rec = Recorded(
            method, parts.path, parse_qs(parts.query),
            {k.lower(): v for k, v in self.headers.items()}, body,
        )
        with self.stub.state.lock:
            self.stub.state.requests.append(rec)
            fault = self.stub.state.faults.popleft() if self.stub.state.faults else None
        try:
            # a delayed answer; none at all when the stub stops meanwhile
            if fault is not None and fault.delay_s and self.stub.stopping.wait(fault.delay_s):
                self.close_connection = True
                return
            if fault is not None and not (fault.status == 200 and fault.body is None):
                self._fault(fault, parts.path)
                return
            try:
                self._route(method, parts.path, parts.query, body)
            except (BrokenPipeError, ConnectionResetError):
                raise
            except Exception as exc:  # a bug in the stub shows up as a 500 the test can read
                self._json(500, {"error": {"message": f"stub error: {exc!r}", "code": 500}})
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
            self.close_connection = True

    def _fault(self, fault: Fault, path: str) -> None:
        if fault.status == 0:
            self.close_connection = True
            self.connection.close()
            return
        if fault.body is not None:
            data = fault.body.encode()
            self.send_response(fault.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        headers = {"retry-after": fault.retry_after} if fault.retry_after else {}
        status_name = {401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT",
                       403: "PERMISSION_DENIED"}.get(fault.status, "INTERNAL")
        payload = {"error": {"message": f"stub fault {fault.status}", "code": fault.status,
                             "status": status_name, "type": "stub"}}
        self._json(fault.status, payload, headers)

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: Iterator[str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for event in events:
            self.wfile.write(f"data: {event}\n\n".encode())
            self.wfile.flush()

    def _route(self, method: str, path: str, query: str, body: Any) -> None:
        if path == "/v1/models" and method == "GET":
            self._json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "stub"}
                for m in ("stub-chat", "stub-embed")]})
        elif path == "/v1/chat/completions":
            self._openai_chat(body)
        elif path == "/v1/embeddings":
            self._openai_embed(body)
        elif path.startswith("/v1beta/models") and method == "GET":
            self._json(200, {"models": [{"name": "models/gemini-stub", "displayName": "stub"}]})
        elif path.startswith("/v1beta/models/") and ":" in path:
            model, action = path[len("/v1beta/models/"):].rsplit(":", 1)
            self._gemini(model, action, body)
        else:
            self._json(404, {"error": {"message": f"no route {method} {path}", "code": 404}})

    # -- OpenAI ------------------------------------------------------------------
    def _openai_chat(self, body: dict[str, Any]) -> None:
        messages = body["messages"]
        prompt = messages[-1]["content"] if messages else ""
        text = self.stub.reply_for(prompt)
        count = self.stub.tokenizer.count
        tokens_in = sum(count(m["content"]) + MESSAGE_OVERHEAD for m in messages)
        pieces = [w + " " for w in text.split(" ")[:-1]] + [text.split(" ")[-1]]
        usage = {"prompt_tokens": tokens_in, "completion_tokens": count(text),
                 "total_tokens": tokens_in + count(text)}
        base = {"id": "chatcmpl-stub", "created": int(time.time()), "model": body["model"]}
        if body.get("stream"):
            def events() -> Iterator[str]:
                for piece in pieces:
                    yield json.dumps({**base, "object": "chat.completion.chunk", "choices": [
                        {"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
                yield json.dumps({**base, "object": "chat.completion.chunk", "choices": [
                    {"index": 0, "delta": {}, "finish_reason": "stop"}]})
                if (body.get("stream_options") or {}).get("include_usage"):
                    yield json.dumps({**base, "object": "chat.completion.chunk", "choices": [],
                                      "usage": usage})
                yield "[DONE]"
            self._sse(events())
            return
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": [
                {"token": p, "logprob": -0.1 * (i + 1), "bytes": list(p.encode("utf-8", "replace")),
                 "top_logprobs": []} for i, p in enumerate(pieces)]}
        self._json(200, {**base, "object": "chat.completion", "choices": [choice],
                         "usage": usage})

    def _openai_embed(self, body: dict[str, Any]) -> None:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dim = int(body.get("dimensions") or EMBED_DIM)
        data = []
        for i, text in enumerate(inputs):
            vec = stub_vector(text, dim)
            if body.get("encoding_format") == "base64":
                emb: Any = base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode()
            else:
                emb = vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(self.stub.tokenizer.count(t) for t in inputs)
        self._json(200, {"object": "list", "data": data, "model": body["model"],
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    # -- Gemini ------------------------------------------------------------------
    def _gemini(self, model: str, action: str, body: dict[str, Any]) -> None:
        if action in ("generateContent", "streamGenerateContent"):
            self._gemini_generate(model, action == "streamGenerateContent", body)
        elif action == "batchEmbedContents":
            self._json(200, {"embeddings": [self._gemini_vec(r) for r in body["requests"]]})
        elif action == "embedContent":
            self._json(200, {"embedding": self._gemini_vec(body)})
        else:
            self._json(404, {"error": {"message": f"no action {action}", "code": 404}})

    def _gemini_vec(self, request: dict[str, Any]) -> dict[str, Any]:
        text = " ".join(p.get("text", "") for p in request["content"]["parts"])
        dim = int(request.get("outputDimensionality") or EMBED_DIM)
        return {"values": stub_vector(text, dim, request.get("taskType", ""))}

    def _gemini_generate(self, model: str, stream: bool, body: dict[str, Any]) -> None:
        contents = body.get("contents") or []
        texts = [p.get("text", "") for c in contents for p in c.get("parts", [])]
        system = " ".join(
            p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", [])
        )
        text = self.stub.reply_for(texts[-1] if texts else "")
        count = self.stub.tokenizer.count
        tokens_in = sum(count(t) for t in [*texts, system] if t)
        usage = {"promptTokenCount": tokens_in, "candidatesTokenCount": count(text),
                 "totalTokenCount": tokens_in + count(text)}
        pieces = [w + " " for w in text.split(" ")[:-1]] + [text.split(" ")[-1]]
        config = body.get("generationConfig") or {}

        def response(part: str, last: bool) -> dict[str, Any]:
            cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": part}]},
                                    "index": 0}
            if last:
                cand["finishReason"] = "STOP"
            if config.get("responseLogprobs"):
                cand["logprobsResult"] = {"chosenCandidates": [
                    {"token": p, "logProbability": -0.1 * (i + 1)}
                    for i, p in enumerate(pieces)], "topCandidates": []}
            out: dict[str, Any] = {"candidates": [cand], "modelVersion": model}
            if last:
                out["usageMetadata"] = usage
            return out

        if stream:
            self._sse(json.dumps(response(p, i == len(pieces) - 1))
                      for i, p in enumerate(pieces))
        else:
            self._json(200, response(text, True))


@pytest.fixture(name="stub_server")
def stub_server_fixture() -> Iterator[StubServer]:
    """A running stub of the OpenAI and Gemini APIs; stopped after the test."""
    server = StubServer().start()
    try:
        yield server
    finally:
        server.stop()


# the name conftest.py imports; test modules import stub_server_fixture (no F811 shadowing)
stub_server = stub_server_fixture
