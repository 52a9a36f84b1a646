"""The FlashRank code path, on a tiny random cross-encoder built here (no download).

No cross-encoder ships on PyPI, so the test writes a valid ONNX model (hand-encoded
protobuf: the `onnx` package is not a dependency) and tokenizer files in FlashRank's
layout: <cache_dir>/<model>/<model file>, tokenizer.json, config.json,
tokenizer_config.json, special_tokens_map.json. Its scores are meaningless; the
test checks that the code path runs and keeps FlashRank's order and scores.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.config import load_settings
from agent.providers import factory
from agent.providers.ports import ListRecorder
from agent.providers.rerank import FlashRankReranker

MODEL = "ms-marco-MiniLM-L-12-v2"
WORDS = [
    "tea", "green", "coffee", "black", "user", "prefers", "likes", "morning", "evening", "river",
    "walk", "cat", "dog", "what", "does", "drink", "the", "in", "a",
]


# -- a minimal protobuf writer, enough for an ONNX ModelProto ---------------------------
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _tensor(name: str, array: np.ndarray) -> bytes:
    dtype = {np.dtype("float32"): 1, np.dtype("int64"): 7}[array.dtype]
    dims = b"".join(_int(1, d) for d in array.shape)
    return dims + _int(2, dtype) + _bytes(8, name) + _bytes(9, array.tobytes())


def _value_info(name: str, elem_type: int, dims: list[str | int]) -> bytes:
    shape = b"".join(
        _bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims
    )
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, elem_type) + _bytes(2, shape)))


def _node(op: str, inputs: list[str], outputs: list[str], attrs: bytes = b"") -> bytes:
    body = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    return body + _bytes(4, op) + attrs


def _attr_int(name: str, value: int) -> bytes:
    return _bytes(5, _bytes(1, name) + _int(3, value) + _int(20, 2))  # type INT


def tiny_cross_encoder(word_weights: np.ndarray, type_weights: np.ndarray) -> bytes:
    """logit = sum over real tokens of w[token] + t[token_type]  (shape [batch, 1])."""
    nodes = [
        _node("Gather", ["w", "input_ids"], ["g"]),
        _node("Gather", ["t", "token_type_ids"], ["tt"]),
        _node("Add", ["g", "tt"], ["s"]),
        _node("Cast", ["attention_mask"], ["m"], _attr_int("to", 1)),
        _node("Unsqueeze", ["m", "axis2"], ["m3"]),
        _node("Mul", ["s", "m3"], ["sm"]),
        _node("ReduceSum", ["sm", "axis1"], ["logits"], _attr_int("keepdims", 0)),
    ]
    inits = [
        _tensor("w", word_weights.astype(np.float32)),
        _tensor("t", type_weights.astype(np.float32)),
        _tensor("axis1", np.array([1], dtype=np.int64)),
        _tensor("axis2", np.array([2], dtype=np.int64)),
    ]
    graph = (
        b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "tiny")
        + b"".join(_bytes(5, t) for t in inits)
        + b"".join(_bytes(11, _value_info(n, 7, ["batch", "seq"]))
                   for n in ("input_ids", "attention_mask", "token_type_ids"))
        + _bytes(12, _value_info("logits", 1, ["batch", 1]))
    )
    opset = _bytes(1, "") + _int(2, 13)
    return _int(1, 8) + _bytes(2, "cogd-test") + _bytes(7, graph) + _bytes(8, opset)


def build_cache(cache_dir: Path, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    vocab.update({w: i + 4 for i, w in enumerate(WORDS)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    model_dir = cache_dir / MODEL
    model_dir.mkdir(parents=True)
    tok.save(str(model_dir / "tokenizer.json"))
    (model_dir / "config.json").write_text(json.dumps({"pad_token_id": 0}))
    (model_dir / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": 512, "pad_token": "[PAD]"}))
    (model_dir / "special_tokens_map.json").write_text(json.dumps(
        {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]"}))
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(len(vocab), 1)).astype(np.float32)
    t = rng.normal(size=(2, 1)).astype(np.float32)
    (model_dir / "flashrank-MiniLM-L-12-v2_Q.onnx").write_bytes(tiny_cross_encoder(w, t))
    return w, t


def expected_scores(cache_dir: Path, query: str, passages: list[str], w: np.ndarray,
                    t: np.ndarray) -> list[float]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(cache_dir / MODEL / "tokenizer.json"))
    out = []
    for p in passages:
        e = tok.encode(query, p)
        logit = sum(float(w[i, 0] + t[k, 0]) for i, k in zip(e.ids, e.type_ids, strict=True))
        out.append(1.0 / (1.0 + np.exp(-logit)))
    return out


@pytest.fixture
def cache(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    w, t = build_cache(tmp_path / "flashrank")
    return tmp_path / "flashrank", w, t


PASSAGES = ["the user prefers green tea", "a dog in the river", "black coffee in the morning",
            "cat walk evening", "what does the user drink"]


def test_factory_enables_flashrank_when_the_model_is_in_cache_dir(
    cache: tuple[Path, np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    cache_dir, w, t = cache
    settings = load_settings(data_dir=tmp_path)
    settings.reranker.cache_dir = str(cache_dir)
    assert factory.reranker_status(settings) == (
        f"enabled: flashrank {MODEL} from {cache_dir / MODEL}"
    )
    rec = ListRecorder()
    reranker = factory.build_reranker(settings, rec)
    assert isinstance(reranker, FlashRankReranker) and reranker.enabled
    query = "what does the user drink in the morning"
    ranked = reranker.rerank(query, PASSAGES, scores=[0.0] * len(PASSAGES))
    want = expected_scores(cache_dir, query, PASSAGES, w, t)
    assert sorted(r.index for r in ranked) == list(range(len(PASSAGES)))
    assert [r.index for r in ranked] == sorted(range(len(want)), key=lambda i: -want[i])
    for r in ranked:
        assert r.score == pytest.approx(want[r.index], abs=1e-5)
    (record,) = rec.records
    assert record.kind == "rerank" and record.provider == "flashrank" and record.ok


def test_same_order_and_scores_as_flashrank_itself(
    cache: tuple[Path, np.ndarray, np.ndarray],
) -> None:
    from flashrank import Ranker, RerankRequest

    cache_dir, _, _ = cache
    query = "green tea or coffee"
    direct = Ranker(model_name=MODEL, cache_dir=str(cache_dir), log_level="WARNING").rerank(
        RerankRequest(query=query, passages=[{"id": i, "text": p} for i, p in enumerate(PASSAGES)])
    )
    ours = FlashRankReranker(MODEL, cache_dir).rerank(query, PASSAGES)
    assert [r.index for r in ours] == [d["id"] for d in direct]
    assert [r.score for r in ours] == pytest.approx([float(d["score"]) for d in direct])
    assert FlashRankReranker(MODEL, cache_dir).rerank(query, []) == []


def test_missing_model_never_downloads(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="never downloads"):
        FlashRankReranker(MODEL, tmp_path / "empty")
    assert not (tmp_path / "empty").exists()


def test_protobuf_varints_follow_the_wire_format() -> None:
    assert _varint(300) == b"\xac\x02" and _varint(1) == b"\x01" and _varint(0) == b"\x00"
