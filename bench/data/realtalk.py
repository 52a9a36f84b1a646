"""REALTALK's real conversations as a recall corpus (read from a local copy, never shipped).

REALTALK (Dong-Ho Lee, Adyasha Maharana, Jay Pujara, Xiang Ren, Francesco Barbieri,
"REALTALK: A 21-Day Real-World Dataset for Long-Term Conversation", arXiv 2502.13270,
2025; the public repository danny911kr/REALTALK, files data/Chat_*.json): ten real
conversations between pairs of people over 21 days, with questions whose evidence turns are
labelled. The repository has no licence file: it is used for evaluation only, and no part
of it is copied into this repository (tests build their own tiny conversation in its shape).

The data directory is given by `--data DIR` or the environment variable COGD_REALTALK_DIR;
when neither names a directory holding Chat_*.json files, `load` raises DataMissing with
how to get them.

Shape of one file: `name` ({speaker_1, speaker_2}); `session_N`: a list of messages
(`clean_text`, `speaker`, `date_time` "DD.MM.YYYY, HH:MM:SS", `dia_id` "D{N}:{i}");
`session_N_date_time`, `events_session_N` (not used); `qa`: a list of
{question, answer, evidence: [dia_id...], category} (1 fact, 2 date, 3 inference).

What the loader does with it:
- speakers' spelling is normalised ("elise" and "Elise" are one person: each word
  capitalised);
- every message is a turn of the conversation's account (role "user", the speaker named),
  in its dated session, external id "<handle>:<dia_id>";
- an evidence id that matches no turn's dia_id (ranges such as "D12:3-D12:5", lists in one
  string, typos) is left out of the scoring and counted (`unmatched_evidence`); a question
  left with no evidence at all is not asked and counted (`unscorable`). Nothing is repaired;
- a question is asked one day after the conversation's last message;
- `slice`: who the question names, against who said its evidence: "named speaker" (it
  names one speaker, who said some evidence turn), "other speaker" (it names one speaker,
  and every evidence turn was said by the other), "none or both".

`swap_speakers` makes the adversarial probe of issue 39 item 4 from a loaded corpus: every
"named speaker" question rewritten to name the other speaker instead, its evidence
unchanged (slice "swapped speaker"). A question may name the wrong person (the hidden
public benchmark's adversarial questions are built this way) and recall must still find
what was said: prefer the named speaker, never hide the other. The other speaker may have
said something that answers the rewritten question too, so R@1 understates what is right;
R@10 is the figure to read.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.data.convo import Conversation, ConvoCorpus, Question, Turn

ENV = "COGD_REALTALK_DIR"
CATEGORY_NAMES = {1: "fact", 2: "date", 3: "inference"}
CATEGORIES = ("fact", "date", "inference")
SLICES = ("named speaker", "other speaker", "none or both")
SWAPPED = "swapped speaker"  # swap_speakers' slice
BOTH_PEOPLE = re.compile(r"\b(?:both|each other|in common|together)\b|\b[A-Z][a-z]+ and [A-Z]")
# parameters are chosen on DEV; HELD_OUT is reported, never tuned on
DEV = tuple(range(1, 6))
HELD_OUT = tuple(range(6, 11))
HOW_TO_GET = (
    "REALTALK data not found. Get the conversations from the public repository "
    "https://github.com/danny911kr/REALTALK (files data/Chat_*.json; evaluation only, the "
    "repository has no licence: do not copy them into this one), then pass the directory "
    f"holding them with --data DIR or the environment variable {ENV}.")
_FILE = re.compile(r"Chat_(\d+)_.*\.json$")
_SESSION = re.compile(r"session_(\d+)$")


class DataMissing(RuntimeError):
    """No REALTALK directory: the message says how to get one."""


class BadData(ValueError):
    """A REALTALK file that does not have the expected shape: the message names the file."""


@dataclass
class RealtalkCorpus(ConvoCorpus):
    chats: tuple[int, ...] = ()
    slices: dict[str, str] = field(default_factory=dict)  # question id -> SLICES entry
    unmatched_evidence: int = 0  # evidence ids that match no turn (left out)
    unscorable: int = 0  # questions with no matching evidence id (not asked)
    questions_in_files: int = 0


def data_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """The directory of Chat_*.json files: `given`, else $COGD_REALTALK_DIR."""
    raw = given if given is not None else os.environ.get(ENV)
    if not raw:
        raise DataMissing(HOW_TO_GET)
    path = Path(raw).expanduser()
    if not path.is_dir() or not any(_FILE.search(p.name) for p in path.iterdir()):
        raise DataMissing(f"{path} holds no Chat_*.json file. {HOW_TO_GET}")
    return path


def speaker_name(raw: str) -> str:
    """One spelling per person: each word capitalised ("elise" -> "Elise")."""
    return " ".join(w[:1].upper() + w[1:].lower() for w in raw.split())


def parse_time(raw: str, where: str) -> datetime:
    try:
        return datetime.strptime(raw.strip(), "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC)
    except (ValueError, AttributeError) as exc:
        raise BadData(f"{where}: date_time {raw!r} is not 'DD.MM.YYYY, HH:MM:SS'") from exc


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]+", text)}


def named(question: str, speakers: tuple[str, ...]) -> list[str]:
    """The speakers a question names (any word of the speaker's name, any case)."""
    words = _words(question)
    return [s for s in speakers if _words(s) & words]


def load_chat(path: Path, number: int) -> tuple[list[Turn], list[Question], Conversation,
                                                 dict[str, str], int, int]:
    """One conversation: its turns, scorable questions, the slice of each, and the counts
    of unmatched evidence ids and unscorable questions."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadData(f"{path.name}: not readable JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("qa"), list):
        raise BadData(f"{path.name}: expected an object with a 'qa' list")
    handle = f"realtalk{number:02d}"
    sessions = sorted((int(m.group(1)), k) for k in data
                      if (m := _SESSION.fullmatch(k)) and isinstance(data[k], list))
    if not sessions:
        raise BadData(f"{path.name}: no session_N list")
    turns: list[Turn] = []
    said_by: dict[str, str] = {}
    for n, key in sessions:
        for i, msg in enumerate(data[key]):
            where = f"{path.name} {key}[{i}]"
            if not isinstance(msg, dict) or not all(
                    isinstance(msg.get(f), str) for f in ("speaker", "date_time", "dia_id")):
                raise BadData(f"{where}: expected speaker, date_time and dia_id strings")
            text = msg.get("clean_text")
            if not isinstance(text, str) or not text.strip():
                continue  # an image without words: nothing to retrieve
            speaker = speaker_name(msg["speaker"])
            ext = f"{handle}:{msg['dia_id'].strip()}"
            said_by[ext] = speaker
            turns.append(Turn(user=handle, session=f"{handle}-s{n:02d}", speaker=speaker,
                              role="user", content=text.strip(),
                              timestamp=parse_time(msg["date_time"], where).isoformat(),
                              external_id=ext))
    if not turns:
        raise BadData(f"{path.name}: no message with text")
    speakers = tuple(dict.fromkeys(t.speaker for t in turns))
    asked = max(datetime.fromisoformat(t.timestamp) for t in turns) + timedelta(days=1)
    questions: list[Question] = []
    slices: dict[str, str] = {}
    unmatched = unscorable = 0
    for j, qa in enumerate(data["qa"]):
        if not isinstance(qa, dict) or not isinstance(qa.get("question"), str):
            raise BadData(f"{path.name} qa[{j}]: expected an object with a question")
        category = CATEGORY_NAMES.get(qa.get("category"))  # type: ignore[arg-type]
        if category is None:
            raise BadData(f"{path.name} qa[{j}]: category {qa.get('category')!r} is not "
                          f"one of {sorted(CATEGORY_NAMES)}")
        ids = [f"{handle}:{str(e).strip()}" for e in qa.get("evidence") or []]
        evidence = tuple(dict.fromkeys(e for e in ids if e in said_by))
        unmatched += sum(1 for e in ids if e not in said_by)
        if not evidence:
            unscorable += 1
            continue
        who = named(qa["question"], speakers)
        qid = f"{handle}-q{j + 1:03d}"
        if len(who) != 1:
            slices[qid] = "none or both"
        elif any(said_by[e] == who[0] for e in evidence):
            slices[qid] = "named speaker"
        else:
            slices[qid] = "other speaker"
        questions.append(Question(
            id=qid, conversation=handle, category=category, text=qa["question"].strip(),
            evidence=evidence, stale=(), asked_at=asked.isoformat(),
            answer=str(qa.get("answer", "")), about=who[0] if len(who) == 1 else ""))
    sessions_used = len({t.session for t in turns})
    pair = (*speakers, "", "")
    conv = Conversation(handle=handle, speakers=(pair[0], pair[1]), sessions=sessions_used,
                        turns=len(turns), asked_at=asked.isoformat())
    return turns, questions, conv, slices, unmatched, unscorable


def load(directory: str | os.PathLike[str] | None = None,
         chats: tuple[int, ...] | None = None) -> RealtalkCorpus:
    """The conversations numbered `chats` (Chat_<n>_*.json; None: every file found)."""
    root = data_dir(directory)
    files = {int(m.group(1)): p for p in sorted(root.iterdir()) if (m := _FILE.search(p.name))}
    wanted = tuple(sorted(files)) if chats is None else tuple(chats)
    absent = [n for n in wanted if n not in files]
    if absent:
        raise DataMissing(f"{root} has no Chat_{absent[0]}_*.json (chats wanted: "
                          f"{list(wanted)}). {HOW_TO_GET}")
    out = RealtalkCorpus(turns=[], questions=[], conversations=[], seed=0, chats=wanted)
    for n in wanted:
        turns, questions, conv, slices, unmatched, unscorable = load_chat(files[n], n)
        out.turns += turns
        out.questions += questions
        out.conversations.append(conv)
        out.slices.update(slices)
        out.unmatched_evidence += unmatched
        out.unscorable += unscorable
        out.questions_in_files += len(questions) + unscorable
    return out


def swap_speakers(corpus: RealtalkCorpus) -> RealtalkCorpus:
    """The corpus's "named speaker" questions, each naming the other speaker of its
    conversation in place of the one it named (every word of the name, any case; a
    possessive stays: "Ana's" -> "Bo's"), ids suffixed "-swap", evidence unchanged,
    slice SWAPPED; the turns and conversations are the same objects (one import serves
    both). Left out: questions of a conversation without two speakers, and questions
    about a pair (BOTH_PEOPLE: "both", "each other", "in common", "together", or two
    capitalised words joined by "and"), where the other name is often the first speaker's
    nickname ("Kate and Elise" in Chat_1, whose speakers are Emi and Elise) and a swap
    would name one person twice."""
    speakers = {c.handle: [s for s in c.speakers if s] for c in corpus.conversations}
    questions: list[Question] = []
    slices: dict[str, str] = {}
    for q in corpus.questions:
        pair = speakers.get(q.conversation, [])
        if (corpus.slices.get(q.id) != "named speaker" or len(pair) != 2
                or q.about not in pair or BOTH_PEOPLE.search(q.text)):
            continue
        other = pair[1] if q.about == pair[0] else pair[0]
        pattern = r"\b(?:" + "|".join(re.escape(w) for w in q.about.split()) + r")\b"
        text = re.sub(pattern, other, q.text, flags=re.IGNORECASE)
        # a multi-word name becomes the other name once, not once a word
        text = re.sub(r"(?:\b" + re.escape(other) + r"\b\s*){2,}", other + " ", text).strip()
        qid = f"{q.id}-swap"
        questions.append(replace(q, id=qid, text=text, about=other))
        slices[qid] = SWAPPED
    return RealtalkCorpus(turns=corpus.turns, questions=questions,
                          conversations=corpus.conversations, seed=corpus.seed,
                          chats=corpus.chats, slices=slices,
                          unmatched_evidence=corpus.unmatched_evidence,
                          unscorable=corpus.unscorable,
                          questions_in_files=corpus.questions_in_files)


def counts(corpus: ConvoCorpus) -> dict[str, int]:
    c = Counter(q.category for q in corpus.questions)
    return {cat: c[cat] for cat in CATEGORIES}


def describe(corpus: RealtalkCorpus) -> dict[str, Any]:
    return {"chats": list(corpus.chats), "conversations": len(corpus.conversations),
            "turns": len(corpus.turns), "questions_in_files": corpus.questions_in_files,
            "questions": len(corpus.questions), "counts": counts(corpus),
            "unmatched_evidence_ids": corpus.unmatched_evidence,
            "unscorable_questions": corpus.unscorable,
            "slices": dict(Counter(corpus.slices.values()))}
