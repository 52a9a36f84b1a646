"""The session handoff's pure rules (agent/domain/handoff.py): seed 000 §5.3's gap modes,
the completion cue (negation-, question- and tense-aware), the handoff's token budget,
when a correction applies, the extractive note, overdue intentions."""

from __future__ import annotations

import pytest

from agent.domain import handoff as h

BOUNDS = [30, 240, 1440, 2880]  # config/default.toml [context] handoff_gap_minutes


@pytest.mark.parametrize(("minutes", "mode"), [
    (0, "instant_resume"), (29.9, "instant_resume"), (30, "continuation"),
    (239, "continuation"), (240, "fresh_start"), (1439, "fresh_start"), (1440, "catch_up"),
    (2879, "catch_up"), (2880, "check_in"), (60 * 24 * 30, "check_in")])
def test_gap_modes_follow_seed_000_5_3(minutes: float, mode: str) -> None:
    assert h.gap_mode(minutes, BOUNDS) == mode


def test_gap_bounds_must_name_every_mode() -> None:
    with pytest.raises(ValueError, match="4 values"):
        h.gap_mode(10, [30, 240])


@pytest.mark.parametrize(("text", "cue"), [
    ("I sent the invoice to Marta", "sent"),
    ("Done! The invoice went out", "done"),
    ("the flight is booked", "booked"),
    ("Yes, I booked the flight", "booked"),
    ("I emailed the landlord this morning", "emailed"),
    ("I finished the report but I still need to send it", "finished"),
    ("I haven't sent the invoice yet", None),
    ("did you send the invoice?", None),
    ("is the report finished?", None),
    ("I'll be done tomorrow", None),
    ("not done yet", None),
    ("No, I never booked it", None),
    ("I needed to email the landlord", None),
    ("let me know when it is done", None),
    ("I will send it tomorrow", None),
    # -ed verbs that report no completion: noticing, asking, putting off, missing
    ("I noticed the invoice to Marta still isn't sent", None),
    ("I missed the deadline for the invoice to Marta", None),
    ("I postponed the dentist appointment to next month", None),
    ("we cancelled the booking for the venue", None),
    ("I asked Marta about the invoice", None),
])
def test_completion_cue(text: str, cue: str | None) -> None:
    assert h.completion_cue(text) == cue


def test_fulfils_needs_both_a_cue_and_the_topic() -> None:
    assert h.fulfils(0.8, "sent", 0.45)
    assert not h.fulfils(0.3, "sent", 0.45)  # done, but something else
    assert not h.fulfils(0.9, None, 0.45)  # the topic, but not done


def words(text: str) -> int:
    return len(text.split())


def test_the_handoff_is_cut_to_its_budget_in_priority_order() -> None:
    items = [h.HandoffItem("note", "note:1", "one two three four five"),
             h.HandoffItem("intention", "intention:2", "six seven eight nine ten"),
             h.HandoffItem("brief", "block:3",
                           "eleven twelve thirteen fourteen fifteen sixteen seventeen")]
    full, kept = h.render_handoff("catch_up", 1560, items, 1000, words)
    assert kept == items and full.count("\n- ") == 3
    assert full.startswith("Last session: 26 hours ago (catch up: warmer greeting")
    head = words(full.splitlines()[0])
    text, kept = h.render_handoff("catch_up", 1560, items, head + 6 + 6 + 7, words)
    assert [i.id for i in kept] == ["note:1", "intention:2"]  # the brief did not fit
    assert text.endswith("- … (cut to the handoff budget)")
    assert all(f"- {i.text}" in text for i in kept)
    assert words(text) <= head + 19


def test_a_first_session_says_so() -> None:
    text, _ = h.render_handoff(None, None, [], 100, words)
    assert text == "First session with this user."


def test_a_correction_applies_by_similarity_or_by_words_of_its_fails_when() -> None:
    assert h.correction_applies(0.36, 0.35, 0, 2)
    assert not h.correction_applies(0.35, 0.35, 1, 2)  # seed 000 §5.4.1: strictly above
    shared = h.shared_words("commit the .env file to the public repo",
                            "the repo is public and holds a .env file")
    assert shared >= 2 and h.correction_applies(0.1, 0.35, shared, 2)
    assert not h.correction_applies(0.1, 0.35, shared, 0)  # the word rule off
    # everyday words (and a negated contraction's stem) are no shared topic
    assert h.shared_words("I don't need that, I want to use the other one",
                          "you don't need the lock file and want to use other tools") == 0
    line = h.correction_line("Don't stage .env files", "the repo is public",
                             "the repo is private", "m1")
    assert line == ("Correction: Don't stage .env files — fails when the repo is public; "
                    "fine when the repo is private [memory:m1]")


def test_the_extractive_note_quotes_substantive_messages_only() -> None:
    note = h.extractive_note(["hi", "Let's fix the flaky login test in CI", "ok thanks",
                              "The staging database needs a new index"], ["Send the invoice"],
                             k=3)
    assert note is not None and "hi" not in note.split('"')
    assert '"Let\'s fix the flaky login test in CI" / "The staging database needs a new index"' \
        in note and 'Left open: "Send the invoice"' in note
    assert h.extractive_note(["hi", "ok"], []) is None


def test_overdue_intentions_are_flagged() -> None:
    assert "OVERDUE: carried 3 sessions" in h.intention_line("plan", "x", 3, 3, "i")
    assert "OVERDUE" not in h.intention_line("plan", "x", 2, 3, "i")
    assert h.intention_line("plan", "x", 0, 3, "i") == "Open plan: x [intention:i]"
