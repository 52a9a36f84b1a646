"""The prediction and decision cue rules, confidence and deadlines (agent/domain/
predictions.py, decisions.py, deadlines.py): what is read as a prediction or a decision,
and what must not be (questions, "will you ...?", conditionals, plans, past reports)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent.domain.deadlines import deadline_or_default, resolve_deadline
from agent.domain.decisions import find_decision, outcome_cue
from agent.domain.predictions import (
    PredictionConfig,
    confidence_of,
    domain_of,
    find_prediction,
    prediction_cue,
    settlement_cue,
)

NOW = datetime(2026, 3, 11, 15, 0, tzinfo=UTC)  # a Wednesday
LEVELS = {"certain": 0.9, "likely": 0.7, "default": 0.6, "possible": 0.4, "unlikely": 0.3}
CFG = PredictionConfig(LEVELS, 30)


@pytest.mark.parametrize("text", [
    "I think the migration will take two weeks.",
    "I bet Ana gets the job by June.",
    "I expect the release to slip.",
    "It will probably rain tomorrow.",
    "My guess is the client signs next week.",
    "I'm sure the launch is going to be late.",
])
def test_predictions_are_read(text: str) -> None:
    assert prediction_cue(text) is not None


@pytest.mark.parametrize("text", [
    "Will you send me the report?",
    "Will you send me the report",  # a question without its mark
    "Do you think the migration will take two weeks?",
    "If it rains, we will probably cancel.",  # a conditional
    "It would probably be fine.",  # a hypothetical
    "I will send the report tomorrow.",  # the speaker's plan: an intention
    "The meeting will be at 3pm.",  # a schedule, no expectation
    "I expected it to fail.",  # a report of the past
    "I think the soup is great.",  # a belief with no future
])
def test_non_predictions_are_not_read(text: str) -> None:
    assert prediction_cue(text) is None


@pytest.mark.parametrize(("text", "confidence"), [
    ("The release will definitely slip.", 0.9),
    ("The release will probably slip.", 0.7),
    ("The release might slip, I think it will.", 0.4),
    ("I think the release will slip.", 0.6),
    ("I doubt the release will ship.", 0.3),
])
def test_confidence_comes_from_the_hedge(text: str, confidence: float) -> None:
    assert confidence_of(text, LEVELS) == confidence


@pytest.mark.parametrize(("text", "expected"), [
    ("it will take two weeks", NOW + timedelta(days=14)),
    ("in 3 days", NOW + timedelta(days=3)),
    ("by June", datetime(2026, 7, 1, tzinfo=UTC)),
    ("before June", datetime(2026, 6, 1, tzinfo=UTC)),
    ("by February", datetime(2027, 3, 1, tzinfo=UTC)),  # a past month: next year's
    ("next Friday", datetime(2026, 3, 14, tzinfo=UTC)),
    ("by tomorrow", datetime(2026, 3, 13, tzinfo=UTC)),
    ("next week", datetime(2026, 3, 23, tzinfo=UTC)),
    ("by the end of the month", datetime(2026, 4, 1, tzinfo=UTC)),
    ("on 2026-05-01", datetime(2026, 5, 2, tzinfo=UTC)),
    ("by 12 January", datetime(2027, 1, 13, tzinfo=UTC)),
])
def test_deadlines_look_ahead(text: str, expected: datetime) -> None:
    found = resolve_deadline(text, NOW)
    assert found is not None and found.at == expected


@pytest.mark.parametrize(("text", "expected"), [
    # phrases about the past name no deadline (the later future phrase, when there is one)
    ("We shipped it last Friday and it will break.", None),
    ("Friday was a mess, but it will get better.", None),
    ("It will pass, it took 5 days last time.", None),
    ("The last two weeks were hard, but it will get better.", None),
    ("It started two weeks ago and it will end by June.", datetime(2026, 7, 1, tzinfo=UTC)),
    ("We shipped it last Friday; it will break by next Friday.",
     datetime(2026, 3, 14, tzinfo=UTC)),
    ("The outage will last three days.", NOW + timedelta(days=3)),
])
def test_past_phrases_are_no_deadline(text: str, expected: datetime | None) -> None:
    found = resolve_deadline(text, NOW)
    assert (found and found.at) == expected, found


def test_no_phrase_gives_the_default_horizon() -> None:
    assert resolve_deadline("the release will slip", NOW) is None
    assert deadline_or_default("the release will slip", NOW, 30).at == NOW + timedelta(days=30)


def test_a_found_prediction_has_its_sentence_domain_and_deadline() -> None:
    found = find_prediction("Morning! I think the migration will take two weeks. Ugh.",
                            NOW, CFG)
    assert found is not None
    assert found.statement == "I think the migration will take two weeks."
    assert (found.domain, found.confidence) == ("technical", 0.6)
    assert found.deadline.at == NOW + timedelta(days=14)
    assert domain_of("I bet Ana gets the job by June") == "behavioral"
    assert domain_of("the weather will turn") == "general"


@pytest.mark.parametrize(("turn", "status"), [
    ("The migration took three weeks in the end.", "wrong"),
    ("The migration took two weeks, as I said.", "correct"),
    ("It shipped on time.", "correct"),
    ("It partly happened: half the tables moved.", "partially_correct"),
    ("You were wrong, it slipped a month.", "wrong"),
])
def test_outcomes_settle(turn: str, status: str) -> None:
    found = settlement_cue("I think the migration will take two weeks.", turn)
    assert found is not None and found[0] == status


@pytest.mark.parametrize(("prediction", "turn", "status"), [
    # a prediction of a failure or a delay is right when the failure or delay happens
    ("I think the deploy will fail.", "The deploy failed.", "correct"),
    ("I think the deploy will fail.", "The deploy didn't fail.", "wrong"),
    ("He will probably be late.", "He was late again.", "correct"),
    ("He will probably be late.", "He was on time.", "wrong"),
    ("I bet the release will be delayed.", "The release was delayed.", "correct"),
    # a negated prediction is right when the thing did not happen
    ("I think Ana won't call.", "Ana didn't call.", "correct"),
    ("I'm sure it won't ship on time.", "It shipped on time.", "wrong"),
    ("I'm sure it won't ship on time.", "You were wrong, it did not ship on time.", "wrong"),
])
def test_outcomes_settle_by_polarity(prediction: str, turn: str, status: str) -> None:
    found = settlement_cue(prediction, turn)
    assert found is not None and found[0] == status, found


@pytest.mark.parametrize("turn", [
    "How long did the migration take?",  # a question
    "I think the migration will take three weeks.",  # another forecast
    "The migration is ongoing.",  # no outcome
])
def test_non_outcomes_settle_nothing(turn: str) -> None:
    assert settlement_cue("I think the migration will take two weeks.", turn) is None


def test_a_decision_keeps_its_alternatives_and_rationale() -> None:
    found = find_decision("I decided to use Postgres instead of MySQL because MySQL "
                          "replication is a pain to run.")
    assert found is not None and found.chosen == "use Postgres"
    assert found.alternatives == [{"option": "MySQL",
                                   "why_not": "MySQL replication is a pain to run"}]
    assert found.rationale == "MySQL replication is a pain to run"
    over = find_decision("We went with Rust over Go and Java since we need the speed.")
    assert over is not None and [a["option"] for a in over.alternatives] == ["Go", "Java"]
    weekend = find_decision("We went with Postgres over the weekend because of the JSON.")
    assert weekend is not None and weekend.alternatives == []
    assert weekend.rationale == "the JSON"
    rather = find_decision("Rather than a rewrite, we'll refactor the billing module.")
    assert rather is not None and rather.chosen == "refactor the billing module"
    assert [a["option"] for a in rather.alternatives] == ["rewrite"]


@pytest.mark.parametrize("text", [
    "Should we go with Postgres instead of MySQL?",
    "Will you pick Postgres or MySQL?",
    "I can't decide between Postgres and MySQL.",
    "We haven't decided on the database yet.",
    "If we decided to use Postgres, it would be fine.",
    "Postgres is a database.",
    # everyday sentences with a decision verb in another sense
    "I picked up the kids after school.",
    "I moved to Berlin last year.",
    "I'm going with my sister to the mall.",
    "They went with the flow.",
    "I committed to the repo an hour ago.",
])
def test_non_decisions_are_not_read(text: str) -> None:
    assert find_decision(text) is None


@pytest.mark.parametrize(("turn", "assessment"), [
    ("The Postgres switch worked out great.", "win"),
    ("Moving to Postgres was a mistake.", "loss"),
    ("It didn't work out with Postgres.", "loss"),
    ("Postgres has been a mixed bag.", "partial"),
])
def test_decision_outcomes(turn: str, assessment: str) -> None:
    found = outcome_cue(turn)
    assert found is not None and found[0] == assessment


def test_a_question_is_no_outcome() -> None:
    assert outcome_cue("Did the Postgres switch work out?") is None


@pytest.mark.parametrize(("turn", "reports"), [
    ("The migration took three weeks in the end.", True),
    ("It shipped on time, as expected.", True),
    ("Ana got the job!", True),
    ("Did the migration finish?", False),
    ("How long will the migration take?", False),
    ("Let's look at the deploy script tomorrow.", False),
])
def test_a_model_is_asked_to_settle_only_a_turn_that_reports_something(
        turn: str, reports: bool) -> None:
    from agent.domain.predictions import may_report_outcome

    assert may_report_outcome(turn) is reports


def test_the_settling_model_is_not_asked_about_a_question() -> None:
    from types import SimpleNamespace

    from agent.config import load_settings
    from agent.services.thinking.decisions import DecisionsConfig, DecisionTracker
    from agent.services.thinking.predictions import PredictionsConfig, PredictionTracker

    asked: list[str] = []

    class Model:
        provider, model = "openai", "stub"

        def chat(self, messages: Any, **kwargs: Any) -> Any:
            asked.append(messages[-1]["content"])
            return SimpleNamespace(text="no", fallback=False)

    settings = load_settings()
    model = Model()
    for tracker in (PredictionTracker(PredictionsConfig.from_table(settings.predictions),
                                      lambda: model),
                    DecisionTracker(DecisionsConfig.from_table(settings.decisions),
                                    lambda: model)):
        assert tracker._judge("the migration will take two weeks",
                              "Did the migration take two weeks?", 0.95) is None
        assert asked == []
        tracker._judge("the migration will take two weeks",
                       "The migration took three weeks in the end.", 0.95)
        assert len(asked) == 1
        asked.clear()
