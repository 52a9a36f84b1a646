"""Future time references for a prediction's deadline: "in two weeks", "by June", "next
Friday", "tomorrow", "by the end of the month", "will take three days".

agent/domain/timeref.py reads the past ("last week", "in May" = the most recent May); a
prediction looks ahead, so this module reads the same vocabulary (timeref's month,
weekday and number tables) future-leaning: a month or date without a year is its next
occurrence not before `now`, a weekday the next one after today. A deadline is the end
of the period the phrase names (the moment a pending prediction can be checked): "by
June" is the end of June, "next week" the end of next Sunday, "in two weeks" now plus
fourteen days; "before June" is the start of June. The first phrase found wins, the most
specific rules first. Phrases about the past name no deadline: "took two weeks", "the
last two weeks", "two weeks ago", "last Friday", "Friday was". Not covered: ranges,
hours, "the week after next", a past tense carried only by the verb elsewhere ("we met
on May 3" reads as the next May 3).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from agent.domain.timeref import AMBIGUOUS_MONTHS, FUZZY_COUNTS, MONTHS, NUMBER_WORDS, WEEKDAYS

_I = re.IGNORECASE


@dataclass(frozen=True)
class Deadline:
    at: datetime  # when a pending prediction can be checked (in now's timezone)
    phrase: str  # the words it came from ("in two weeks"); "" for the default horizon


def _alt(words: Iterable[str]) -> str:
    parts = sorted((re.escape(w).replace(r"\ ", r"\s+") for w in words), key=len, reverse=True)
    return "(?:" + "|".join(parts) + ")"


def _end_of(now: datetime, d: date) -> datetime:
    """The end of day `d` (the start of the next day) in now's zone."""
    return datetime.combine(d + timedelta(days=1), time(), tzinfo=now.tzinfo)


def _start_of(now: datetime, d: date) -> datetime:
    return datetime.combine(d, time(), tzinfo=now.tzinfo)


def _add_months(d: date, n: int) -> date:
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    return date(y, m + 1, min(d.day, calendar.monthrange(y, m + 1)[1]))


def _count(word: str | None) -> int:
    """"2", "two", "a", "a couple of", "a few" → a count ("a few" = its most)."""
    words = [w for w in (word or "one").lower().split() if w not in ("a", "of")] or ["a"]
    if words[0] in FUZZY_COUNTS:
        return FUZZY_COUNTS[words[0]][1]
    return int(words[0]) if words[0].isdigit() else NUMBER_WORDS[words[0]]


def _span(now: datetime, n: int, unit: str) -> datetime:
    unit = unit.lower().rstrip("s")
    if unit in ("day", "week"):
        return now + timedelta(days=n * (7 if unit == "week" else 1))
    months = n * (12 if unit == "year" else 1)
    return datetime.combine(_add_months(now.date(), months), now.timetz())


_COUNT = rf"(?P<n>\d{{1,3}}|(?:a\s+)?{_alt(FUZZY_COUNTS)}(?:\s+of)?|{_alt(NUMBER_WORDS)})"
_UNIT = r"(?P<unit>days?|weeks?|months?|years?)"
_MONTH = rf"(?P<month>{_alt(MONTHS)})"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_ISO = re.compile(r"\b(?P<year>(?:19|20)\d{2})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b")
_DAY_MONTH = re.compile(
    rf"\b(?P<lead>by|before|on|until|till)?\s*(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?"
    rf"(?:\s+of)?\s+{_MONTH}\b(?:,?\s+{_YEAR})?", _I)
_MONTH_DAY = re.compile(
    rf"\b(?P<lead>by|before|on|until|till)?\s*{_MONTH}\s+(?:the\s+)?(?P<d>\d{{1,2}})"
    rf"(?:st|nd|rd|th)?\b(?:,?\s+{_YEAR})?", _I)
# not "took two weeks", "the last two weeks", "two weeks ago": those are about the past
_WITHIN = re.compile(rf"\b(?:in|within|after|take|takes|taking|(?<!the\s)(?<!past\s)last|lasts)"
                     rf"\s+(?:another\s+|only\s+|about\s+|around\s+|just\s+)?{_COUNT}\s+"
                     rf"{_UNIT}\b(?!\s+ago\b)", _I)
_RELATIVE_DAYS = {"today": 0, "tonight": 0, "tomorrow": 1, "the day after tomorrow": 2}
_DAY_WORD = re.compile(rf"\b(?P<p>{_alt(_RELATIVE_DAYS)})\b", _I)
_END_OF = re.compile(r"\b(?:by\s+|before\s+|at\s+)?(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?"
                     r"(?P<next>next\s+)?(?P<unit>week|month|quarter|year|day)\b", _I)
_NEXT_UNIT = re.compile(r"\b(?P<rel>next|this|by\s+next|by\s+this)\s+(?P<unit>week|weekend|"
                        r"month|quarter|year)\b", _I)
_WEEKDAY = re.compile(rf"\b(?P<lead>by|before|on|until|till|next|this|coming|last|past)?\s*"
                      rf"(?:next\s+)?(?P<wd>{_alt(WEEKDAYS)})\b(?P<past>\s+(?:was|were|did|"
                      rf"had|went)\b)?", _I)
_MONTH_ALONE = re.compile(
    rf"\b(?P<lead>by|before|in|until|till|during|next|this|end\s+of|early|mid|late)\s+"
    rf"{_MONTH}\b(?:\s+{_YEAR})?", _I)


def _next_date(now: datetime, month: int, day: int, year: str | None) -> date | None:
    try:
        if year:
            return date(int(year), month, day)
        d = date(now.year, month, day)
        return d if d >= now.date() else date(now.year + 1, month, day)
    except ValueError:  # "31 April", "29 February" in a common year
        return None


def _unit_end(now: datetime, unit: str, ahead: int) -> datetime:
    """The end of this (ahead=0) or the next (1) week / weekend / month / quarter / year."""
    today = now.date()
    if unit in ("week", "weekend"):
        sunday = today + timedelta(days=6 - today.weekday() + 7 * ahead)
        return _end_of(now, sunday)
    if unit == "day":
        return _end_of(now, today + timedelta(days=ahead))
    if unit == "month":
        first = _add_months(today.replace(day=1), ahead + 1)
        return _start_of(now, first)
    if unit == "quarter":
        q_first = date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
        return _start_of(now, _add_months(q_first, 3 * (ahead + 1)))
    return _start_of(now, date(today.year + ahead + 1, 1, 1))


def resolve_deadline(text: str, now: datetime) -> Deadline | None:
    """The deadline a sentence names, future-leaning against `now` (timezone-aware);
    None when it names none."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    flat = " ".join(text.split())
    m = _ISO.search(flat)
    if m:
        d = _next_date(now, int(m["m"]), int(m["d"]), m["year"])
        if d is not None:
            return Deadline(_end_of(now, d), m[0])
    for rx in (_DAY_MONTH, _MONTH_DAY):
        m = rx.search(flat)
        if m:
            d = _next_date(now, MONTHS[m["month"].lower()], int(m["d"]), m["year"])
            if d is not None:
                at = _start_of(now, d) if (m["lead"] or "").lower() == "before" else _end_of(now, d)
                return Deadline(at, m[0].strip())
    m = _WITHIN.search(flat)
    if m:
        return Deadline(_span(now, _count(m["n"]), m["unit"]), m[0])
    m = _DAY_WORD.search(flat)
    if m:
        return Deadline(_end_of(now, now.date() + timedelta(days=_RELATIVE_DAYS[
            " ".join(m["p"].lower().split())])), m[0])
    m = _END_OF.search(flat)
    if m:
        return Deadline(_unit_end(now, m["unit"].lower(), 1 if m["next"] else 0), m[0])
    m = _NEXT_UNIT.search(flat)
    if m:
        ahead = 1 if "next" in m["rel"].lower() else 0
        return Deadline(_unit_end(now, m["unit"].lower(), ahead), m[0])
    m = _MONTH_ALONE.search(flat)
    if m and not (m["month"].lower() in AMBIGUOUS_MONTHS and m["lead"].lower() in ("this",)):
        month, lead = MONTHS[m["month"].lower()], " ".join(m["lead"].lower().split())
        year = int(m["year"]) if m["year"] else (
            now.year if month >= now.month and not (lead == "next" and month == now.month)
            else now.year + 1)
        first = date(year, month, 1)
        at = _start_of(now, first) if lead == "before" else _start_of(now, _add_months(first, 1))
        return Deadline(at, m[0])
    # "last Friday", "Friday was ...": the past; a later weekday may still name one
    m = next((w for w in _WEEKDAY.finditer(flat) if not w["past"] and (
        w["lead"] or "").lower() not in ("last", "past")), None)
    if m and (m["lead"] or re.search(r"\bnext\s+\w+day\b", m[0], _I)
              or re.search(r"\b(?:will|'ll|going to|by)\b", flat, _I)):
        ahead = (WEEKDAYS[m["wd"].lower()] - now.weekday() - 1) % 7 + 1  # strictly after today
        lead = (m["lead"] or "").lower()
        d = now.date() + timedelta(days=ahead)
        at = _start_of(now, d) if lead == "before" else _end_of(now, d)
        return Deadline(at, m[0].strip())
    return None


def deadline_or_default(text: str, now: datetime, horizon_days: float) -> Deadline:
    """The sentence's deadline, or `now` plus the default horizon when it names none."""
    return resolve_deadline(text, now) or Deadline(now + timedelta(days=horizon_days), "")
