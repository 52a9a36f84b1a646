"""The profile heuristic (agent/domain/profile.py): what it reads, what it skips, and
its named limits; the model's JSON; the prompt block's budget."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent.domain.profile import (
    PROFILE_HEURISTIC,
    ProfileClaim,
    extract,
    parse_llm,
    render_profile,
)


def facts(text: str) -> dict[str, str]:
    return {f.slot: f.value for f in extract(text)}


@pytest.mark.parametrize(("text", "expected"), [
    ("Hi, I'm Ana. I live in Lisbon.", {"name": "Ana", "residence": "Lisbon"}),
    ("My name is Ana Silva", {"name": "Ana Silva"}),
    ("Please call me Jo.", {"name": "Jo"}),
    ("I moved to Porto last month", {"residence": "Porto"}),
    ("I work as a nurse at Santa Maria hospital.", {"work": "a nurse at Santa Maria hospital"}),
    ("I'm a software engineer at Acme", {"work": "software engineer"}),
    ("My sister Maria is visiting.", {"person:sister": "Maria"}),
    ("my sister's name is Maria", {"person:sister": "Maria"}),
    ("My brother is called Tom.", {"person:brother": "Tom"}),
    ("My mum, Rosa, cooks on Sundays.", {"person:mother": "Rosa"}),
    ("I love green tea", {"preference:green tea": "loves green tea"}),
    ("I hate green tea.", {"preference:green tea": "dislikes green tea"}),
    ("I can't stand loud music", {"preference:loud music": "dislikes loud music"}),
    ("My favourite band is Low.", {"preference:favourite band": "favourite band: Low"}),
    ("I'm working on a garden planner app", {"project:garden planner app":
                                              "a garden planner app"}),
])
def test_it_reads_first_person_statements(text: str, expected: dict[str, str]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize("text", [
    "Do I live in Berlin?",             # a question
    "I don't live in Berlin anymore.",  # negated
    "If I moved to Paris I would love cheese.",  # hypothetical
    "I used to work as a chef.",        # past
    "I'm tired", "I'm Fine.",           # states, not names
    "I like to think so.", "I love it!",  # no thing named
    "She loves green tea.",             # someone else
])
def test_it_skips_what_is_not_a_claim_about_the_user_now(text: str) -> None:
    assert extract(text) == []


def test_named_limits() -> None:
    # one sentence at a time: the name in the next sentence is not linked to the sister
    assert "person:sister" not in facts("I have a sister. Her name is Maria.")
    # a relation needs a capitalised name right after it
    assert facts("my sister maria is here") == {}
    # "I'm X" reads a capitalised word as a name unless it is listed as a non-name
    assert facts("I'm Portuguese.") == {}
    assert facts("I'm Brazilian.") == {"name": "Brazilian"}
    # "tea" and "green tea" are two slots
    assert set(facts("I like tea. I like green tea.")) == {"preference:tea",
                                                           "preference:green tea"}
    assert PROFILE_HEURISTIC == "heuristic:profile-v1"


def test_the_models_json_is_read_and_anything_else_refused() -> None:
    got = parse_llm('Sure: {"facts": [{"kind": "residence", "value": "Porto"}, '
                    '{"kind": "person", "key": "Sister", "value": "Maria"}, '
                    '{"kind": "horoscope", "value": "Leo"}, {"kind": "project", "value": ""}]}')
    assert [(f.slot, f.value) for f in got] == [("residence", "Porto"),
                                                ("person:sister", "Maria")]
    for bad in ("no json here", '{"facts": "none"}', "[1, 2]"):
        with pytest.raises(ValueError):
            parse_llm(bad)


def test_the_block_keeps_the_stable_kinds_first_within_its_budget() -> None:
    at = datetime(2026, 11, 30, tzinfo=UTC)
    claims = [ProfileClaim(str(i), kind, slot, value, at, f"t{i}", PROFILE_HEURISTIC, was)
              for i, (kind, slot, value, was) in enumerate([
                  ("preference", "preference:tea", "likes tea", None),
                  ("residence", "residence", "Porto", "Lisbon"),
                  ("name", "name", "Ana", None)])]
    text, kept = render_profile(claims, 1000, lambda s: len(s.split()))
    assert [c.slot for c in kept] == ["name", "residence", "preference:tea"]
    assert "- lives in: Porto (before: Lisbon) (said 2026-11-30) [day_table:t1]" in text
    short, kept = render_profile(claims, 24, lambda s: len(s.split()))
    assert [c.slot for c in kept] == ["name"] and short.endswith("(cut to the profile budget)")


def test_only_first_person_messages_go_to_the_model() -> None:
    from agent.domain.profile import about_self

    assert about_self("I live here") and about_self("That's my cat") and about_self("Call me")
    assert not about_self("The weather is nice") and not about_self("Imagine that")
