"""parse_llm_json: direct, fenced, boundary, and failure without an exception (seed 000 §10.6)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.domain.llm_json import (
    MAX_INPUT_CHARS,
    ParseResult,
    parse_llm_json,
    parse_yes_no,
)


def test_direct_object_and_array() -> None:
    r = parse_llm_json('  {"contradicts": true, "reason": "Lisbon is not Madrid"}\n')
    assert r == ParseResult({"contradicts": True, "reason": "Lisbon is not Madrid"}, "direct")
    assert r.ok and r.error is None
    assert parse_llm_json("[1, 2, 3]", expect=list) == ParseResult([1, 2, 3], "direct")
    assert parse_llm_json('\ufeff{"a": 1}').value == {"a": 1}  # a byte-order mark is ignored


def test_raw_newlines_inside_strings_are_accepted() -> None:
    r = parse_llm_json('{"reason": "line one\nline two", "contradicts": false}')
    assert r.strategy == "direct" and r.value["reason"] == "line one\nline two"


def test_fenced_block_with_and_without_language_tag() -> None:
    text = 'Sure! Here is the answer:\n```json\n{"contradicts": false, "reason": "same city"}\n```'
    r = parse_llm_json(text, expect=dict)
    assert r.strategy == "fenced" and r.value == {"contradicts": False, "reason": "same city"}
    r = parse_llm_json("```\n[\"a\", \"b\"]\n```\nthat's it", expect=list)
    assert r.strategy == "fenced" and r.value == ["a", "b"]


def test_fenced_skips_blocks_that_are_not_the_expected_json() -> None:
    text = ("```python\nprint('hi')\n```\nand\n```json\n[1]\n```\nthen\n"
            "```json\n{\"contradicts\": true}\n```")
    r = parse_llm_json(text, expect=dict)
    assert r.strategy == "fenced" and r.value == {"contradicts": True}


def test_an_unclosed_fence_still_parses_when_the_json_in_it_is_whole() -> None:
    r = parse_llm_json('```json\n{"contradicts": true}\n', expect=dict)
    assert r.ok and r.value == {"contradicts": True}


def test_boundary_detection_in_prose() -> None:
    text = 'I think {maybe} the answer is {"contradicts": true, "reason": "x"} — hope it helps.'
    r = parse_llm_json(text, expect=dict)
    assert r.strategy == "boundary" and r.value == {"contradicts": True, "reason": "x"}
    r = parse_llm_json("The ids are [3, 4] and that is all.", expect=list)
    assert r.strategy == "boundary" and r.value == [3, 4]


def test_boundary_does_not_pick_an_array_out_of_an_object() -> None:
    text = 'result: {"items": [1, 2]} done'
    assert parse_llm_json(text, expect=dict).value == {"items": [1, 2]}
    r = parse_llm_json(text, expect=list)
    assert not r.ok and r.value is None


def test_nested_braces_inside_strings() -> None:
    inner = '{"reason": "she said \\"}{ ]\\" twice {not json}", "contradicts": false}'
    for text in (inner, f"answer: {inner} end", f"```json\n{inner}\n```"):
        r = parse_llm_json(text, expect=dict)
        assert r.ok, text
        assert r.value == {"reason": 'she said "}{ ]" twice {not json}', "contradicts": False}


def test_truncated_json_is_a_failure_with_a_reason() -> None:
    r = parse_llm_json('{"contradicts": true, "reason": "the second statement says', expect=dict)
    assert r == ParseResult(None, None, r.error)
    assert r.error and r.error.startswith("no JSON object found (direct parse: Unterminated")
    r = parse_llm_json('```json\n{"contradicts": tr\n```', expect=dict)
    assert not r.ok and r.error


@pytest.mark.parametrize("junk", [
    "", "   ", "yes", "I cannot answer that.", "{", "}", "[[[", "```", "``````",
    "```json\n```", "null", "42", '"a string"', "{'single': 'quotes'}", "\x00\x01\x02",
    "\udcff\ud800", "{" * 5000, "[" * 100_000, '{"a":' * 3000,
])
def test_junk_never_raises_and_never_claims_success(junk: str) -> None:
    r = parse_llm_json(junk, expect=dict)
    assert r.value is None and r.strategy is None and isinstance(r.error, str) and r.error


def test_scalars_are_not_structured_answers() -> None:
    assert parse_llm_json("true") == ParseResult(None, None, (
        "no JSON object or array found (direct parse: parsed a bool, not a JSON object or "
        "array); no '{' or '[' in it"))


def test_deep_nesting_is_caught_and_the_search_is_bounded() -> None:
    deep = "[" * 50_000 + "]" * 50_000
    r = parse_llm_json(deep)
    assert not r.ok and r.error  # RecursionError inside json is caught, not raised
    # the work is bounded: after MAX_BOUNDARY_TRIES failed openings the search stops
    assert parse_llm_json(deep + ' {"ok": 1}', expect=dict).ok is False
    assert parse_llm_json("[" * 10 + ' {"ok": 1}', expect=dict).value == {"ok": 1}


def test_huge_input_is_refused_without_parsing() -> None:
    r = parse_llm_json('{"a": "' + "x" * MAX_INPUT_CHARS + '"}')
    assert not r.ok and r.error and "over" in r.error


def test_non_text_input() -> None:
    assert parse_llm_json(None).error == "expected text, got NoneType"  # type: ignore[arg-type]
    assert parse_llm_json(b'{"a": 1}').value == {"a": 1}


def test_huge_integers_are_a_failure_not_an_exception() -> None:
    r = parse_llm_json('{"n": ' + "9" * 6000 + "}")
    assert not r.ok and r.error


def test_parse_yes_no() -> None:
    assert parse_yes_no("Yes.") is True and parse_yes_no("  no, they agree") is False
    assert parse_yes_no("TRUE") is True and parse_yes_no("**No**") is False
    assert parse_yes_no("nope") is None and parse_yes_no("maybe") is None
    assert parse_yes_no("") is None and parse_yes_no(None) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=15,
)
PROSE = st.text(st.characters(blacklist_characters="`"), max_size=30)


@hsettings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(value=st.dictionaries(st.text(max_size=8), JSON, max_size=5), before=PROSE, after=PROSE)
def test_objects_come_back_whole_plain_fenced_or_in_prose(
    value: dict[str, object], before: str, after: str
) -> None:
    text = json.dumps(value)
    assert parse_llm_json(text, expect=dict) == ParseResult(value, "direct")
    fenced = parse_llm_json(f"{before}\n```json\n{text}\n```\n{after}", expect=dict)
    assert fenced.ok and fenced.value == value
    if "{" not in before and "[" not in before:
        assert parse_llm_json(f"{before} {text} {after}", expect=dict).value == value


@hsettings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(text=st.one_of(st.text(), JSON.map(json.dumps),
                      st.builds(lambda v, k: json.dumps(v)[:k], JSON, st.integers(0, 40))),
       expect=st.sampled_from([dict, list, None]))
def test_never_raises_and_ok_means_the_expected_type(text: str, expect: type | None) -> None:
    r = parse_llm_json(text, expect=expect)
    assert (r.error is None) == r.ok
    if r.ok:
        assert isinstance(r.value, expect or (dict, list))
    else:
        assert r.value is None and r.error
