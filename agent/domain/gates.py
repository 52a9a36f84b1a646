"""The memory gate (seed 003 §Memory Gate): a rule-based entry gate and the exit gate.

Entry gate (~1 ms, rules only): every message is already in day_table when this
runs; the gate decides whether it is ALSO copied to scratch_buffer. Signals:
explicit "remember this", decisions, preferences, facts, names, dates, causal
links, emotional charge, and chatter (negative). A stochastic floor keeps a few
unflagged messages anyway, so the gate can later learn from what it would have
dropped.

Exit gate (when content rolls out of the context window): the seed's matrix,
relation to memory (confirming / novel / contradicting) x relevance to Layer 0/1
(core / peripheral / irrelevant) → an action, plus the entry-gate rule score.
Contradicting content is persisted and flagged; some drops are kept by a
stochastic floor; at bootstrap (no values or goals to be relevant to) the gate is
permissive: nothing counts as irrelevant.

The contradiction cue is a heuristic (negation or value mismatch between two
similar texts), named `contradiction_cue` in every signal record; consolidation
(issue #5) re-checks flagged pairs with the LLM classifier.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_I = re.IGNORECASE
EXPLICIT = re.compile(
    r"\b(remember( this| that| to)?|don'?t forget|do not forget|note (this|that)|"
    r"keep in mind|make a note|for the record|save this|memori[sz]e)\b", _I)
DECISION = re.compile(
    r"\b((i|we)('ve| have)? (decided|chose|chosen|picked|settled|agreed|committed)|"
    r"(i|we)('ll| will) (go with|use|take|do)|let'?s (go with|use|do)|decision)\b", _I)
PREFERENCE = re.compile(
    r"\b(i (really )?(prefer|like|love|hate|dislike|enjoy|can'?t stand|don'?t like|want)|"
    r"i'?d rather|my fav(ou)?rite|i'?m (allergic|vegetarian|vegan)|i never|i always)\b", _I)
FACT = re.compile(
    r"\b(my( [a-z']+){1,3} (is|are|was|were)|i (live|work|study|was born|grew up)|"
    r"i am a|i'?m an? |i have (a|an|two|three|\d+)|is located|costs?|measures?)\b", _I)
NAME = re.compile(
    r"\b(my name is|call me|named|name'?s|i'?m called)\b|"
    r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?\b")
DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(/\d{2,4})?|"
    r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}|"
    r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|tonight|"
    r"next (week|month|year)|\d{1,2}(:\d{2})? ?(am|pm)|birthday|anniversary|deadline)\b", _I)
CAUSAL = re.compile(r"\b(because|so that|therefore|which is why|as a result|due to)\b", _I)
EMOTION = re.compile(
    r"(!{2,}|\b(love|hate|furious|angry|thrilled|excited|devastated|worried|anxious|"
    r"scared|afraid|heartbroken|ecstatic|upset|grateful)\b)", _I)
CHATTER = re.compile(
    r"^\s*(hi|hello|hey|yo|thanks?( you)?|thx|ok(ay)?|cool|nice|great|lol|haha|sure|"
    r"yes|no|yep|nope|bye|good (morning|night)|got it|sounds good|k)\W*$", _I)
CORRECTION = re.compile(
    r"\b(actually|correction|i meant|that'?s (wrong|not right|incorrect)|no,? it'?s|"
    r"not .+ but)\b", _I)
INSTRUCTION = re.compile(r"\b(how to|step \d|first,? |you (should|must|need to)|always use)\b", _I)
IDENTITY_REWRITE = re.compile(
    r"\b((change|rewrite|modify|update|overwrite|replace|reset|erase|delete)\s+(your|its)\s+"
    r"(core\s+)?(identity|values|personality|principles|boundaries|rules|instructions|"
    r"system prompt|layer 0)|"
    r"ignore (all |your |any )?(previous|prior|earlier|above) (instructions|rules)|"
    r"from now on,? you (are|will be|must)|you are now (a|an|my|no longer)|"
    r"your new (identity|values|personality|rules|instructions)|"
    r"forget (who you are|your (values|identity|rules)))", _I)
NEGATION = re.compile(r"\b(not|never|no longer|don'?t|doesn'?t|didn'?t|isn'?t|wasn'?t|"
                      r"aren'?t|won'?t|can'?t|stopped|quit|anymore)\b", _I)
_VALUE = re.compile(r"\b(\d+(?:[.,]\d+)?|[A-Z][a-z]{2,})\b")

MEMORY_TYPES = ("episodic", "preference", "decision", "fact", "insight", "correction",
                "instruction", "reflection", "intention")


def detects_identity_rewrite(text: str) -> bool:
    """Text asking the agent to rewrite its identity (recorded and flagged, never applied)."""
    return bool(IDENTITY_REWRITE.search(text))


@dataclass(frozen=True)
class EntryGateConfig:
    explicit_marker: float = 0.5
    density_decision: float = 0.35
    density_preference: float = 0.25
    density_fact: float = 0.15
    density_name: float = 0.15
    density_date: float = 0.15
    density_chatter: float = -0.4
    causal_weight: float = 0.25
    emotional_charge: float = 0.15
    buffer_threshold: float = 0.1
    stochastic_keep_probability: float = 0.05

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> EntryGateConfig:
        names = cls.__dataclass_fields__
        return cls(**{k: float(v) for k, v in t.items() if k in names})


@dataclass(frozen=True)
class GateDecision:
    decision: str  # 'scratch' | 'pass'
    score: float
    signals: dict[str, Any]
    reason: str
    memory_type_hint: str


def rule_signals(text: str, role: str, cfg: EntryGateConfig) -> dict[str, float]:
    """The rule signals that fired and their weights (density signals take the largest)."""
    fired: dict[str, float] = {}
    if role == "user" and EXPLICIT.search(text):
        fired["explicit_marker"] = cfg.explicit_marker
    density = {
        "decision": (DECISION, cfg.density_decision),
        "preference": (PREFERENCE, cfg.density_preference),
        "fact": (FACT, cfg.density_fact),
        "date": (DATE, cfg.density_date),
        "name": (NAME, cfg.density_name),  # last: a capitalised weekday is a date first
    }
    hits = {k: w for k, (rx, w) in density.items() if rx.search(text)}
    if hits:
        best = max(hits, key=lambda k: hits[k])
        fired[f"density_{best}"] = hits[best]
        for k in hits:
            if k != best:
                fired[f"also_{k}"] = 0.0
    elif CHATTER.match(text) or len(text.split()) <= 2:
        fired["density_chatter"] = cfg.density_chatter
    if CAUSAL.search(text):
        fired["causal"] = cfg.causal_weight
    if EMOTION.search(text):
        fired["emotional_charge"] = cfg.emotional_charge
    return fired


def memory_type_hint(text: str, signals: Mapping[str, float]) -> str:
    if CORRECTION.search(text):
        return "correction"
    for key, kind in (("decision", "decision"), ("preference", "preference"),
                      ("fact", "fact"), ("name", "fact"), ("date", "fact")):
        if f"density_{key}" in signals:
            return kind
    if INSTRUCTION.search(text):
        return "instruction"
    return "episodic"


def entry_gate(
    text: str, role: str, cfg: EntryGateConfig, rng: random.Random | None = None
) -> GateDecision:
    """Scratch or pass, with every signal that fired (rules only, no model, no I/O)."""
    signals = rule_signals(text, role, cfg)
    score = round(sum(signals.values()), 4)
    hint = memory_type_hint(text, signals)
    if score >= cfg.buffer_threshold:
        fired = ", ".join(k for k, v in signals.items() if v > 0)
        return GateDecision("scratch", score, dict(signals), f"rules: {fired}", hint)
    draw = (rng or random.Random()).random()
    if draw < cfg.stochastic_keep_probability:
        return GateDecision(
            "scratch", score, {**signals, "stochastic_draw": round(draw, 4)},
            "stochastic floor (kept so the gate can learn from what it would drop)", hint,
        )
    reason = "chatter" if "density_chatter" in signals else "no signal above the threshold"
    return GateDecision("pass", score, dict(signals), reason, hint)


# --- exit gate -------------------------------------------------------------------

COLUMNS = ("confirming", "novel", "contradicting")
ROWS = ("core", "peripheral", "irrelevant")


@dataclass(frozen=True)
class ExitGateConfig:
    persist_threshold: float = 0.3
    bootstrap_permissive: bool = True
    stochastic_keep_probability: float = 0.05
    confirming_min_similarity: float = 0.85
    contradiction_band: tuple[float, float] = (0.5, 0.85)
    core_min_relevance: float = 0.5
    peripheral_min_relevance: float = 0.3
    novelty_novel: float = 0.3
    novelty_known: float = -0.4
    goal_relevance: float = 0.3
    scores: dict[str, float] = field(default_factory=dict)
    actions: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> ExitGateConfig:
        band = t.get("contradiction_band", [0.5, 0.85])
        return cls(
            persist_threshold=float(t.get("persist_threshold", 0.3)),
            bootstrap_permissive=bool(t.get("bootstrap_permissive", True)),
            stochastic_keep_probability=float(t.get("stochastic_keep_probability", 0.05)),
            confirming_min_similarity=float(t.get("confirming_min_similarity", 0.85)),
            contradiction_band=(float(band[0]), float(band[1])),
            core_min_relevance=float(t.get("core_min_relevance", 0.5)),
            peripheral_min_relevance=float(t.get("peripheral_min_relevance", 0.3)),
            novelty_novel=float(t.get("novelty_novel", 0.3)),
            novelty_known=float(t.get("novelty_known", -0.4)),
            goal_relevance=float(t.get("goal_relevance", 0.3)),
            scores={f"{r}_{c}": float(t.get(f"score_{r}_{c}", 0.0))
                    for r in ROWS for c in COLUMNS},
            actions={f"{r}_{c}": str(t.get(f"action_{r}_{c}", "drop"))
                     for r in ROWS for c in COLUMNS},
        )


def contradiction_cue(new: str, old: str) -> bool:
    """Heuristic: similar texts that differ in negation or in a named/numeric value."""
    if bool(NEGATION.search(new)) != bool(NEGATION.search(old)):
        return True
    a = {v.lower() for v in _VALUE.findall(new)}
    b = {v.lower() for v in _VALUE.findall(old)}
    return bool(a and b and a != b and not (a <= b or b <= a))


@dataclass(frozen=True)
class ExitInput:
    text: str
    rule_score: float
    nearest_similarity: float | None  # to the most similar existing memory
    nearest_text: str | None
    relevance: float | None  # max similarity to Layer 0 values / Layer 1 goals; None: none exist
    explicit: bool = False  # the user asked for it to be remembered
    fallback: bool = False  # an extract of the heuristic fallback LLM: nothing new


@dataclass(frozen=True)
class ExitDecision:
    action: str  # persist | persist_flag | reinforce | buffer | drop
    column: str
    row: str
    score: float
    reason: str
    signals: dict[str, Any]

    @property
    def persists(self) -> bool:
        return self.action in ("persist", "persist_flag")


def exit_gate(
    inp: ExitInput, cfg: ExitGateConfig, rng: random.Random | None = None
) -> ExitDecision:
    """The seed's matrix picks the action; the seed's weighted score settles 'buffer'.

    score = entry-gate rule score + novelty (+0.3 novel / -0.4 known) + goal
    relevance (+0.3 when the row is core). An explicit "remember this" always
    persists. 'drop_stochastic' cells keep a few drops (the stochastic floor).
    """
    sim = inp.nearest_similarity
    lo, hi = cfg.contradiction_band
    cue = False
    if sim is not None and sim >= cfg.confirming_min_similarity:
        column = "confirming"
    elif sim is not None and lo <= sim < hi and inp.nearest_text is not None:
        cue = contradiction_cue(inp.text, inp.nearest_text)
        column = "contradicting" if cue else "novel"
    else:
        column = "novel"
    bootstrap = inp.relevance is None
    rel = inp.relevance or 0.0
    if rel >= cfg.core_min_relevance:
        row = "core"
    elif rel >= cfg.peripheral_min_relevance or (bootstrap and cfg.bootstrap_permissive):
        row = "peripheral"
    else:
        row = "irrelevant"
    cell = f"{row}_{column}"
    novelty = cfg.novelty_known if column == "confirming" else cfg.novelty_novel
    relevance_term = cfg.goal_relevance if row == "core" else 0.0
    score = round(inp.rule_score + novelty + relevance_term, 4)
    signals: dict[str, Any] = {
        "cell": cell, "cell_weight": cfg.scores.get(cell, 0.0), "nearest_similarity": sim,
        "relevance": inp.relevance, "rule_score": inp.rule_score, "novelty": novelty,
        "bootstrap": bootstrap, "contradiction_cue": cue,
        "contradiction_detector": "negation/value heuristic",
    }
    action = cfg.actions.get(cell, "drop")

    def decide(what: str, reason: str) -> ExitDecision:
        return ExitDecision(what, column, row, score, reason, signals)

    if inp.fallback:  # the fallback quotes what is already remembered, or the prompt
        return decide("drop", "a heuristic fallback reply: an extract, nothing new to keep")

    if action == "persist_flag":
        return decide("persist_flag", f"matrix {cell}: contradicts a memory, persisted and flagged")
    if action == "reinforce":
        return decide("reinforce", f"matrix {cell}: confirms an existing memory, reinforced it")
    if action == "persist":
        return decide("persist", f"matrix {cell}: persist")
    if inp.explicit:
        return decide("persist", "explicit request to remember")
    if action == "buffer":
        if score >= cfg.persist_threshold:
            return decide("persist", f"matrix {cell}: score {score:.2f} >= {cfg.persist_threshold}")
        if score > 0:
            return decide("buffer", f"matrix {cell}: score {score:.2f} below "
                                    f"{cfg.persist_threshold}, left for consolidation")
        return decide("drop", f"matrix {cell}: score {score:.2f}, nothing worth keeping")
    if action == "drop_stochastic":
        draw = (rng or random.Random()).random()
        if draw < cfg.stochastic_keep_probability:
            signals["stochastic_draw"] = round(draw, 4)
            return decide("persist", "stochastic floor: a drop kept to catch gems")
    return decide("drop", f"matrix {cell}: {action}")
