"""Workflow patterns (seed 000 §10.5): recurring multi-step procedures of one user.

The offline detector is the named "sequence-heuristic":
1. each user turn is cut into clauses; a clause that starts (after filler such as "ok",
   "now", "please", "let's", "can you") with a verb of the action lexicon below is a *step*,
   keyed verb + object words ("run the tests" → "run tests");
2. the steps of all the user's sessions are clustered: the same key, or a universal
   embedding cosine of at least [workflows] step_similarity to the cluster's first step
   (paraphrases: "execute the test suite" joins "run the tests");
3. a sequence of [workflows] min_steps..max_steps distinct clusters that occurs in order,
   each step at most [workflows] max_gap other steps after the previous, in at least
   [workflows] min_sessions sessions is a workflow (seed 000 §10.5: 2+ episodes); only the
   maximal ones are kept (a sub-sequence seen in no more sessions than a longer one goes).

Everything here is pure: texts, keys, labels and vectors in, sequences out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agent.domain.tables import need

DETECTOR = "sequence-heuristic"


def _lexicon(words: str) -> frozenset[str]:
    return frozenset(words.split())


# the action lexicon: verbs that start a procedural step ("run", "bump", "push" ...)
ACTION_VERBS = _lexicon("""
add apply approve archive back backup bump build cancel change check clean clear clone close
commit compile configure copy create cut deploy delete describe disable download draft drop
edit email enable execute export fetch file fill fix format generate increase install label
launch lint list load lock log make mark merge migrate move notify open order pack package pay
post prepare print profile publish pull push rebase rebuild record refresh release reload
remove rename render reply report request reset restart restore review revert rollback
rotate run save schedule send set setup share ship sign snapshot sort start stop submit
sync tag test tidy trigger type unlock update upgrade upload validate verify write zip
""")
# what may come before the verb and is dropped ("ok now let's run the tests")
FILLER = _lexicon("""
ok okay alright right so now then next first finally also and please pls lets let's let us
can could would will you we i i'll we'll need to have got go ahead time should must want
just quickly again after that done good great
""")
STOP = _lexicon("""
the a an this that these those my our your its their it them to of for on in at with and
or from into up out all some any new now then again please also
""")
_CLAUSE = re.compile(r"(?<=[.!?;])\s+|\n+|,?\s+(?:and then|then|after that|and now)\s+",
                     re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-']*")
KEY_OBJECT_WORDS = 2  # cogd choice: a step's key is its verb and the first 2 object words


@dataclass(frozen=True)
class WorkflowConfig:
    step_similarity: float
    min_steps: int
    max_steps: int
    max_gap: int
    min_sessions: int
    initial_confidence: float
    match_min_similarity: float
    completion_gain: float
    skip_penalty: float
    confirmation_gain: float
    retire_below: float
    max_confidence: float
    max_sessions: int
    surface_max: int

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> WorkflowConfig:
        return cls(
            step_similarity=float(need(t, "step_similarity")),
            min_steps=int(need(t, "min_steps")),
            max_steps=int(need(t, "max_steps")),
            max_gap=int(need(t, "max_gap")),
            min_sessions=int(need(t, "min_sessions")),
            initial_confidence=float(need(t, "initial_confidence")),
            match_min_similarity=float(need(t, "match_min_similarity")),
            completion_gain=float(need(t, "completion_gain")),
            skip_penalty=float(need(t, "skip_penalty")),
            confirmation_gain=float(need(t, "confirmation_gain")),
            retire_below=float(need(t, "retire_below")),
            max_confidence=float(need(t, "max_confidence")),
            max_sessions=int(need(t, "max_sessions")),
            surface_max=int(need(t, "surface_max")),
        )


@dataclass(frozen=True)
class Step:
    text: str  # the clause as the user said it, from its verb on
    key: str  # verb + object words


def action_steps(text: str) -> list[Step]:
    """The procedural steps a user turn names, in order (the action-verb heuristic)."""
    out: list[Step] = []
    for clause in _CLAUSE.split(text or ""):
        clause = clause.strip(" \t,.!?;:-\"'")
        if not clause:
            continue
        spans = list(_WORD.finditer(clause.lower()))
        words = [m.group() for m in spans]
        i = 0
        while i < len(words) and words[i] in FILLER:
            i += 1
        if i >= len(words) or words[i] not in ACTION_VERBS:
            continue
        obj = [w for w in words[i + 1:] if w not in STOP and w not in FILLER]
        if not obj:
            continue  # "run" alone names no step
        key = " ".join([words[i], *obj[:KEY_OBJECT_WORDS]])
        # the step as said, from its verb on ("Let's run the tests" → "run the tests"):
        # what is embedded and compared, so fillers do not pull paraphrases apart
        out.append(Step(clause[spans[i].start():][:300], key))
    return out


def cluster_steps(keys: Sequence[str], vectors: Any, min_similarity: float) -> list[int]:
    """A cluster label per step: the same key, or cosine >= min_similarity to a cluster's
    first step (vectors: normalised rows, one per key). Greedy in the given order, so
    steps listed first (a stored workflow's) name their clusters."""
    labels: list[int] = []
    heads: list[int] = []  # index of each cluster's first step
    by_key: dict[str, int] = {}
    vecs = np.asarray(vectors, dtype=np.float32) if len(keys) else np.zeros((0, 1))
    for i, key in enumerate(keys):
        if key in by_key:
            labels.append(by_key[key])
            continue
        best, best_sim = -1, min_similarity
        if heads:
            sims = vecs[heads] @ vecs[i]
            j = int(np.argmax(sims))
            if float(sims[j]) >= best_sim:
                best = j
        if best < 0:
            best = len(heads)
            heads.append(i)
        by_key[key] = best
        labels.append(best)
    return labels


@dataclass
class Found:
    """A recurring sequence: its cluster labels and where it occurred (session index →
    the positions of its steps there, the first occurrence)."""

    labels: tuple[int, ...]
    occurrences: dict[int, tuple[int, ...]] = field(default_factory=dict)


def _occurrences(seq: Sequence[int], length: int, max_gap: int
                 ) -> dict[tuple[int, ...], tuple[int, ...]]:
    """Every sequence of `length` distinct labels in `seq` whose steps follow each other
    with at most `max_gap` steps between them: labels → first positions."""
    out: dict[tuple[int, ...], tuple[int, ...]] = {}

    def grow(pos: tuple[int, ...]) -> None:
        if len(pos) == length:
            out.setdefault(tuple(seq[p] for p in pos), pos)
            return
        used = {seq[p] for p in pos}
        for nxt in range(pos[-1] + 1, min(len(seq), pos[-1] + 2 + max_gap)):
            if seq[nxt] not in used:
                grow((*pos, nxt))

    for start in range(len(seq)):
        grow((start,))
    return out


def find_sequences(sessions: Sequence[Sequence[int]], *, min_len: int, max_len: int,
                   max_gap: int, min_sessions: int) -> list[Found]:
    """The maximal step sequences (cluster labels) seen in at least `min_sessions` of the
    sessions, longest first. A sequence inside a longer found one (in order) that occurs
    in no session beyond the longer one's is dropped."""
    found: list[Found] = []
    for length in range(max_len, min_len - 1, -1):
        seen: dict[tuple[int, ...], Found] = {}
        for s, seq in enumerate(sessions):
            for labels, pos in _occurrences(seq, length, max_gap).items():
                seen.setdefault(labels, Found(labels)).occurrences.setdefault(s, pos)
        for f in seen.values():
            if len(f.occurrences) < min_sessions:
                continue
            if any(_inside(f.labels, g.labels) and set(f.occurrences) <= set(g.occurrences)
                   for g in found):
                continue
            found.append(f)
    return found


def _inside(short: Sequence[int], long: Sequence[int]) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def in_order(remaining: Any, later: Any, min_similarity: float) -> int:
    """How many of the `remaining` steps (normalised vectors) the `later` steps cover in
    order: each remaining step is matched by a later step at cosine >= min_similarity
    after the one that matched the step before it."""
    rem = np.asarray(remaining, dtype=np.float32)
    lat = np.asarray(later, dtype=np.float32)
    if not len(rem) or not len(lat):
        return 0
    sims = rem @ lat.T
    done, start = 0, 0
    for i in range(len(rem)):
        hits = [j for j in range(start, len(lat)) if sims[i, j] >= min_similarity]
        if not hits:
            break
        done, start = done + 1, hits[0] + 1
    return done


def after_event(confidence: float, event: str, cfg: WorkflowConfig) -> tuple[float, bool]:
    """The confidence after a completion, a skip or a confirmation (seed 000 §10.5), and
    whether the workflow retires (below [workflows] retire_below)."""
    delta = {"completed": cfg.completion_gain, "skipped": -cfg.skip_penalty,
             "confirmed": cfg.confirmation_gain}[event]
    new = round(min(cfg.max_confidence, max(0.0, confidence + delta)), 6)
    return new, new < cfg.retire_below


def name_of(keys: Sequence[str]) -> str:
    """A workflow's heuristic name: its step keys in order."""
    return " → ".join(keys)


def offer_line(name: str, remaining: Sequence[str], sessions: int, confidence: float) -> str:
    """The prompt line of a recognised workflow: its remaining steps."""
    steps = "; ".join(f"{i}. {s}" for i, s in enumerate(remaining, 1))
    return (f"\"{name}\" (seen in {sessions} sessions, confidence {confidence:.2f}): "
            f"next usually {steps}")
