"""Contextual index entries: who said a turn, when, and what a short reply answers."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from agent.config import load_settings
from agent.domain import lexical
from agent.domain.contextual import (
    IndexConfig,
    Said,
    block_text,
    memory_text,
    prose_text,
    speaker_label,
    turn_text,
)

WHEN = datetime(2023, 5, 8, 19, 2, tzinfo=UTC)
CFG = IndexConfig.from_table(load_settings().recall)  # the recipe default.toml gives


def test_a_turn_carries_its_speaker_and_date() -> None:
    said = Said("I got the job at the aquarium in Lisbon!", "user", "Ana", WHEN)
    text = turn_text(said, None, CFG)
    assert text == "(8 May 2023) Ana said: I got the job at the aquarium in Lisbon!"
    assert "ana" in lexical.terms(text)


def test_a_short_reply_quotes_the_turn_it_answers() -> None:
    question = Said("Did you end up adopting the cat from the shelter?", "user", "Ben", WHEN)
    reply = Said("Yes! On Saturday.", "user", "Ana", WHEN)
    text = turn_text(reply, question, CFG)
    assert text.startswith("(8 May 2023) Ana said, replying to Ben (\"Did you end up adopting")
    assert text.endswith(": Yes! On Saturday.")
    assert {"adop", "shel"} <= set(lexical.terms(text))
    long_reply = Said(" ".join(["word"] * 13), "user", "Ana", WHEN)
    assert "replying" not in turn_text(long_reply, question, CFG)  # over reply_max_words
    cfg = replace(CFG, reply_max_words=20, reply_context_words=3)
    assert "(\"Did you end ...\")" in turn_text(long_reply, question, cfg)


def test_a_short_statement_after_a_statement_stands_on_its_own() -> None:
    advice = Said("Dynamic stretches like leg swings and arm circles work well.", "assistant",
                  None, WHEN)
    note = Said("Quick note: I go to kickboxing classes on Tuesdays.", "user", "Sam", WHEN)
    assert "replying" not in turn_text(note, advice, CFG)  # its own words, no question before
    assert "replying" in turn_text(Said("Haha, same.", "user", "Sam", WHEN), advice, CFG)
    asked = Said("How are you finding the Pixel 8?", "user", "Vera", WHEN)
    answer = Said("Love it, the battery lasts two whole days.", "user", "Maya", WHEN)
    assert "the Pixel 8?" in turn_text(answer, asked, CFG)  # an answer needs its question
    cfg = replace(CFG, reply_max_terms=10)
    assert "replying" in turn_text(note, advice, cfg)


def test_speakers_default_to_their_role() -> None:
    assert speaker_label(None, "assistant") == "the assistant"
    assert speaker_label("  ", "user") == "the user"
    assert speaker_label("Ana", "assistant") == "Ana"
    assert turn_text(Said("hello", "assistant"), None, CFG) == "the assistant said: hello"


def test_memories_and_blocks_are_dated() -> None:
    assert memory_text("Ana works in Lisbon", Said("", "user", "Ana", WHEN), CFG) == (
        "(8 May 2023) Ana: Ana works in Lisbon")
    assert memory_text("a fact", None, CFG) == "a fact"
    prose = {"live_zone": "We talked about pottery.", "margins": ["and kilns"], "n": 3}
    assert prose_text(prose) == "We talked about pottery. and kilns"
    assert prose_text('{"a": "json text"}') == "json text"
    assert block_text(prose, WHEN, CFG).startswith("(8 May 2023) We talked about pottery.")


def test_tokens_keep_repeats_and_the_tsvector_counts_them() -> None:
    toks = lexical.tokens("The cat, the cat and the dog's cats")
    assert toks == ["cat", "cat", "dog", "cat"]
    assert lexical.terms("The cat, the cat and the dog's cats") == ["cat", "dog"]
    assert lexical.tsvector_literal(toks) == "'cat':1,2,4 'dog':3"
    assert lexical.tsvector_literal(["it's"]) == "'it''s':1"
    assert lexical.tsvector_literal([]) == ""
