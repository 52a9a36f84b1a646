"""The offline models load and run with the network unavailable.

Each check runs in a subprocess under `unshare -n` (no network namespace: nothing
but loopback) when that works here, and always with HF_HUB_OFFLINE /
TRANSFORMERS_OFFLINE set and every proxy variable pointed at a dead port.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.providers.local import LocalEmbedder
from agent.providers.ports import ListRecorder

REPO = Path(__file__).resolve().parents[2]
DEAD = "http://127.0.0.1:9"


@functools.cache
def _unshare() -> list[str]:
    if shutil.which("unshare") is None:
        return []
    ok = subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    return ["unshare", "-n"] if ok else []


def run_offline(code: str) -> dict[str, Any]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(REPO), "NO_PROXY": "", "no_proxy": ""}
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[var] = env[var.lower()] = DEAD
    prelude = textwrap.dedent("""
        import json, socket
        def network_up():
            try:
                socket.create_connection(("pypi.org", 443), timeout=3).close()
                return True
            except OSError:
                return False
    """)
    proc = subprocess.run(
        [*_unshare(), sys.executable, "-W", "error", "-c", prelude + textwrap.dedent(code)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    if _unshare():
        assert out["network_up"] is False  # the sandbox really had no network
    return out


def test_local_embedder_offline_ranks_a_paraphrase_above_an_unrelated_sentence() -> None:
    out = run_offline("""
        import numpy as np
        from agent.providers.local import LocalEmbedder
        emb = LocalEmbedder()
        v = emb.embed_documents(["The cat sat on the mat.", "A cat was sitting on the rug.",
                                 "Quarterly revenue rose by eight percent."])
        q = emb.embed_query("Where is the cat sitting?")
        print(json.dumps({"network_up": network_up(), "model_id": emb.model_id, "dim": emb.dim,
                          "shape": list(v.shape), "norms": np.linalg.norm(v, axis=1).tolist(),
                          "para": float(v[0] @ v[1]), "unrelated": float(v[0] @ v[2]),
                          "q_cat": float(q @ v[0]), "q_rev": float(q @ v[2])}))
    """)
    assert out["model_id"] == "local:all-MiniLM-L6-v2-int8" and out["dim"] == 384
    assert out["shape"] == [3, 384]
    assert np.allclose(out["norms"], 1.0, atol=1e-5)
    assert out["para"] > out["unrelated"] + 0.3
    assert out["q_cat"] > out["q_rev"]


def test_local_llm_offline_generates_text_with_logprobs() -> None:
    out = run_offline("""
        from agent.providers.local import LocalLLM
        from agent.providers.ports import ListRecorder
        rec = ListRecorder()
        llm = LocalLLM(recorder=rec, role="system1")
        msgs = [{"role": "user", "content": "Name a colour of the sky."}]
        r = llm.chat(msgs, temperature=0.0, max_tokens=16, want_logprobs=True)
        chunks = list(llm.stream(msgs, temperature=0.0, max_tokens=8))
        again = llm.chat(msgs, temperature=0.0, max_tokens=16, want_logprobs=True)
        print(json.dumps({"network_up": network_up(), "text": r.text,
                          "logprobs": [lp.logprob for lp in r.logprobs or []],
                          "tokens": [lp.token for lp in r.logprobs or []],
                          "usage": [r.usage.tokens_in, r.usage.tokens_out],
                          "chunks": chunks, "fallback": r.fallback,
                          "kinds": [x.kind for x in rec.records],
                          "count": llm.count_tokens("Name a colour of the sky."),
                          "again": [again.text, [lp.logprob for lp in again.logprobs or []]]}))
    """)
    assert out["text"].strip() and out["fallback"] is False
    assert 0 < len(out["logprobs"]) <= 16 and all(lp <= 0.0 for lp in out["logprobs"])
    assert "".join(out["tokens"]).strip() == out["text"].strip()
    assert out["usage"][0] > 0 and out["usage"][1] == len(out["logprobs"])
    # the stream (8 tokens) is the start of the same greedy answer
    assert "".join(out["chunks"]).strip() and out["text"].startswith("".join(out["chunks"]))
    assert out["kinds"] == ["chat", "stream", "chat"] and out["count"] > 3
    assert out["again"] == [out["text"], out["logprobs"]]  # seeded: the same answer again


def test_local_llm_counts_tokens_as_llama_cpp_does() -> None:
    """The vendored tokenizer gives the server's own prompt count (the template adds its
    framing: the same, for any text, between the two prompts below)."""
    from agent.providers.local import LocalLLM

    llm = LocalLLM()
    server = llm.load()
    texts = ["Hello world", "naïve café — 日本語 🚀 3.14159", "word " * 300]
    framing = set()
    for text in texts:
        usage = server.handle_chat_completions(
            {"messages": [{"role": "user", "content": text}], "max_tokens": 1})["usage"]
        framing.add(usage["prompt_tokens"] - llm.count_tokens(text))
    assert len(framing) == 1 and 0 < framing.pop() < 40


def test_int8_embeddings_match_the_fp32_model() -> None:
    """int8 ONNX vs the fp32 model's vectors, committed in tests/data (made once by
    tests/data/make_fp32_reference.py with sentence-transformers and torch, which neither CI
    nor this test needs)."""
    ref = json.loads((REPO / "tests/data/minilm_fp32_reference.json").read_text())
    fp32 = np.asarray(ref["vectors"], dtype=np.float64)
    assert fp32.shape == (len(ref["texts"]), 384)
    assert np.allclose(np.linalg.norm(fp32, axis=1), 1.0, atol=1e-5)
    ours = LocalEmbedder().embed_documents(ref["texts"])
    cos = (fp32 * ours).sum(axis=1).tolist()
    sentences, words = cos[:4], cos[4:]
    assert min(sentences) >= 0.999, cos
    # one-word inputs quantise worse (measured 0.996 for "ok"): a weaker, honest bound
    assert min(words) >= 0.99, cos


def test_batching_padding_and_order_do_not_change_vectors() -> None:
    rec = ListRecorder()
    emb = LocalEmbedder(batch_size=4, recorder=rec)
    texts = [f"sentence {i} " + "word " * (i * 7 % 23) for i in range(10)]
    batched = emb.embed_documents(texts)
    single = np.vstack([emb.embed_documents([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)
    assert [r.kind for r in rec.records[:3]] == ["embed"] * 3  # 10 texts, batches of 4
    assert all(r.provider == "local" and r.tokens_in > 0 for r in rec.records)


def test_a_query_runs_on_its_own_two_thread_session_that_never_spins_with_the_same_vector(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """[embedding] local_query_threads / local_query_spin: a search query runs on a session
    with that many intra-op threads, which never spin (spin only within a run with
    local_query_spin = true); documents (one turn or a batch) keep onnxruntime's default
    thread count and spin within a run. All give the same vector."""
    from agent.config import load_settings
    from agent.providers import factory

    emb = factory.build_universal_embedder(load_settings(data_dir=tmp_path))
    assert isinstance(emb, LocalEmbedder) and emb.query_threads == 2
    used: list[Any] = []
    run = emb._run
    emb._run = lambda session, texts: used.append(session) or run(session, texts)  # type: ignore[method-assign]
    text = "where does my sister live?"
    query, document = emb.embed_query(text), emb.embed_documents([text])[0]
    np.testing.assert_allclose(query, document, atol=1e-5)
    assert used == [emb._query, emb._session] and emb._query is not emb._session
    q_opts, d_opts = emb._query.get_session_options(), emb._session.get_session_options()
    assert q_opts.intra_op_num_threads == 2
    assert q_opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert d_opts.intra_op_num_threads == 0  # the default
    assert d_opts.get_session_config_entry("session.force_spinning_stop") == "1"
    monkeypatch.setenv("COGD_EMBEDDING__LOCAL_QUERY_SPIN", "true")
    spinning = factory.build_universal_embedder(load_settings(data_dir=tmp_path))
    assert isinstance(spinning, LocalEmbedder)
    np.testing.assert_allclose(spinning.embed_query(text), query, atol=1e-5)
    s_opts = spinning._query.get_session_options()
    assert s_opts.intra_op_num_threads == 2
    assert s_opts.get_session_config_entry("session.force_spinning_stop") == "1"
    shared = LocalEmbedder(query_threads=None)  # 0 in config: one session for all
    np.testing.assert_allclose(shared.embed_query(text), query, atol=1e-5)
    assert shared._query is shared._session


def test_memory_type_prefix_changes_the_vector_and_bad_input_is_handled() -> None:
    emb = LocalEmbedder()
    plain = emb.embed_documents(["I like tea"])[0]
    prefixed = emb.embed_documents(["I like tea"], memory_type="preference")[0]
    assert 0.5 < float(plain @ prefixed) < 0.9999
    huge = emb.embed_documents(["tea " * 250_000])  # 1 MB: truncated to max_chars
    assert huge.shape == (1, 384)
    assert emb.embed_documents(["tea\x00 time"])[0] @ emb.embed_documents(["tea time"])[0] > 0.999
    assert emb.embed_documents([]).shape == (0, 384)
    from agent.errors import InputError

    with pytest.raises(InputError, match="empty"):
        emb.embed_documents(["ok", "\x00"])
    with pytest.raises(InputError, match="list of texts"):
        emb.embed_documents("not a list")
