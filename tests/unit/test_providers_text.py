"""Bad input, memory-type prefixes, the heuristic fallback and the disabled reranker."""

from __future__ import annotations

import logging

import pytest

from agent.errors import InputError
from agent.providers.heuristic import FALLBACK_PREFIX, HeuristicLLM, extract
from agent.providers.ports import CallRecorder, ListRecorder, NullRecorder
from agent.providers.rerank import DisabledReranker
from agent.providers.text import (
    MEMORY_TYPE_PREFIXES,
    TokenCounter,
    clean_messages,
    clean_text,
    with_prefix,
)


def test_empty_and_whitespace_are_refused() -> None:
    for bad in ("", "   \n\t", "\x00\x00", b"", b"\x00 "):
        with pytest.raises(InputError, match="empty"):
            clean_text(bad)


def test_nul_bytes_are_stripped_and_invalid_utf8_replaced() -> None:
    assert clean_text("a\x00b") == "ab"
    assert clean_text(b"caf\xe9 ok") == "caf\ufffd ok"
    # argv decoded with surrogateescape carries lone surrogates: they become U+FFFD
    assert clean_text("x\udce9y") == "x\ufffdy"


def test_long_text_is_truncated_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    big = "word " * 200_000  # 1 MB
    with caplog.at_level(logging.WARNING, logger="agent.providers.text"):
        out = clean_text(big, max_chars=8000, what="text to embed")
    assert len(out) == 8000
    assert "truncated to 8000" in caplog.text


def test_memory_type_prefixes() -> None:
    assert with_prefix("likes tea", "preference") == "User preference: likes tea"
    assert with_prefix("x", "episodic").startswith("Personal experience memory: ")
    assert with_prefix("x", "fact").startswith("Factual knowledge: ")
    assert with_prefix("x", "instruction").startswith("How-to instruction: ")
    assert with_prefix("x", "reflection").startswith("Self-reflection insight: ")
    assert with_prefix("x", None) == "x"
    with pytest.raises(InputError, match="unknown memory_type 'gossip'"):
        with_prefix("x", "gossip")
    assert set(MEMORY_TYPE_PREFIXES) >= {"episodic", "preference", "fact", "insight"}


def test_clean_messages_drops_empty_and_refuses_all_empty() -> None:
    assert clean_messages([{"role": "user", "content": "hi\x00"}, {"role": "user", "content": ""}]
                          ) == [{"role": "user", "content": "hi"}]
    with pytest.raises(InputError, match="empty prompt"):
        clean_messages([{"role": "user", "content": " "}])


def test_chars_per_token_estimate_without_a_tokenizer() -> None:
    counter = TokenCounter(None)
    assert counter.method == "chars/4"
    assert counter.count("a" * 400) == 100
    assert counter.count("") == 0


def test_extract_picks_relevant_sentences_in_order() -> None:
    context = (
        "The user lives in Lyon. The weather was rainy on Tuesday. "
        "The user's cat is called Miso. Miso likes tuna."
    )
    assert extract("What is my cat called?", context) == "The user's cat is called Miso."
    assert extract("", context) == ""


def test_heuristic_says_it_is_a_fallback_everywhere() -> None:
    rec = ListRecorder()
    llm = HeuristicLLM(recorder=rec, role="system2")
    messages = [
        {"role": "system", "content": "Answer about tea briefly.\n- the user prefers green "
                                      "tea.\n- The sky is blue."},
        {"role": "user", "content": "Which tea does the user prefer?"},
    ]
    result = llm.chat(messages)
    assert result.fallback is True
    assert result.text == FALLBACK_PREFIX + "the user prefers green tea."
    assert result.logprobs is None and result.usage.tokens_in > 0
    streamed = "".join(llm.stream(messages))
    assert streamed == result.text
    none = llm.chat([{"role": "user", "content": "Quantum chromodynamics?"}])
    assert none.text.startswith(FALLBACK_PREFIX) and "nothing in the context" in none.text
    assert [r.kind for r in rec.records] == ["chat", "stream", "chat"]
    assert all(r.provider == "heuristic" and r.role == "system2" and r.ok for r in rec.records)


def test_heuristic_is_deterministic_and_bounded_on_huge_input() -> None:
    llm = HeuristicLLM(max_tokens=32)
    context = "\n".join(f"- Sentence number {i} talks about topic{i % 50}."
                        for i in range(20_000))
    messages = [{"role": "system", "content": context},
                {"role": "user", "content": "tell me about topic7"}]
    a, b = llm.chat(messages), llm.chat(messages)
    assert a.text == b.text and "topic7" in a.text
    assert len(a.text) <= len(FALLBACK_PREFIX) + 32 * 4


def test_disabled_reranker_passes_scores_through() -> None:
    r = DisabledReranker("disabled: because")
    assert r.enabled is False and r.status == "disabled: because"
    ranked = r.rerank("q", ["a", "b", "c"], [0.2, 0.9, 0.2])
    assert [(x.index, x.score) for x in ranked] == [(1, 0.9), (0, 0.2), (2, 0.2)]
    assert [x.index for x in r.rerank("q", ["a", "b"])] == [0, 1]


def test_recorders_satisfy_the_port() -> None:
    assert isinstance(NullRecorder(), CallRecorder)
    assert isinstance(ListRecorder(), CallRecorder)


def test_heuristic_answers_from_the_material_never_from_the_instructions() -> None:
    """It used to quote the system prompt back ("cite it with its tag, e.g.") and to turn
    the consolidation prompt into an insight ("You consolidate memories. Write ONE...")."""
    from agent.domain.consolidation import insight_prompt
    from agent.domain.prompt import PromptParts, RecalledLine, build_messages

    llm = HeuristicLLM()
    chat = build_messages(PromptParts(
        identity="", recalled=[RecalledLine("memory:42", "memory",
                                            "My gym locker code is 4512.", "strong_match")],
        history=[("user", "I moved to Porto last spring.")],
        user_message="Which memory tag do you cite for my gym locker code?"))
    text = llm.chat(chat).text
    assert text == FALLBACK_PREFIX + "[memory:42] My gym locker code is 4512."
    merge = insight_prompt(["Our servers are hosted on Hetzner.",
                            "We rent two Hetzner machines in Falkenstein."])
    text = llm.chat(merge).text
    assert "consolidate" not in text.lower() and "insight" not in text.lower()
    assert "nothing in the context matches" in text  # no question: no insight to give
