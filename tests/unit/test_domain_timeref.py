"""Time references in recall queries (agent/domain/timeref.py): windows, flags, anchors, scores.

Expected windows are worked out by hand from a calendar, not by the module's own arithmetic.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest

from agent.domain.timeref import TimeWindow, overlap_score, resolve

TZ = timezone(timedelta(hours=-5))


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=TZ)


WED = at("2024-02-14T15:30")  # a Wednesday in a leap year
SAT = at("2024-02-17T10:00")
SUN = at("2024-02-18T10:00")
JAN = at("2025-01-10T09:00")  # a Friday in January: last month and December are last year's
JUL = at("2024-07-10T12:00")
MAR31 = at("2024-03-31T12:00")
MAR1 = at("2024-03-01T12:00")
LEAP_DAY = at("2024-02-29T12:00")
DEC10 = at("2024-12-10T12:00")
DEC20 = at("2024-12-20T12:00")

# (query, now, start, end, phrase)
WINDOWS = [
    # relative days and parts of days
    ("What did I say today?", WED, "2024-02-14", "2024-02-15", "today"),
    ("what did I eat yesterday", WED, "2024-02-13", "2024-02-14", "yesterday"),
    ("the day before yesterday", WED, "2024-02-12", "2024-02-13", "the day before yesterday"),
    ("who called last night", WED, "2024-02-13T18:00", "2024-02-14T06:00", "last night"),
    ("what did I read this morning", WED, "2024-02-14T05:00", "2024-02-14T12:00", "this morning"),
    # calendar weeks (Monday first), months, years; "past" is rolling
    ("what happened this week", WED, "2024-02-12", "2024-02-19", "this week"),
    ("what happened last week", WED, "2024-02-05", "2024-02-12", "last week"),
    ("what happened last week", JAN, "2024-12-30", "2025-01-06", "last week"),
    ("LAST WEEK", WED, "2024-02-05", "2024-02-12", "LAST WEEK"),
    ("the past week", WED, "2024-02-07", "2024-02-15", "the past week"),
    ("anything this past week", WED, "2024-02-07", "2024-02-15", "this past week"),
    ("this month", WED, "2024-02-01", "2024-03-01", "this month"),
    ("last month", WED, "2024-01-01", "2024-02-01", "last month"),
    ("last month", JAN, "2024-12-01", "2025-01-01", "last month"),
    ("last month", MAR31, "2024-02-01", "2024-03-01", "last month"),
    ("this year", WED, "2024-01-01", "2025-01-01", "this year"),
    ("last year", JAN, "2024-01-01", "2025-01-01", "last year"),
    ("over the past year", WED, "2023-02-14", "2024-02-15", "over the past year"),
    # weekends: the most recent Saturday-Sunday; "last" said on a weekend means the one before
    ("last weekend", WED, "2024-02-10", "2024-02-12", "last weekend"),
    ("this weekend", WED, "2024-02-10", "2024-02-12", "this weekend"),
    ("this weekend", SAT, "2024-02-17", "2024-02-19", "this weekend"),
    ("last weekend", SAT, "2024-02-10", "2024-02-12", "last weekend"),
    ("what did we do over the weekend", SUN, "2024-02-17", "2024-02-19", "over the weekend"),
    # N units ago: exact day up to two days, padded beyond; fuzzy counts span their range
    ("2 days ago", WED, "2024-02-12", "2024-02-13", "2 days ago"),
    ("3 days ago", WED, "2024-02-10", "2024-02-13", "3 days ago"),
    ("two weeks ago", WED, "2024-01-28", "2024-02-04", "two weeks ago"),
    ("a week ago", WED, "2024-02-04", "2024-02-11", "a week ago"),
    ("a couple of weeks ago", WED, "2024-01-24", "2024-02-08", "a couple of weeks ago"),
    ("a few days ago", WED, "2024-02-09", "2024-02-13", "a few days ago"),
    ("a few weeks ago", WED, "2024-01-10", "2024-02-01", "a few weeks ago"),
    ("three months ago", WED, "2023-10-30", "2023-11-30", "three months ago"),
    ("one year ago", LEAP_DAY, "2022-08-30", "2023-08-30", "one year ago"),
    # in the last/past N units: rolling, through today
    ("in the last 3 days", WED, "2024-02-11", "2024-02-15", "in the last 3 days"),
    ("in the past 2 months", WED, "2023-12-14", "2024-02-15", "in the past 2 months"),
    ("over the last few weeks", WED, "2024-01-10", "2024-02-15", "over the last few weeks"),
    ("in the last month", MAR31, "2024-02-29", "2024-04-01", "in the last month"),
    ("what did I buy recently?", WED, "2024-01-15", "2024-02-15", "recently"),
    ("lately", WED, "2024-01-15", "2024-02-15", "lately"),
    # weekdays: "on X" counts today, "last X" is strictly before today
    ("last Monday", WED, "2024-02-12", "2024-02-13", "last Monday"),
    ("on Tuesday", WED, "2024-02-13", "2024-02-14", "on Tuesday"),
    ("on Wednesday", WED, "2024-02-14", "2024-02-15", "on Wednesday"),
    ("last Wednesday", WED, "2024-02-07", "2024-02-08", "last Wednesday"),
    ("Sunday", WED, "2024-02-11", "2024-02-12", "Sunday"),
    # months: the most recent such month not after now
    ("in May", WED, "2023-05-01", "2023-06-01", "in May"),
    ("May 2023", WED, "2023-05-01", "2023-06-01", "May 2023"),
    ("in May of 2022", WED, "2022-05-01", "2022-06-01", "in May of 2022"),
    ("in May last year", JUL, "2023-05-01", "2023-06-01", "in May last year"),
    ("early May", WED, "2023-05-01", "2023-05-11", "early May"),
    ("mid-May", WED, "2023-05-11", "2023-05-21", "mid-May"),
    ("late May", WED, "2023-05-21", "2023-06-01", "late May"),
    ("in Sept", WED, "2023-09-01", "2023-10-01", "in Sept"),
    ("in march", WED, "2023-03-01", "2023-04-01", "in march"),
    ("in February", WED, "2024-02-01", "2024-03-01", "in February"),
    ("last February", WED, "2023-02-01", "2023-03-01", "last February"),
    ("in December", JAN, "2024-12-01", "2025-01-01", "in December"),
    # dates: the most recent such day not after today; 05/08/2023 is US month/day/year
    ("on 8 May", WED, "2023-05-08", "2023-05-09", "on 8 May"),
    ("May 8th", WED, "2023-05-08", "2023-05-09", "May 8th"),
    ("the 8th of May", WED, "2023-05-08", "2023-05-09", "the 8th of May"),
    ("8 May 2023", WED, "2023-05-08", "2023-05-09", "8 May 2023"),
    ("May 8, 2022", WED, "2022-05-08", "2022-05-09", "May 8, 2022"),
    ("2023-05-08", WED, "2023-05-08", "2023-05-09", "2023-05-08"),
    ("05/08/2023", WED, "2023-05-08", "2023-05-09", "05/08/2023"),
    ("on February 14", WED, "2024-02-14", "2024-02-15", "on February 14"),
    ("on February 15", WED, "2023-02-15", "2023-02-16", "on February 15"),
    ("on Feb 29", MAR1, "2024-02-29", "2024-03-01", "on Feb 29"),
    ("on Feb 29", WED, "2020-02-29", "2020-03-01", "on Feb 29"),
    ("29 February 2024", WED, "2024-02-29", "2024-03-01", "29 February 2024"),
    ("the week of May 10, 2023", WED, "2023-05-08", "2023-05-15", "the week of May 10, 2023"),
    ("the weekend of May 8", WED, "2023-05-06", "2023-05-08", "the weekend of May 8"),
    ("the weekend of May 12, 2023", WED, "2023-05-13", "2023-05-15", "the weekend of May 12, 2023"),
    ("the weekend of May 10, 2023", WED, "2023-05-13", "2023-05-15", "the weekend of May 10, 2023"),
    # years
    ("in 2023", WED, "2023-01-01", "2024-01-01", "in 2023"),
    ("back in 2019", WED, "2019-01-01", "2020-01-01", "back in 2019"),
    ("the year 2020", WED, "2020-01-01", "2021-01-01", "the year 2020"),
    # seasons (meteorological, northern hemisphere): winter runs December to February
    ("last summer", WED, "2023-06-01", "2023-09-01", "last summer"),
    ("last summer", JUL, "2023-06-01", "2023-09-01", "last summer"),
    ("this summer", JUL, "2024-06-01", "2024-09-01", "this summer"),
    ("the past summer", JUL, "2023-06-01", "2023-09-01", "the past summer"),
    ("in the spring", WED, "2023-03-01", "2023-06-01", "in the spring"),
    ("in the fall", WED, "2023-09-01", "2023-12-01", "in the fall"),
    ("this winter", WED, "2023-12-01", "2024-03-01", "this winter"),
    ("last winter", WED, "2022-12-01", "2023-03-01", "last winter"),
    ("the summer of 2022", WED, "2022-06-01", "2022-09-01", "the summer of 2022"),
    # holidays: a week either side, "on" the day itself; the latest whose window has begun
    ("around Christmas", WED, "2023-12-18", "2024-01-02", "around Christmas"),
    ("around Christmas", DEC20, "2024-12-18", "2025-01-02", "around Christmas"),
    ("around Christmas", DEC10, "2023-12-18", "2024-01-02", "around Christmas"),
    ("on Christmas", WED, "2023-12-25", "2023-12-26", "on Christmas"),
    ("Christmas 2022", WED, "2022-12-18", "2023-01-02", "Christmas 2022"),
    ("around New Year", JAN, "2024-12-25", "2025-01-09", "around New Year"),
    ("around New Year", at("2024-12-28"), "2024-12-25", "2025-01-09", "around New Year"),
    ("New Year's Eve", WED, "2023-12-24", "2024-01-08", "New Year's Eve"),
    ("over the holidays", WED, "2023-12-19", "2024-01-07", "over the holidays"),
    ("during the holiday season", WED, "2023-12-19", "2024-01-07", "during the holiday season"),
    # since / after: from the phrase through today
    ("since last week", WED, "2024-02-05", "2024-02-15", "since last week"),
    ("since May", WED, "2023-05-01", "2024-02-15", "since May"),
    ("after Christmas", WED, "2024-01-02", "2024-02-15", "after Christmas"),
]


@pytest.mark.parametrize(("query", "now", "start", "end", "phrase"), WINDOWS)
def test_window(query: str, now: datetime, start: str, end: str, phrase: str) -> None:
    window = resolve(query, now).window
    assert window == TimeWindow(at(start), at(end), phrase)


NO_WINDOW = [
    "May I ask what my cat is called?",
    "we should march forward",
    "I may have left it at work",
    "can I get a second opinion",
    "the bike cost $2023",
    "my locker code is 4512",
    "May 2 of us come?",
    "those 2 may help",
    "Jan said hello",
    "the fall of Rome",
    "did I fall asleep?",
    "29 February 2023",  # not a leap year
    "the 31st of April",
    "what is my name",
    "what did I buy before May",  # open towards the past: no window
    "what happened after today",  # nothing to remember yet
    "What did I buy before the trip?",
    "Which class do I go to on Tuesdays?",  # habits are no dates
    "What do I do every Friday?",
    "each Monday I swim",
    "What do I eat on Sunday mornings?",
    "Where is my December trip going now?",  # an event named by its month
    "how did our May offsite go",
    "her June wedding plans",
]


@pytest.mark.parametrize("query", NO_WINDOW)
def test_no_window(query: str) -> None:
    result = resolve(query, WED)
    assert result.window is None
    assert result.text == query


TEXTS = [
    ("What did I eat yesterday?", "What did I eat?"),
    ("Yesterday, what did I eat?", "what did I eat?"),
    ("what  did I\n do in May 2023  at work", "what did I do at work"),
    ("May I ask where I went in May?", "May I ask where I went?"),
    ("what did we cook for Christmas", "what did we cook"),
    ("  May I ask   something? ", "May I ask something?"),
]


@pytest.mark.parametrize(("query", "text"), TEXTS)
def test_text_strips_the_time_phrase(query: str, text: str) -> None:
    assert resolve(query, WED).text == text


FLAGS = [
    ("Do I still live in Paris?", True, False, False),
    ("What is my current job?", True, False, False),
    ("Where do I work these days?", True, False, False),
    ("What's the latest on the project?", True, False, False),
    ("Do I play tennis anymore?", True, False, False),
    ("Where am I living at the moment?", True, False, False),
    ("When did I move to Berlin?", False, True, False),
    ("What date is the wedding?", False, True, False),
    ("How long ago did I quit smoking?", False, True, False),
    ("Which year did we meet?", False, True, False),
    ("What was my first car?", False, False, True),
    ("Where did I originally live?", False, False, True),
    ("What was it called before the name changed?", False, False, True),
    ("Who do I see nowadays?", True, False, False),
    ("What is the most recent thing she said?", True, False, False),
    ("What day did I arrive?", False, True, False),
    ("What did I think of him at first?", False, False, True),
    ("What was the plan initially?", False, False, True),
    ("What is my earliest memory of her?", False, False, True),
    ("What's my first name?", False, False, False),
    ("What did I eat yesterday?", False, False, False),
    ("When did I first move, and where do I live now?", True, True, True),
]


@pytest.mark.parametrize(("query", "current", "when", "first"), FLAGS)
def test_flags(query: str, current: bool, when: bool, first: bool) -> None:
    result = resolve(query, WED)
    assert (result.asks_current, result.asks_when, result.asks_first) == (current, when, first)


ANCHORS = [
    ("What did I buy before the trip?", "the trip", "before"),
    ("How did she feel after her interview, and why?", "her interview", "after"),
    ("what did we do prior to the move", "the move", "before"),
    ("where did we eat after we landed and checked in", "we landed", "after"),
    ("what did I say after the call when we argued", "the call", "after"),
    ("what happened after the holidays", None, None),  # a time phrase, not an event
    ("what did I buy before May", None, None),
    ("what did I eat yesterday", None, None),
]


@pytest.mark.parametrize(("query", "anchor", "relation"), ANCHORS)
def test_anchor(query: str, anchor: str | None, relation: str | None) -> None:
    result = resolve(query, WED)
    assert (result.anchor, result.anchor_relation) == (anchor, relation)


def test_an_anchor_stays_in_the_text_and_an_event_window_is_its_own() -> None:
    result = resolve("What did I pack before the trip last summer?", WED)
    assert result.anchor == "the trip" and result.anchor_relation == "before"
    assert result.window is not None and result.window.phrase == "last summer"
    assert result.text == "What did I pack before the trip?"


def test_after_a_time_phrase_opens_the_window_instead_of_anchoring() -> None:
    result = resolve("what happened after the holidays", WED)
    assert result.window == TimeWindow(at("2024-01-07"), at("2024-02-15"), "after the holidays")


def test_windows_keep_the_timezone_of_now() -> None:
    other = timezone(timedelta(hours=9))
    window = resolve("yesterday", WED.astimezone(other)).window
    assert window is not None
    assert window.start == datetime(2024, 2, 14, tzinfo=other)  # 05:30 on the 15th in UTC+9
    assert window.start.utcoffset() == timedelta(hours=9)


def test_a_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        resolve("yesterday", datetime(2024, 2, 14, 12))


def test_as_dict_and_frozen() -> None:
    window = resolve("yesterday", WED).window
    assert window is not None
    assert window.as_dict() == {
        "start": "2024-02-13T00:00:00-05:00",
        "end": "2024-02-14T00:00:00-05:00",
        "phrase": "yesterday",
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        window.phrase = "today"  # type: ignore[misc]


def test_one_window_per_query_the_most_specific_rule_wins() -> None:
    result = resolve("on Tuesday, May 9th 2023, and yesterday", WED)
    assert result.window == TimeWindow(at("2023-05-09"), at("2023-05-10"), "May 9th 2023")


WINDOW = TimeWindow(at("2024-02-10"), at("2024-02-12"), "last weekend")
SCORES = [
    (at("2024-02-11T12:00"), WINDOW, 3.0, 1.0),  # inside
    (at("2024-02-10"), WINDOW, 3.0, 1.0),  # the start is inclusive
    (at("2024-02-13T12:00"), WINDOW, 3.0, 0.5),  # 1.5 days after the end
    (at("2024-02-08T12:00"), WINDOW, 3.0, 0.5),  # 1.5 days before the start
    (at("2024-02-07"), WINDOW, 3.0, 0.0),  # 3 days before: the slack is spent
    (at("2024-01-01"), WINDOW, 3.0, 0.0),
    (at("2024-02-13T12:00"), WINDOW, 6.0, 0.75),
    (at("2024-02-13T12:00"), WINDOW, 0.0, 0.0),
    (None, WINDOW, 3.0, 0.5),  # undated
    (at("2020-01-01"), None, 3.0, 1.0),  # no window: no opinion
    (None, None, 3.0, 1.0),
]


@pytest.mark.parametrize(("when", "window", "slack", "score"), SCORES)
def test_overlap_score(
    when: datetime | None, window: TimeWindow | None, slack: float, score: float
) -> None:
    assert overlap_score(when, window, slack) == pytest.approx(score)


def test_overlap_score_default_slack_is_three_days() -> None:
    assert overlap_score(at("2024-02-13"), WINDOW) == pytest.approx(2 / 3)
