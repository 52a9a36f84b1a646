"""The pure rules of workflow patterns (seed 000 §10.5) and of the self-model test."""

from __future__ import annotations

import numpy as np
import pytest

from agent.domain import self_test as st
from agent.domain import workflows as wf


def test_action_steps_key_verb_and_object_and_skip_chatter() -> None:
    steps = wf.action_steps("ok, tests pass. Now bump the version, then push the tag")
    assert [(s.text, s.key) for s in steps] == [("bump the version", "bump version"),
                                                ("push the tag", "push tag")]
    assert [s.key for s in wf.action_steps("Can you run the tests?")] == ["run tests"]
    assert wf.action_steps("the weather is nice today") == []
    assert wf.action_steps("I ran the tests yesterday") == []
    assert wf.action_steps("run") == []  # a verb alone names no step


def test_cluster_steps_joins_same_keys_and_close_vectors() -> None:
    vecs = np.array([[1, 0, 0], [0, 1, 0], [0.9, 0.1, 0], [0, 0, 1], [0, 1, 0]], dtype=float)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    keys = ["run tests", "bump version", "execute test suite", "push tag", "bump version"]
    assert wf.cluster_steps(keys, vecs, 0.8) == [0, 1, 0, 2, 1]
    assert wf.cluster_steps(keys, vecs, 0.999) == [0, 1, 2, 3, 1]


def test_find_sequences_across_sessions_with_gaps() -> None:
    found = wf.find_sequences([[0, 9, 1, 2, 7], [5, 0, 1, 8, 2], [3, 4]], min_len=3,
                              max_len=6, max_gap=1, min_sessions=2)
    assert [(f.labels, f.occurrences) for f in found] == [
        ((0, 1, 2), {0: (0, 2, 3), 1: (1, 2, 4)})]
    # a gap of two other steps is too far with max_gap=1; fine with 2
    far = [[0, 7, 8, 1, 2], [0, 1, 2]]
    assert wf.find_sequences(far, min_len=3, max_len=6, max_gap=1, min_sessions=2) == []
    assert [f.labels for f in wf.find_sequences(far, min_len=3, max_len=6, max_gap=2,
                                                min_sessions=2)] == [(0, 1, 2)]
    # one session is not a pattern; repeats inside a sequence are not steps
    assert wf.find_sequences([[0, 1, 2]], min_len=3, max_len=6, max_gap=1,
                             min_sessions=2) == []
    assert wf.find_sequences([[0, 0, 0], [0, 0, 0]], min_len=3, max_len=6, max_gap=1,
                             min_sessions=2) == []


def test_find_sequences_keeps_only_maximal_ones() -> None:
    found = wf.find_sequences([[0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2]], min_len=3, max_len=6,
                              max_gap=0, min_sessions=2)
    # (0,1,2,3) in two sessions; (0,1,2) stays: it is seen in a third; (1,2,3) goes
    assert [(f.labels, sorted(f.occurrences)) for f in found] == [
        ((0, 1, 2, 3), [0, 1]), ((0, 1, 2), [0, 1, 2])]


def test_in_order_and_the_confidence_rules() -> None:
    eye = np.eye(3)
    assert wf.in_order(eye[[1, 2]], eye[[0, 1, 2]], 0.9) == 2
    assert wf.in_order(eye[[1, 2]], eye[[2, 1]], 0.9) == 1  # out of order
    cfg = wf.WorkflowConfig(0.55, 3, 6, 1, 2, 0.5, 0.45, 0.05, 0.03, 0.05, 0.15, 0.95, 50, 1)
    assert wf.after_event(0.5, "completed", cfg) == (pytest.approx(0.55), False)
    assert wf.after_event(0.94, "completed", cfg)[0] == pytest.approx(0.95)
    assert wf.after_event(0.17, "skipped", cfg) == (pytest.approx(0.14), True)


def test_self_test_choice_parsing_and_scenarios() -> None:
    opts = ["Delete the notes right away, as asked.", "Ask the user to confirm first."]
    assert st.parse_choice("B) because it cannot be undone", opts) == (1, "letter")
    assert st.parse_choice("Option a.", opts) == (0, "letter")
    assert st.parse_choice("I would ask the user to confirm first.", opts) == (
        1, "option_text")
    assert st.parse_choice("Hard to say.", opts) == (None, "unparsed")
    assert st.parse_choice("C) neither", opts) == (None, "unparsed")  # no option C
    got = st.parse_scenarios([{"text": " pick  one ", "options": ["x", "y"]}], "f.json")
    assert got == [st.Scenario("f.json#1", "pick one", ("x", "y"))]
    with pytest.raises(ValueError, match=r"f.json: scenario 1: 'options'"):
        st.parse_scenarios([{"text": "t", "options": ["only"]}], "f.json")
    with pytest.raises(ValueError, match="non-empty JSON list"):
        st.parse_scenarios({}, "f.json")
    choice, scores = st.predict_by_identity(np.eye(2), np.array([[0.2, 1.0], [1.0, 0.0]]),
                                            [1.0, 0.1])
    assert choice == 1 and scores[1] > scores[0]
