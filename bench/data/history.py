"""A long generated chat history for bench.ingest: one person's conversations with an
assistant over two years, as cogd JSONL lines and as ChatGPT's `conversations.json`.

Stdlib only. Conversations of 6-60 messages alternate user and assistant; a user message
is 6-30 words, an assistant's 15-70, built from topic word pools and templates so that
nearly every text is distinct (an import embeds each distinct text once: a history of
repeated lines would flatter it). The ChatGPT export holds the same messages in the
export's shape: a `mapping` tree per conversation (a root, a hidden system message, then
the messages, `current_node` the last), `create_time` in epoch seconds, so both formats
carry the same turns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any

TOPICS = {
    "cooking": "risotto saffron stock onion pan oven garlic basil dough yeast knife pasta "
               "lentils curry cumin butter thyme broth skillet marinade",
    "travel": "Lisbon Porto train ferry hostel passport visa luggage airport museum beach "
              "tram itinerary booking hike castle harbour market bus",
    "code": "Python function test database index query cache deploy branch commit lint "
            "type error stack trace container schema migration API endpoint",
    "health": "running knee stretch sleep protein physio marathon cadence shoes recovery "
              "injury yoga breathing heart rate tempo intervals",
    "garden": "tomatoes compost seedlings basil mulch soil aphids watering pruning roses "
              "greenhouse frost seeds beans lettuce trellis",
    "money": "budget rent savings invoice taxes pension mortgage interest receipt bank "
             "account transfer refund subscription salary",
    "music": "guitar chords scales piano metronome song lyrics band rehearsal amplifier "
             "recording vinyl concert rhythm tuning",
    "family": "sister birthday parents wedding nephew grandmother visit gift holiday "
              "dinner school weekend anniversary cousin",
}
NAMES = ["Ana", "Ben", "Carla", "Dev", "Elif", "Femi", "Gus", "Hana", "Ivo", "Jia", "Kofi",
         "Lena", "Mateo", "Nia", "Omar", "Pia"]
USER = [
    "How do I {v} the {a} without the {b}?",
    "I tried {a} with {b} yesterday and it went {adj}.",
    "Can you remind me what {n} said about the {a}?",
    "My {a} keeps getting {adj} when I add {b}, any idea why?",
    "Should I pick {a} or {b} for {n}'s {c}?",
    "Quick one: is {a} {adj} enough for the {b} on {day}?",
    "I finally {past} the {a} and the {b} is {adj} now.",
    "What would you change in my plan for the {a}, {b} and {c}?",
]
ASSISTANT = [
    "Start with the {a}: {v} it slowly, then add the {b}. If it still feels {adj}, the "
    "{c} is usually the reason, and {n} will notice the difference.",
    "Good question. The {a} depends on the {b}; on {day} you could {v} the {c} first and "
    "keep the {d} for later, which keeps it {adj}.",
    "Here is a short plan: {v} the {a}, check the {b} after a day, and only then change "
    "the {c}. Most people skip the {d} step and regret it.",
    "It sounds {adj} rather than wrong. Try less {a} and more {b}; if {n} asks, the {c} "
    "and the {d} matter more than the exact amount.",
    "Two options. Either {v} the {a} now and accept a {adj} {b}, or wait until {day} and "
    "do the {c} together with the {d}.",
]
VERBS = ["prepare", "fix", "measure", "plan", "schedule", "adjust", "compare", "test",
         "split", "revisit"]
PAST = ["fixed", "finished", "booked", "planted", "cleaned", "tuned", "replaced", "paid",
        "tested", "wrote"]
ADJ = ["fine", "too", "dry", "noisy", "slow", "better", "odd", "uneven", "perfect", "shaky",
       "quick", "heavy"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _fill(rng: Random, template: str, words: list[str]) -> str:
    pick = rng.sample(words, 4)
    return template.format(a=pick[0], b=pick[1], c=pick[2], d=pick[3], v=rng.choice(VERBS),
                           past=rng.choice(PAST), adj=rng.choice(ADJ), n=rng.choice(NAMES),
                           day=rng.choice(DAYS))


def _text(rng: Random, templates: list[str], words: list[str], lo: int, hi: int,
          serial: int) -> str:
    out = _fill(rng, rng.choice(templates), words)
    while len(out.split()) < lo:
        out += " " + _fill(rng, rng.choice(templates), words)
    cut = out.split()[:hi]
    return " ".join(cut) + f" (#{serial})" * (rng.random() < 0.5)


def conversations(turns: int, seed: int = 7, end: datetime | None = None,
                  days: int = 730) -> Iterator[list[dict[str, Any]]]:
    """`turns` messages in conversations, oldest first, ending before `end` (default now):
    each a list of {role, content, time} dicts."""
    rng = Random(seed)
    end = end or datetime.now(UTC).replace(microsecond=0)
    start = end - timedelta(days=days)
    step = timedelta(days=days) / max(turns, 1)
    made = 0
    serial = 0
    while made < turns:
        topic = rng.choice(list(TOPICS))
        words = TOPICS[topic].split()
        size = min(turns - made, rng.randint(6, 60))
        at = start + step * made
        conv = []
        for k in range(size):
            serial += 1
            user = k % 2 == 0
            conv.append({"role": "user" if user else "assistant",
                         "content": _text(rng, USER if user else ASSISTANT, words,
                                          6 if user else 15, 30 if user else 70, serial),
                         "time": at + timedelta(seconds=40 * k)})
        made += size
        yield conv


def cogd_jsonl(turns: int, seed: int = 7, user: str = "sam",
               end: datetime | None = None) -> Iterator[str]:
    """The history as cogd JSONL lines (no newline)."""
    for i, conv in enumerate(conversations(turns, seed, end)):
        for k, msg in enumerate(conv):
            yield json.dumps({"session": f"conv-{i}", "role": msg["role"],
                              "speaker": user if msg["role"] == "user" else "assistant",
                              "content": msg["content"], "timestamp": msg["time"].isoformat(),
                              "external_id": f"conv-{i}-{k}", "user": user})


def chatgpt_export(turns: int, seed: int = 7, end: datetime | None = None
                   ) -> list[dict[str, Any]]:
    """The same history as ChatGPT's conversations.json (a list of conversations)."""
    out = []
    for i, conv in enumerate(conversations(turns, seed, end)):
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                            "children": [f"c{i}-sys"]}}
        mapping[f"c{i}-sys"] = {
            "id": f"c{i}-sys", "parent": "root", "children": [],
            "message": {"id": f"c{i}-sys", "author": {"role": "system", "name": None},
                        "create_time": None, "content": {"content_type": "text",
                                                         "parts": [""]},
                        "metadata": {"is_visually_hidden_from_conversation": True},
                        "recipient": "all"}}
        parent = f"c{i}-sys"
        for k, msg in enumerate(conv):
            nid = f"c{i}-m{k}"
            mapping[parent]["children"].append(nid)
            mapping[nid] = {
                "id": nid, "parent": parent, "children": [],
                "message": {"id": nid, "author": {"role": msg["role"], "name": None},
                            "create_time": msg["time"].timestamp(),
                            "content": {"content_type": "text", "parts": [msg["content"]]},
                            "status": "finished_successfully", "metadata": {},
                            "recipient": "all"}}
            parent = nid
        out.append({"title": f"conversation {i}", "id": f"conv-{i}",
                    "create_time": conv[0]["time"].timestamp(), "mapping": mapping,
                    "current_node": parent})
    return out
