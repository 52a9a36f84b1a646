"""The frustration heuristic (seed 000 §5.4.6; agent/domain/frustration.py): cues of one
message, corrections in a row, the threshold, the instruction."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from agent.config import default_config_path
from agent.domain import dmn
from agent.domain import frustration as f

CFG = f.FrustrationConfig.from_table(
    tomllib.loads(default_config_path().read_text())["emotion"])


@pytest.mark.parametrize(("text", "cue"), [
    ("But you didn't fix the import, you forgot the test file", "correction"),
    ("That's not what I asked for.", "correction"),
    ("I already told you my name is Ana", "already_told"),
    ("like I said, the meeting is on Tuesday", "already_told"),
    ("no, that's wrong", "short_negative"),
    ("Nope.", "short_negative"),
    ("WHY IS THIS STILL BROKEN", "caps"),
    ("this is useless!!", "exclamation"),
])
def test_each_cue_fires_on_its_pattern(text: str, cue: str) -> None:
    assert cue in f.text_cues(text)


@pytest.mark.parametrize("text", [
    "Could you help me plan a trip to Lisbon in May?",
    "No rush, but can you look at the report when you have time and tell me what you think?",
    "The USA and NATO met in the UN.",  # short capitals are not shouting
    "I told my sister about the trip and she loved it.",
    "Thanks! That works.",
])
def test_calm_messages_carry_no_cue(text: str) -> None:
    assert f.text_cues(text) == []
    assert not f.assess(f.text_cues(text), [], CFG).frustrated


def test_a_rephrased_question_is_a_cue() -> None:
    assert f.turn_cues("when is my flight?", [0.93], CFG) == ["rephrase"]
    assert f.turn_cues("when is my flight?", [0.5, 0.2], CFG) == []


def test_one_weak_cue_is_not_frustration_but_corrections_in_a_row_are() -> None:
    first = f.assess(["short_negative"], [], CFG)
    assert not first.frustrated and first.score == pytest.approx(0.4)
    second = f.assess(["short_negative"], [["correction"]], CFG)
    assert second.frustrated and second.streak == 1
    assert second.score == pytest.approx(0.65)
    third = f.assess(["rephrase", "caps"], [["short_negative"], ["correction"]], CFG)
    assert third.frustrated and third.streak == 2 and third.score == pytest.approx(1.0)


def test_the_streak_stops_at_a_calm_turn_and_a_calm_turn_has_no_streak() -> None:
    assert f.assess(["caps"], [[], ["correction"]], CFG).streak == 0
    calm = f.assess([], [["correction"], ["correction"]], CFG)
    assert calm.score == 0.0 and not calm.frustrated


def test_the_streak_reads_at_most_the_window() -> None:
    many = [["correction"]] * 10
    assert f.assess(["caps"], many, CFG).streak == CFG.frustration_window_turns


def test_the_record_names_the_heuristic_and_the_instruction_the_cues() -> None:
    got = f.assess(["already_told", "exclamation"], [], CFG)
    assert got.as_dict()["detector"] == "frustration-heuristic"
    assert got.as_dict()["cues"] == ["already_told", "exclamation"]
    line = f.instruction(got)
    assert "already told" in line and "brief" in line and "acknowledge" in line


def test_gut_outcome_valence_reads_the_outcome() -> None:
    good = {"turns": 2, "delta_alignment": 0.3, "recalls_matched": 1, "citations": 0}
    bad = {"turns": 2, "delta_alignment": -0.1, "recalls_matched": 0, "citations": 0}
    mixed = {"turns": 1, "delta_alignment": 0.2, "recalls_matched": 0, "citations": 0}
    assert dmn.gut_outcome_valence(good) == 1.0
    assert dmn.gut_outcome_valence(bad) == -1.0
    assert dmn.gut_outcome_valence(mixed) == 0.0
    assert dmn.gut_outcome_valence({"turns": 0, "delta_alignment": None}) is None
    assert dmn.gut_outcome_valence(None) is None


def test_hope_points_where_the_gut_was_right_and_away_from_where_it_was_wrong() -> None:
    a = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    b = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    direction, confidence = dmn.hope_direction([a * 3, b * 2], [1.0, -1.0])
    assert direction is not None and 0 < confidence <= 1
    assert float(direction @ a) > 0.5 and float(direction @ b) < -0.5
    assert dmn.hope_direction([], []) == (None, 0.0)
    assert dmn.hope_direction([a], [0.0]) == (None, 0.0)  # a mixed outcome says nothing
    # along the hope direction an item's intensity rises, against it it falls
    assert dmn.gut_intensity(0.5, 0.9, confidence, 0.3) > 0.5
    assert dmn.gut_intensity(0.5, -0.9, confidence, 0.3) < 0.5
    assert dmn.gut_intensity(0.5, 0.9, 0.0, 0.3) == 0.5  # no record: importance alone
    assert dmn.gut_intensity(0.95, 1.0, 1.0, 0.3) == 1.0
