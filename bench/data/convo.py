"""Multi-speaker dated conversations with graded questions (a LoCoMo-shaped dev benchmark).

    python -m bench convo --seed 7 --out DIR   # seed 7: dev / tuning; seed 11: held out

Writes DIR/turns.jsonl (one `cogd import` line per turn) and DIR/questions.jsonl. Stdlib only
and deterministic: the same arguments give byte-identical files.

Each conversation is two friends (named, both role "user") chatting in 24 dated sessions, a
few days apart, over five to seven months: greetings, small talk, short replies, and facts
planted as natural turns, often as a question and a reply whose meaning needs the question.
The conversation's handle (`c01`...) is the account it belongs to (`user`); `speaker` says
who spoke. Question categories (about 28 per conversation):

- single_hop: one fact about a named speaker, in other words than the turn; when the value is
  in the other speaker's question and the owner only confirms ("Yep, last week!") both turns
  are evidence;
- multi_hop: two or three turns in different sessions, all needed;
- temporal: the same frame ("Made X tonight") said by the same person at several dates; the
  question's date (relative to `asked_at`, a month, part of a month, or the week before /
  after an anchor event, whose turn is in `support`) selects one; `window` is that span;
- inference: two or three cue turns, none naming the asked-about notion;
- adversarial: both speakers said something on the topic; evidence is the named speaker's
  turn, the other speaker's turn is in `stale`;
- updated: evidence is the newer statement, `stale` the older one;
- never_said: nothing in the corpus answers it; no turn holds any of `absent_terms`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from random import Random
from typing import Any

from bench.data import convo_pools as pools

CATEGORIES = ("single_hop", "multi_hop", "temporal", "inference", "adversarial", "updated",
              "never_said")
PER_CONVERSATION = {"single_hop": 6, "multi_hop": 4, "inference": 3, "adversarial": 4,
                    "updated": 3, "never_said": 3}  # + 5 temporal
TEMPORAL_INSTANCES = 4  # (person, frame) pairs said at several dates
OCCURRENCES = 4  # dates per instance
MIN_GAP_DAYS = 18  # between one person's sayings of one frame: every window holds one
BASE = date(2023, 1, 2)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
_ALTERNATIVES = re.compile(r"\[([^\]]*)\]")  # "[a|b|c]" in chatter: one of them
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class Turn:
    """One JSONL line of `cogd import`."""

    user: str  # the account the conversation belongs to
    session: str
    speaker: str
    role: str
    content: str
    timestamp: str  # ISO 8601 with "+00:00"
    external_id: str

    def as_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False)


@dataclass(frozen=True)
class Question:
    id: str
    conversation: str  # the user handle
    category: str
    text: str
    evidence: tuple[str, ...]
    stale: tuple[str, ...]
    asked_at: str
    answer: str
    about: str  # the speaker the question names
    window: tuple[str, str] | None = None  # temporal: [start, end) the date resolves to
    support: tuple[str, ...] = ()  # temporal: the anchor event's turn
    absent_terms: tuple[str, ...] = ()  # never_said

    def as_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False)


@dataclass(frozen=True)
class Conversation:
    handle: str
    speakers: tuple[str, str]
    sessions: int
    turns: int
    asked_at: str


@dataclass
class ConvoCorpus:
    turns: list[Turn]
    questions: list[Question]
    conversations: list[Conversation]
    seed: int

    def write(self, directory: str | Path) -> None:
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        (out / "turns.jsonl").write_text("".join(t.as_json() + "\n" for t in self.turns),
                                         encoding="utf-8", newline="\n")
        (out / "questions.jsonl").write_text(
            "".join(q.as_json() + "\n" for q in self.questions), encoding="utf-8",
            newline="\n")

    def counts(self) -> dict[str, int]:
        c = Counter(q.category for q in self.questions)
        return {cat: c[cat] for cat in CATEGORIES}


def generate(n_conversations: int = 10, seed: int = 7, sessions: int = 24,
             turns_per_session: int = 20) -> ConvoCorpus:
    """The corpus: conversations c01..cNN, their turns in time order, then the questions."""
    if not 1 <= n_conversations <= len(pools.NAMES) // 2:
        raise ValueError(f"n_conversations must be 1..{len(pools.NAMES) // 2}")
    if sessions < 12 or turns_per_session < 12:
        raise ValueError("need at least 12 sessions of at least 12 turns")
    rng = Random(seed)
    names = rng.sample(list(pools.NAMES), 2 * n_conversations)
    corpus = ConvoCorpus([], [], [], seed)
    for n in range(n_conversations):
        start = BASE + timedelta(days=rng.randrange(0, 240))
        b = _Builder(f"c{n + 1:02d}", (names[2 * n], names[2 * n + 1]), start,
                     Random(seed * 10_007 + n), sessions, turns_per_session)
        turns, questions = b.build()
        corpus.turns += turns
        corpus.questions += questions
        corpus.conversations.append(Conversation(b.handle, b.names, sessions, len(turns),
                                                 b.asked.isoformat()))
    return corpus


# ---------------------------------------------------------------- building one conversation

@dataclass
class _Line:
    who: str
    text: str
    marks: list[tuple[str, str]] = field(default_factory=list)  # (question key, role)


@dataclass
class _Spec:
    key: str
    category: str
    text: str
    answer: str
    about: str
    window: tuple[datetime, datetime] | None = None
    absent: tuple[str, ...] = ()


def _fill(text: str, slots: dict[str, str]) -> str:
    caps = {k.upper(): v[:1].upper() + v[1:] for k, v in slots.items() if k.islower()}
    return text.format(**slots, **caps)


def _midnight(d: date) -> datetime:
    return datetime.combine(d, time(0), UTC)


def _month_window(d: date, part: str = "") -> tuple[date, date]:
    first = d.replace(day=1)
    nxt = (first + timedelta(days=32)).replace(day=1)
    bounds = {"": (first, nxt), "early": (first, first.replace(day=11)),
              "mid-": (first.replace(day=11), first.replace(day=21)),
              "late": (first.replace(day=21), nxt)}
    return bounds[part]


def relative_phrase(day: date, asked: date) -> tuple[str, date, date]:
    """How someone asking on `asked` names the day `day`: (phrase, window start, end)."""
    monday = asked - timedelta(days=asked.weekday())
    back = (asked.weekday() - 6) % 7 or 7
    sunday = asked - timedelta(days=back)
    if (asked - day).days == 1:
        return "yesterday", day, asked
    if sunday - timedelta(days=1) <= day <= sunday:
        return "last weekend", sunday - timedelta(days=1), sunday + timedelta(days=1)
    if monday <= day < asked:
        return "earlier this week", monday, asked
    if monday - timedelta(days=7) <= day < monday:
        return "last week", monday - timedelta(days=7), monday
    if monday - timedelta(days=14) <= day < monday - timedelta(days=7):
        return "the week before last", monday - timedelta(days=14), monday - timedelta(days=7)
    return f"on {day.day} {MONTHS[day.month - 1]}", day, day + timedelta(days=1)


class _Builder:
    def __init__(self, handle: str, names: tuple[str, str], start: date, rng: Random,
                 n_sessions: int, per_session: int) -> None:
        self.handle, self.names, self.rng = handle, names, rng
        self.per_session = per_session
        self.days = [start]
        for _ in range(n_sessions - 1):
            self.days.append(self.days[-1] + timedelta(days=rng.randint(3, 10)))
        self.asked = datetime.combine(self.days[-1] + timedelta(days=rng.randint(1, 4)),
                                      time(12), UTC)
        self.plan: list[list[list[_Line]]] = [[] for _ in range(n_sessions)]
        self.specs: list[_Spec] = []
        self.frames: set[str] = set()
        self._used: dict[str, list[str]] = {}
        self._deck: list[tuple[str, ...]] = []  # filler, dealt without repeats until spent

    # -- helpers
    def other(self, who: str) -> str:
        return self.names[1] if who == self.names[0] else self.names[0]

    def draw(self, pool: str, k: int = 1) -> list[str]:
        used = self._used.setdefault(pool, [])
        got = self.rng.sample([v for v in pools.POOLS[pool] if v not in used], k)
        used += got
        return got

    def blocked(self, frame: str) -> bool:
        """A frame of this conversation would answer `frame`'s question, or vice versa."""
        return any(frame in pair and set(pair) & self.frames for pair in pools.EXCLUSIVE)

    def pick_frames(self, category: str, table: dict[str, Any], k: int) -> list[str]:
        chosen: list[str] = []
        for key in self.rng.sample(sorted(table), len(table)):
            if len(chosen) < k and not self.blocked(f"{category}:{key}"):
                chosen.append(key)
                self.frames.add(f"{category}:{key}")
        return chosen

    def spec(self, category: str, text: str, answer: str, about: str, **kw: Any) -> str:
        key = f"{category}{len(self.specs)}"
        self.specs.append(_Spec(key, category, text, answer, about, **kw))
        return key

    def line(self, tagged: str, owner: str, slots: dict[str, str],
             *marks: tuple[str, str]) -> _Line:
        who, text = tagged.split("|", 1)
        person = owner if who == "O" else self.other(owner)
        return _Line(person, _fill(text, {"O": owner, "P": self.other(owner), **slots}),
                     list(marks))

    def said(self, owner: str, text: str, *marks: tuple[str, str], react: float = 0.7,
             follow: float = 0.25) -> list[_Line]:
        """A statement, maybe a reaction from the other speaker, maybe a follow-up."""
        ex = [_Line(owner, text, list(marks))]
        if self.rng.random() < react:
            ex.append(_Line(self.other(owner), self.rng.choice(pools.REACTIONS)))
            if self.rng.random() < follow:
                ex.append(_Line(owner, self.rng.choice(pools.FOLLOW_UPS)))
        return ex

    def spread(self, k: int) -> list[int]:
        """k sessions, one per equal slice of the conversation, so they lie weeks apart."""
        edges = [len(self.days) * i // k for i in range(k + 1)]
        return [self.rng.randrange(edges[i], edges[i + 1]) for i in range(k)]

    def anywhere(self) -> int:
        return self.rng.randrange(len(self.days))

    def distract(self, lines: Any, owner: str, slots: dict[str, str], k: int) -> None:
        for tagged in self.rng.sample(list(lines), min(k, len(lines))):
            ln = self.line(tagged, owner, slots)
            self.plan[self.anywhere()].append(self.said(ln.who, ln.text, react=0.5))

    # -- categories
    def single_hop(self) -> None:
        for key in self.pick_frames("single_hop", pools.SINGLE_HOP,
                                    PER_CONVERSATION["single_hop"]):
            f: dict[str, Any] = pools.SINGLE_HOP[key]
            owner = self.rng.choice(self.names)
            (value,) = self.draw(f["pool"])
            names = f.get("slots", ("v",))
            slots = dict(zip(names, value.split(":"), strict=True))
            variant = self.rng.choice(["direct", "open", "ask"] if "ask" in f
                                      else ["direct", "open"])
            answer = f["answer_short"] if variant == "ask" and "answer_short" in f \
                else f["answer"]
            # the first wording shares a word with the turn, the second is a paraphrase
            text = self.rng.choices(f["q"], weights=(2, 1))[0]
            q = self.spec("single_hop", _fill(text, {"O": owner, **slots}),
                          _fill(answer, slots), owner)
            ev = (q, "evidence")
            if variant == "direct":
                ex = self.said(owner, _fill(self.rng.choice(f["direct"]), slots), ev)
            elif variant == "open":
                ex = [self.line("P|" + self.rng.choice(f["open"]), owner, slots),
                      self.line("O|" + self.rng.choice(f["reply"]), owner, slots, ev)]
            else:  # the value is in the other speaker's question; the owner confirms
                ex = [self.line("P|" + self.rng.choice(f["ask"]), owner, slots, ev),
                      self.line("O|" + self.rng.choice(f["short"]), owner, slots, ev)]
            self.plan[self.anywhere()].append(ex)
            self.distract(f["distract"], owner, slots, self.rng.randint(1, 2))

    def multi_hop(self) -> None:
        for key in self.pick_frames("multi_hop", pools.MULTI_HOP, PER_CONVERSATION[
                "multi_hop"]):
            f: dict[str, Any] = pools.MULTI_HOP[key]
            owner = self.rng.choice(self.names)
            k = self.rng.choice((2, 3, 3))
            values = self.draw(f["pool"], k)
            q = self.spec("multi_hop", _fill(self.rng.choice(f["q"]), {"O": owner}),
                          ", ".join(values), owner)
            templates = self.rng.sample(list(f["lines"]), k)
            for s, v, t in zip(self.spread(k), values, templates, strict=True):
                self.plan[s].append(self.said(owner, _fill(t, {"v": v}), (q, "evidence")))
            (w,) = self.draw(f["pool"])
            self.distract(f["distract"], owner, {"w": w}, 2)

    def inference(self) -> None:
        for key in self.pick_frames("inference", pools.INFERENCE, PER_CONVERSATION[
                "inference"]):
            f: dict[str, Any] = pools.INFERENCE[key]
            owner = self.rng.choice(self.names)
            cues = self.rng.sample(list(f["cues"]), self.rng.choice((2, 3)))
            q = self.spec("inference", _fill(f["q"], {"O": owner}),
                          _fill(f["answer"], {"O": owner}), owner)
            for s, cue in zip(self.spread(len(cues)), cues, strict=True):
                self.plan[s].append(self.said(owner, cue, (q, "evidence")))
            self.distract([f["contrary"]], owner, {}, 1)

    def adversarial(self) -> None:
        for key in self.pick_frames("adversarial", pools.ADVERSARIAL, PER_CONVERSATION[
                "adversarial"]):
            f: dict[str, Any] = pools.ADVERSARIAL[key]
            owner = self.rng.choice(self.names)
            slots = {"v": self.draw(f["pool"])[0] if f["pool"] else "",
                     "t": str(self.rng.randint(44, 59)), "O": owner}
            q = self.spec("adversarial", _fill(f["q"], slots), _fill(f["answer"], slots),
                          owner)
            ev, stale = (q, "evidence"), (q, "stale")
            theirs = self.line("P|" + self.rng.choice(f["other"]), owner, slots, stale)
            n = len(self.days)
            at = [self.rng.randrange(n // 3, n), self.rng.randrange(n // 3, n)]
            if self.rng.random() < 0.5:  # a reply that needs the question before it
                self.plan[at[0]].append([self.line("P|" + f["prompt"], owner, slots),
                                         self.line("O|" + f["reply"], owner, slots, ev)])
                self.plan[at[1]].append(self.said(theirs.who, theirs.text, stale))
            else:
                own = self.line("O|" + self.rng.choice(f["own"]), owner, slots, ev)
                if self.rng.random() < 0.5:  # in one exchange, either order
                    self.plan[at[0]].append([own, theirs] if self.rng.random() < 0.5
                                            else [theirs, own])
                else:
                    self.plan[at[0]].append(self.said(own.who, own.text, ev))
                    self.plan[at[1]].append(self.said(theirs.who, theirs.text, stale))
            # the topic comes up before, without the opinions
            for tagged in self.rng.sample(list(f["mentions"]), 2):
                ln = self.line(tagged, owner, slots)
                self.plan[self.rng.randrange(min(at))].append(self.said(ln.who, ln.text))

    def updated(self) -> None:
        n = len(self.days)
        for key in self.pick_frames("updated", pools.UPDATED, PER_CONVERSATION["updated"]):
            f: dict[str, Any] = pools.UPDATED[key]
            owner = self.rng.choice(self.names)
            v1, v2 = self.draw(f["pool"], 2)
            slots = {"v1": v1, "v2": v2}
            q = self.spec("updated", _fill(f["q"], {"O": owner}), _fill(f["answer"], slots),
                          owner)
            old = _fill(self.rng.choice(f["old"]), slots)
            new = _fill(self.rng.choice(f["new"]), slots)
            self.plan[self.rng.randrange(0, n // 3)].append(self.said(owner, old, (q, "stale")))
            self.plan[self.rng.randrange(n // 2, n)].append(
                self.said(owner, new, (q, "evidence")))

    def never_said(self) -> None:
        for text, absent in self.rng.sample(pools.NEVER_SAID, PER_CONVERSATION["never_said"]):
            owner = self.rng.choice(self.names)
            self.spec("never_said", _fill(text, {"O": owner}), "", owner, absent=absent)

    def temporal(self) -> None:
        fams = [k for k in sorted(pools.TEMPORAL) if not self.blocked(f"temporal:{k}")]
        inst = self.rng.sample([(w, f) for w in self.names for f in fams], TEMPORAL_INSTANCES)
        n, days = len(self.days), self.days
        occ: list[list[int]] = [[] for _ in inst]
        occ[0].append(self.rng.choice((n - 1, n - 2)))  # asked about relative to asked_at
        cands = [(s, s - 1, "before") for s in range(2, n - 1) if (days[s] - days[s - 1]).days
                 <= 6] + [(s, s + 1, "after") for s in range(1, n - 2)
                          if (days[s + 1] - days[s]).days <= 6]
        anchor_s, event_s, side = self.rng.choice(cands)
        occ[1].append(event_s)
        for i in range(len(inst)):
            for s in self.rng.sample(range(n), n):
                if len(occ[i]) < OCCURRENCES and all(
                        abs((days[s] - days[x]).days) >= MIN_GAP_DAYS for x in occ[i]):
                    occ[i].append(s)
        asked = self.asked.date()
        questions: list[tuple[int, int, str, date, date]] = []  # instance, session, when
        phrase, lo, hi = relative_phrase(days[occ[0][0]], asked)
        questions.append((0, occ[0][0], phrase, lo, hi))
        anchors = [a for a in pools.ANCHORS if not (a == "driving test" and inst[1][1] == "car")]
        anchor = self.rng.choice(anchors)
        a_day = days[anchor_s]
        lo, hi = ((a_day - timedelta(days=7), a_day) if side == "before"
                  else (a_day + timedelta(days=1), a_day + timedelta(days=8)))
        pos = pools.NAMES[inst[1][0]]
        questions.append((1, event_s, f"in the week {side} {pos} {anchor}", lo, hi))
        rest = self.rng.sample([(i, s) for i, ss in enumerate(occ) for s in ss[1:]],
                               sum(len(ss) - 1 for ss in occ))
        for whole in (True, True, False):  # two months, one part of a month
            for i, s in rest:
                part = "" if whole else ("early", "mid-", "late")[min(2, (days[s].day - 1) // 10)]
                lo, hi = _month_window(days[s], part)
                unique = sum(lo <= days[x] < hi for x in occ[i]) == 1
                if unique and all(s != u for _, u, *_ in questions):
                    name = MONTHS[days[s].month - 1]
                    questions.append((i, s, f"in {part + ' ' if part else ''}{name}"
                                      .replace("- ", "-"), lo, hi))
                    rest.remove((i, s))
                    break
        value = {(i, s): self.draw(pools.TEMPORAL[inst[i][1]]["pool"])[0]
                 for i, ss in enumerate(occ) for s in ss}
        marks: dict[tuple[int, int], tuple[str, str]] = {}
        for i, s, when, lo, hi in questions:
            assert sum(lo <= days[x] < hi for x in occ[i]) == 1, (inst[i], when)
            who, fam = inst[i]
            text = _fill(self.rng.choice(pools.TEMPORAL[fam]["q"]), {"O": who, "when": when})
            answer = f"it {value[i, s]}" if fam == "car" else value[i, s]
            window = (_midnight(lo), min(_midnight(hi), self.asked))  # nothing said after
            marks[(i, s)] = (self.spec("temporal", text, answer, who, window=window),
                             "evidence")
        self.plan[anchor_s].append(self.said(inst[1][0], pools.ANCHORS[anchor],
                                             (marks[(1, event_s)][0], "support")))
        for i, (who, fam) in enumerate(inst):
            f: dict[str, Any] = pools.TEMPORAL[fam]
            for s in occ[i]:
                self.plan[s].append(self.frame_said(who, f, value[i, s], marks.get((i, s))))
            if (self.other(who), fam) not in inst:  # the other speaker, same frame, any date
                for s in self.rng.sample(range(n), 2):
                    self.plan[s].append(self.frame_said(self.other(who), f,
                                                        self.draw(f["pool"])[0], None))

    def frame_said(self, who: str, f: dict[str, Any], v: str,
                   mark: tuple[str, str] | None) -> list[_Line]:
        r = self.rng.choice(f["react"])
        text = _fill(self.rng.choice(f["lines"]), {"v": v, "r": r})
        ex = self.said(who, text, *([mark] if mark else []))
        if self.rng.random() < 0.3:
            ex.insert(0, _Line(self.other(who), self.rng.choice(
                ("How was your day?", "What did you get up to today?", "Anything new?"))))
        return ex

    # -- layout
    def filler(self, template: tuple[str, ...], first: str, day: date) -> list[_Line]:
        slots = {"X": first, "Y": self.other(first), "month": MONTHS[day.month - 1],
                 "day": WEEKDAYS[day.weekday()]}
        out = []
        for tagged in template:
            who, text = tagged.split("|", 1)
            text = _ALTERNATIVES.sub(lambda m: self.rng.choice(m[1].split("|")), text)
            out.append(_Line(first if who == "X" else self.other(first), _fill(text, slots)))
        return out

    def build(self) -> tuple[list[Turn], list[Question]]:
        self.single_hop()
        self.multi_hop()
        self.inference()
        self.adversarial()
        self.updated()
        self.temporal()
        self.never_said()
        turns: list[Turn] = []
        found: dict[str, dict[str, list[str]]] = {s.key: {} for s in self.specs}
        for s, day in enumerate(self.days):
            first = self.rng.choice(self.names)
            opener = self.filler(self.rng.choice(pools.OPENERS), first, day)
            closer = self.filler(self.rng.choice(pools.CLOSERS), self.rng.choice(self.names),
                                 day)
            body = list(self.plan[s])
            size = len(opener) + len(closer) + sum(len(ex) for ex in body)
            target = self.per_session + self.rng.randint(-3, 4)
            while size < target:
                if not self._deck:
                    self._deck = self.rng.sample(pools.FILLER, len(pools.FILLER))
                body.append(self.filler(self._deck.pop(), self.rng.choice(self.names), day))
                size += len(body[-1])
            self.rng.shuffle(body)
            clock = datetime.combine(day, time(self.rng.randint(17, 20),
                                               self.rng.randrange(60)), UTC)
            session = f"{self.handle}-s{s + 1:02d}"
            for j, ln in enumerate(opener + [x for ex in body for x in ex] + closer):
                clock += timedelta(seconds=self.rng.randint(20, 150))
                ext = f"{session}-t{j + 1:03d}"
                turns.append(Turn(self.handle, session, ln.who, "user", ln.text,
                                  clock.isoformat(), ext))
                for key, role in ln.marks:
                    found[key].setdefault(role, []).append(ext)
        asked = self.asked.isoformat()
        order = {c: i for i, c in enumerate(CATEGORIES)}
        questions = []
        for n, sp in enumerate(sorted(self.specs, key=lambda x: order[x.category]), 1):
            got = found[sp.key]
            window = None if sp.window is None else (sp.window[0].isoformat(),
                                                     sp.window[1].isoformat())
            questions.append(Question(
                f"{self.handle}-q{n:02d}", self.handle, sp.category, sp.text,
                tuple(got.get("evidence", ())), tuple(got.get("stale", ())), asked, sp.answer,
                sp.about, window, tuple(got.get("support", ())), sp.absent))
        return turns, questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--turns-per-session", type=int, default=20)
    parser.add_argument("--out", required=True, help="directory for turns.jsonl and "
                        "questions.jsonl")
    args = parser.parse_args(argv)
    corpus = generate(args.conversations, args.seed, args.sessions, args.turns_per_session)
    corpus.write(args.out)
    print(f"{len(corpus.turns)} turns in {len(corpus.conversations)} conversations, "
          f"{len(corpus.questions)} questions: {corpus.counts()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
