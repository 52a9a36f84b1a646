"""Time references in a recall query: "last week", "in May", "a few days ago", "around Christmas".

`resolve(query, now)` turns the query's time phrase into a window [start, end) in `now`'s zone,
flags the kind of time question (current state, "when", "first"), notes an event anchor
("before the trip") for the caller to date by recall, and strips the phrase from the text used
for embedding and lexical matching. English; the vocabulary lives in module-level tables so
another language can sit beside it. Past-leaning: a month, weekday, season, holiday or date
without a year is its most recent occurrence not after `now`. One window per query: the rules
run from the most specific (a full date) to the vaguest ("recently"); the first match wins.
Weeks start on Monday. Not covered: ranges ("from May to June"), hours ("two hours ago"), the
future ("next week"), composites ("Tuesday of last week" gives "last week"), "before <date>".
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal

_MONTH_NAMES = "january february march april may june july august september october november"
MONTHS: dict[str, int] = {n: i + 1 for i, n in enumerate(f"{_MONTH_NAMES} december".split())}
MONTHS |= {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
           "sept": 9, "oct": 10, "nov": 11, "dec": 12}
# month words that are also plain words ("May I", "march forward", "Jan said"): need a cue
AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar", "jan"})
_WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday"
WEEKDAYS = {n: i for i, n in enumerate(_WEEKDAY_NAMES.split())}
_NUMBERS = "one two three four five six seven eight nine ten eleven twelve"
NUMBER_WORDS = {"a": 1, "an": 1} | {n: i + 1 for i, n in enumerate(_NUMBERS.split())}
# vague counts as (fewest, most) units: "a few weeks ago" is 2 to 5 weeks back
FUZZY_COUNTS = {"couple": (1, 3), "few": (2, 5), "several": (3, 8)}
# half-width in days of an exact "N units ago" window: how loosely people count
UNIT_PAD_DAYS = {"day": 1, "week": 3, "month": 15, "year": 182}
# (days back, start hour, end hour): end hours past 24 run into the next morning
DAY_PHRASES = {
    "today": (0, 0, 24), "yesterday": (1, 0, 24), "the day before yesterday": (2, 0, 24),
    "this morning": (0, 5, 12), "this afternoon": (0, 12, 18), "this evening": (0, 17, 24),
    "tonight": (0, 17, 24), "last night": (1, 18, 30), "yesterday morning": (1, 5, 12),
    "yesterday afternoon": (1, 12, 18), "yesterday evening": (1, 17, 24),
}
# northern-hemisphere meteorological seasons (a cogd choice): first month, three months long
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
HOLIDAYS = {
    "christmas": (12, 25), "xmas": (12, 25), "christmas day": (12, 25), "christmas eve": (12, 24),
    "new year": (1, 1), "new years": (1, 1), "new years day": (1, 1), "new years eve": (12, 31),
    "halloween": (10, 31), "valentines day": (2, 14),
    "the holidays": (12, 28), "the holiday season": (12, 28),
}
HOLIDAY_PAD_DAYS = 7  # "around Christmas": a week either side ("on Christmas" is the day)
# "the holidays": the year-end break, 19 Dec to 6 Jan (a cogd choice), whatever the preposition
HOLIDAY_PADS = {"the holidays": 9, "the holiday season": 9}
# "recently"/"lately": the last 30 days, today included (a cogd choice); tried last of all
RECENT_PHRASES = dict.fromkeys(("recently", "lately", "of late"), (30, 0, 31 * 24))
# prepositions absorbed into the phrase ("in May", "since last week")
LEAD_WORDS = ("back in", "prior to", "within", "throughout", "during", "around", "since", "after",
              "before", "until", "from", "over", "in", "on", "at", "by", "of", "for")
MONTH_LEADS = frozenset({"back in", "within", "throughout", "during", "around", "since", "after",
                         "before", "until", "from", "over", "in", "by"})
YEAR_LEADS = MONTH_LEADS - {"around", "over", "by"}
OPEN_AFTER = frozenset({"since", "after"})  # the window runs from the phrase to today
OPEN_BEFORE = frozenset({"before", "until", "prior to", "by"})  # open towards the past: no window
CURRENT_CUES = ("now", "still", "currently", "current", "latest", "most recent", "these days",
                "nowadays", "anymore", "at the moment", "at present")
WHEN_CUES = (r"when\s+(?:did|was|is|were|do|does|have|has|had|will|am|are)",
             r"what\s+(?:date|day|month|year)", r"how\s+long\s+ago", r"since\s+when",
             r"which\s+(?:date|day|week|month|year)")
FIRST_CUES = (r"first(?!\s+name)", "originally", "initially", "earliest", "to begin with",
              r"before\b.*\bchang\w*")
# a question about an earlier state ("where did I live before?", "my old job"): claim
# slots rank the claim that held then first (agent/domain/claims.py, issue 39 item 5)
PAST_CUES = ("before", "used to", "previously", "formerly", "former", "earlier",
             "in the past", "back then", "at the time", "at first", "ex", r"(?<!how\s)old",
             r"did\s+\S+\s+(?:live|work|stay|reside|date|use\s+to)",
             r"(?:was|were)\s+\S+\s+(?:living|working)")
Relation = Literal["before", "after"]
ANCHOR_RELATIONS: dict[str, Relation] = {"before": "before", "prior to": "before", "after": "after"}
# what may follow "before"/"after" for it to be an event ("the trip", "her interview", "I moved")
ANCHOR_OPENERS = "the my his her our their your a an i we he she they you"


_APOSTROPHES = "'\u2019"


# a regex alternation, longest first; spaces match any whitespace; possessive: "years" ~ "year's"
def _alt(words: Iterable[str], possessive: bool = False) -> str:
    parts = [re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)]
    if possessive:
        parts = [re.sub(r"s(?=\\s|$)", f"[{_APOSTROPHES}]?s", p) for p in parts]
    return "(?:" + "|".join(parts) + ")"


def _key(text: str) -> str:
    return re.sub(f"[{_APOSTROPHES}]", "", " ".join(text.lower().split()))


@dataclass(frozen=True)
class TimeWindow:
    start: datetime  # inclusive, in now's timezone
    end: datetime  # exclusive
    phrase: str  # the words of the query it came from, e.g. "last week", "in May"

    def as_dict(self) -> dict[str, str]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "phrase": self.phrase}


@dataclass(frozen=True)
class TimeQuery:
    window: TimeWindow | None  # the period the question asks about, if any
    asks_current: bool  # "still", "currently", "these days": the present state wins
    asks_when: bool  # "when did", "what date", "how long ago": the answer is a date
    asks_first: bool  # "first", "originally", "before ... changed": the earliest state wins
    text: str  # the query without its time phrase, whitespace-normalised
    anchor: str | None = None  # "the trip" in "before the trip": an event to date by recall
    anchor_relation: Relation | None = None
    asks_past: bool = False  # "before", "used to", "did I live": an earlier state (PAST_CUES)


Span = tuple[datetime, datetime]


def _at(now: datetime, d: date, hours: int = 0) -> datetime:
    return datetime.combine(d, time(), tzinfo=now.tzinfo) + timedelta(hours=hours)


def _days(now: datetime, start: date, end: date) -> Span:
    return _at(now, start), _at(now, end)


def _add_months(d: date, n: int) -> date:
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    return date(y, m + 1, min(d.day, calendar.monthrange(y, m + 1)[1]))


def _shift(d: date, n: int, unit: str) -> date:
    if unit in ("day", "week"):
        return d + timedelta(days=n * (7 if unit == "week" else 1))
    return _add_months(d, n * (12 if unit == "year" else 1))


# the latest month/day whose window (±pad days) has begun by today; Feb 29 finds a leap year
def _recent(month: int, day: int, today: date, pad: int = 0) -> date | None:
    for year in range(today.year + 1, today.year - 8, -1):
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if d - timedelta(days=pad) <= today:
            return d
    return None


# (fewest, most, exact) for "3", "three", "a", "a couple of", "a few"
def _count(text: str | None) -> tuple[int, int, bool]:
    words = [w for w in _key(text or "one").split() if w not in ("a", "of")] or ["a"]
    if words[0] in FUZZY_COUNTS:
        return *FUZZY_COUNTS[words[0]], False
    n = int(words[0]) if words[0].isdigit() else NUMBER_WORDS[words[0]]
    return n, n, True


def _exact_date(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    name = (m.groupdict().get("mname") or "").lower()
    loose = not (m["y"] or lead or re.search(r"\d(?:st|nd|rd|th)|\b(?:of|the)\b", m[0], re.I))
    if name in AMBIGUOUS_MONTHS and loose and (m.start() == 0 or m[0][0].isdigit()):
        return None  # "May 2 of us come?", "those 2 may help"
    month = MONTHS[name] if name else int(m["m"])
    try:  # a date with a year is that day; without, the most recent one (Feb 29 looks back)
        day = int(m["d"])
        d = date(int(m["y"]), month, day) if m["y"] else _recent(month, day, now.date())
    except ValueError:  # "29 February 2023", "31 April"
        d = None
    if d is None:
        return None
    span = (m["span"] or "").lower()
    if span == "week":  # "the week of May 8": the Monday-to-Sunday week holding it
        start = d - timedelta(days=d.weekday())
        return _days(now, start, start + timedelta(days=7))
    if span == "weekend":  # "the weekend of May 8": the nearest Saturday-Sunday, ties go forward
        sat = d + timedelta(days=5 - d.weekday() if d.weekday() >= 2 else -d.weekday() - 2)
        return _days(now, sat, sat + timedelta(days=2))
    return _days(now, d, d + timedelta(days=1))


def _holiday(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    name = _key(m["h"])
    pad = HOLIDAY_PADS.get(name, 0 if lead == "on" else HOLIDAY_PAD_DAYS)
    month, day = HOLIDAYS[name]
    d = date(int(m["y"]), month, day) if m["y"] else _recent(month, day, now.date(), pad)
    assert d is not None  # every holiday date exists every year
    return _days(now, d - timedelta(days=pad), d + timedelta(days=pad + 1))


def _day_phrase(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    back, h0, h1 = (DAY_PHRASES | RECENT_PHRASES)[_key(m["p"])]
    d = now.date() - timedelta(days=back)
    return _at(now, d, h0), _at(now, d, h1)


def _last_n(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    today = now.date()  # "in the past 3 weeks": rolling, from 3 weeks before today through today
    start = _shift(today, -_count(m["n"])[1], m["unit"].lower())
    return _days(now, start, today + timedelta(days=1))


def _ago(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    lo, hi, exact = _count(m["n"])  # "3 weeks ago": that day ± half a unit; "a few": the range
    unit, today = m["unit"].lower(), now.date()
    pad = timedelta(days=UNIT_PAD_DAYS[unit] if exact and (unit != "day" or hi > 2) else 0)
    end = _shift(today, -lo, unit) + pad + timedelta(days=1)
    return _days(now, _shift(today, -hi, unit) - pad, end)


def _weekend(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    today = now.date()  # the most recent Saturday-Sunday not after today
    sat = today - timedelta(days=(today.weekday() - 5) % 7)
    if m["rel"].lower() == "last" and today.weekday() >= 5:  # said on a weekend: the one before
        sat -= timedelta(days=7)
    return _days(now, sat, sat + timedelta(days=2))


def _month(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    name, today = m["mname"].lower(), now.date()
    cued = m["rel"] or m["part"] or m["y"] or m["ly"] or lead in MONTH_LEADS
    if name in AMBIGUOUS_MONTHS and not cued:
        return None
    month = MONTHS[name]
    if m["y"] or m["ly"]:
        year = int(m["y"]) if m["y"] else today.year - (m["ly"].lower() == "last")
    else:  # the most recent such month not after today; "last May" in May is a year back
        last = (m["rel"] or "").lower() == "last"
        year = today.year - (month > today.month or (month == today.month and last))
    start = date(year, month, 1)
    cut = {"early": (1, 11), "mid": (11, 21), "late": (21, 0)}.get((m["part"] or "").lower())
    end = start.replace(day=cut[1]) if cut and cut[1] else _add_months(start, 1)
    return _days(now, start.replace(day=cut[0]) if cut else start, end)


def _season(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    rel, today = " ".join((m["rel"] or "").lower().split()), now.date()
    if not (rel or m["y"] or lead in MONTH_LEADS):  # "the fall of Rome", "did I fall"
        return None
    start = date(int(m["y"]) if m["y"] else today.year, SEASONS[m["season"].lower()], 1)
    if not m["y"]:
        while start > today:  # the most recent that has begun
            start = _add_months(start, -12)
        if rel in ("last", "past", "this past") and _add_months(start, 3) > today:
            start = _add_months(start, -12)  # "last summer": the most recent that has ended
    return _days(now, start, _add_months(start, 3))


def _calendar(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    rel, unit, today = " ".join(m["rel"].lower().split()), m["unit"].lower(), now.date()
    if rel in ("past", "this past"):  # "past week": rolling, like "in the past week"
        return _days(now, _shift(today, -1, unit), today + timedelta(days=1))
    firsts = {"week": today - timedelta(days=today.weekday()), "month": today.replace(day=1)}
    start = firsts.get(unit, date(today.year, 1, 1))
    start = _shift(start, -1, unit) if rel in ("last", "previous") else start
    return _days(now, start, _shift(start, 1, unit))


def _year(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    if lead not in YEAR_LEADS and not m[0].lower().startswith("the"):  # "$2023", "code 2023"
        return None
    return _days(now, date(int(m["y"]), 1, 1), date(int(m["y"]) + 1, 1, 1))


def _weekday(m: re.Match[str], now: datetime, lead: str) -> Span | None:
    today = now.date()  # "on Tuesday": today counts; "last Tuesday": strictly before today
    back = (today.weekday() - WEEKDAYS[m["wd"].lower()]) % 7
    if back == 0 and _key(m["rel"] or "") in ("last", "this past"):
        back = 7
    d = today - timedelta(days=back)
    return _days(now, d, d + timedelta(days=1))


_MONTH, _YEAR = f"(?P<mname>{_alt(MONTHS)})", r"(?P<y>(?:19|20)\d{2})"
_DAY, _SPAN = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?\b", r"(?:the\s+(?P<span>week|weekend)\s+of\s+)?"
_COUNT = rf"(?P<n>\d{{1,3}}|(?:a\s+)?{_alt(FUZZY_COUNTS)}(?:\s+of)?|{_alt(NUMBER_WORDS)})"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_Handler = Callable[[re.Match[str], datetime, str], Span | None]
_RULES: list[tuple[re.Pattern[str], _Handler]] = [
    (re.compile(p, re.IGNORECASE), h)
    for p, h in [
        (rf"\b{_SPAN}{_YEAR}-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}})\b", _exact_date),
        (rf"\b{_SPAN}(?P<m>\d{{1,2}})/(?P<d>\d{{1,2}})/{_YEAR}\b", _exact_date),  # US m/d/y
        (rf"\b{_SPAN}(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH}\b(?:,?\s+{_YEAR}\b)?", _exact_date),
        (rf"\b{_SPAN}{_MONTH}\s+(?:the\s+)?{_DAY}(?:,?\s+{_YEAR}\b)?", _exact_date),
        (rf"\b(?P<h>{_alt(HOLIDAYS, possessive=True)})\b(?:\s+{_YEAR}\b)?", _holiday),
        (rf"\b(?P<p>{_alt(DAY_PHRASES)})\b", _day_phrase),
        (rf"\bthe\s+(?:last|past)\s+(?:{_COUNT}\s+)?{_UNIT}\b", _last_n),
        (rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", _ago),
        (r"\b(?P<rel>this\s+past|the\s+past|this|last|the)\s+weekend\b", _weekend),
        # "my December trip" names an event by its month, not when it was talked about
        (rf"(?<!\bmy\s)(?<!\bour\s)(?<!\byour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\btheir\s)"
         rf"\b(?:(?P<rel>last|this)\s+)?(?:(?P<part>early|mid|late)[\s-]+(?:in\s+)?)?{_MONTH}\b"
         rf"(?:\s+(?:of\s+)?{_YEAR}\b|\s+(?P<ly>last|this)\s+year\b)?", _month),
        (rf"\b(?:the\s+)?(?:(?P<rel>this\s+past|last|this|past)\s+)?(?:the\s+)?"
         rf"(?P<season>{_alt(SEASONS)})\b(?:\s+(?:of\s+)?{_YEAR}\b)?", _season),
        (r"\b(?P<rel>this\s+past|last|past|previous|this)\s+(?P<unit>week|month|year)\b",
         _calendar),
        (rf"\b(?:the\s+year\s+)?{_YEAR}\b(?![$%/-])", _year),
        # a habit is no date: "every Friday", "each Monday", "on Monday mornings"
        (rf"(?<!every\s)(?<!each\s)\b(?:(?P<rel>last|this\s+past|this)\s+)?"
         rf"(?P<wd>{_alt(WEEKDAYS)})\b(?!\s+(?:mornings|afternoons|evenings|nights)\b)",
         _weekday),
        (rf"\b(?P<p>{_alt(RECENT_PHRASES)})\b", _day_phrase),
    ]
]
_LEAD = re.compile(rf"\b(?P<w>{_alt(LEAD_WORDS)})\s+$", re.IGNORECASE)
_CURRENT, _WHEN, _FIRST, _PAST = (
    re.compile(r"\b(?:" + "|".join(c.replace(" ", r"\s+") for c in cues) + r")\b", re.I)
    for cues in (CURRENT_CUES, WHEN_CUES, FIRST_CUES, PAST_CUES)
)
_ANCHOR = re.compile(
    rf"\b(?P<rel>{_alt(ANCHOR_RELATIONS)})\s+(?P<event>{_alt(ANCHOR_OPENERS.split())}\b.*?)\s*"
    r"(?=[,.;:?!]|\b(?:and|but|or|so|when|while)\b|$)",
    re.IGNORECASE,
)


# the first rule's first valid match: (start, end, lead word, span), the lead word included
def _find(query: str, now: datetime) -> tuple[int, int, str, Span] | None:
    refused: list[tuple[int, int]] = []  # text a rule saw and refused ("31 April") stays refused
    for pattern, handler in _RULES:
        for m in pattern.finditer(query):
            if any(m.start() < e and m.end() > s for s, e in refused):
                continue
            lead_m = _LEAD.search(query, 0, m.start())
            lead = _key(lead_m["w"]) if lead_m else ""
            span = handler(m, now, lead)
            if span is not None:
                return (lead_m.start() if lead_m else m.start()), m.end(), lead, span
            refused.append(m.span())
    return None


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([?.!,;:])", r"\1", " ".join(text.split()))
    return re.sub(r"[,;:]+(?=[?.!]|$)", "", text).lstrip(",;: ").strip()


def resolve(query: str, now: datetime) -> TimeQuery:
    """The time reference of a recall query, resolved against `now` (timezone-aware)."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    flat = " ".join(query.split())
    window, text, taken = None, flat, (0, 0)
    found = _find(flat, now)
    if found:
        s, e, lead, (start, end) = found
        taken = (s, e)
        if lead in OPEN_AFTER:  # "since May": May to today; "after May": June to today
            tomorrow = _at(now, now.date() + timedelta(days=1))
            start, end = (start if lead == "since" else end), max(end, tomorrow)
        if lead not in OPEN_BEFORE and start < end:  # "before May", "after today": no window
            window, text = TimeWindow(start, end, flat[s:e]), _tidy(flat[:s] + " " + flat[e:])
    source, (s, e) = (text, (0, 0)) if window else (flat, taken)  # the time phrase is no event
    event = next((m for m in _ANCHOR.finditer(source) if m.start() >= e or m.end() <= s), None)
    return TimeQuery(
        window=window,
        asks_current=bool(_CURRENT.search(flat)),
        asks_when=bool(_WHEN.search(flat)),
        asks_first=bool(_FIRST.search(flat)),
        text=text,
        anchor=event["event"] if event else None,
        anchor_relation=ANCHOR_RELATIONS[_key(event["rel"])] if event else None,
        asks_past=bool(_PAST.search(flat)) and not _CURRENT.search(flat),
    )


def overlap_score(
    when: datetime | None, window: TimeWindow | None, slack_days: float = 3.0
) -> float:
    """1.0 inside the window, falling linearly to 0 over `slack_days` outside; 0.5 undated."""
    if window is None:
        return 1.0
    if when is None:
        return 0.5
    gap = max(window.start - when, when - window.end, timedelta()).total_seconds() / 86400
    if gap == 0:
        return 1.0
    return max(0.0, 1.0 - gap / slack_days) if slack_days > 0 else 0.0
