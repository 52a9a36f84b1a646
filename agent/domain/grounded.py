"""Memory-grounded replies: a named heuristic for a small model (issue 40). Pure.

The bundled SmolLM2-135M cannot be trusted to repeat a remembered fact: given the right
memory in its prompt it still invents an island, a garden and a beach. So, when the
question asks for a fact about the user and recall has judged its items, the reply is
built here from the user's own words, not by the model. Each sentence the user said, in
the turns recall found, is judged against the question (recall's verdict of its turn, its
cosine to the question, the question's words it holds: GroundedConfig):

- a sure one is said back with its date: "You told me on 3 March: you moved to Lisbon."
  (first person turned to second);
- a hedged one: "I'm not sure, but on 3 March you told me: ...";
- none: "I don't know: you haven't told me that." — never an invented answer.

Anything else (a statement, a request, a question about the world) goes to the model as
before. The path is on for profiles with `grounded_replies = true` (the bundled local
profile) and off for real models, which get the memories in their prompt as always
(config/default.toml [llm.profiles.*]). What is a "fact question" and which words are
the user's are word rules, not understanding: a heuristic, named as such in the reply's
metadata (`reply_path`) and in the README.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agent.domain.recall import RecallItem

HEURISTIC = "grounded-reply heuristic"
# the reply's path, in the turn's metadata (`reply_path`)
PATH_MODEL = "model"
PATH_STRONG = "grounded:sure"  # said back as what the user told
PATH_WEAK = "grounded:hedged"  # said back with "I'm not sure, but"
PATH_NO_MATCH = "grounded:dont_know"

DONT_KNOW = "I don't know: you haven't told me that."
# a remembered turn longer than this is cut at a sentence: a reply, not a transcript
MAX_QUOTE_CHARS = 300

_QUESTION_START = re.compile(
    r"^\s*(what|what's|whats|where|where's|who|who's|whom|whose|when|which|how|why|"
    r"do|does|did|am|is|are|was|were|have|has|had|can|could|remind me)\b", re.IGNORECASE)
_ABOUT_USER = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|our|us)\b",
                         re.IGNORECASE)
# asks the agent to do or make something, not to recall: left to the model
_REQUEST = re.compile(r"^\s*(can|could|would|will) you\b(?! (?:tell|remind|remember))",
                      re.IGNORECASE)
_GREETING = re.compile(r"^(?:hi|hello|hey|so|well|oh|ok|okay|yes|yeah|by the way|btw)\b[\s,!.]*",
                       re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

# first person -> second person; "am"/"was" only right after "I" (see _second_person)
_SWAP = {
    "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
    "i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd",
    "we": "you", "us": "you", "our": "your", "ours": "yours", "we're": "you're",
}
_I_VERB = re.compile(r"\b([Ii]) (am|was)\b")
_WORD = re.compile(r"\b[A-Za-z]+(?:'[a-z]+)?\b")
_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")
_SECOND = frozenset(_SWAP.values())


@dataclass(frozen=True)
class GroundedReply:
    path: str  # PATH_STRONG | PATH_WEAK | PATH_NO_MATCH
    text: str
    item_ids: tuple[str, ...] = ()


def is_fact_question(text: str) -> bool:
    """Whether a message asks for a fact about the user (heuristic): a question (a
    question mark, or a question word first) that names the user (I, my, me, ...), and
    not a request for the agent to do something ("can you write ...")."""
    t = " ".join(text.split())
    if not t or _REQUEST.search(t):
        return False
    asks = t.endswith("?") or bool(_QUESTION_START.search(t))
    return asks and bool(_ABOUT_USER.search(t))


def spoken_date(when: datetime | None, now: datetime | None = None) -> str:
    """'3 March' (with the year when it is not `now`'s year); '' without a date."""
    if when is None:
        return ""
    text = f"{when.day} {when:%B}"
    if now is not None and when.year != now.year:
        text += f" {when.year}"
    return text


def second_person(text: str) -> str:
    """The user's sentence as said back to them: I -> you, my -> your, I am -> you are."""
    text = _I_VERB.sub(lambda m: "I " + {"am": "are", "was": "were"}[m.group(2)], text)

    def swap(m: re.Match[str]) -> str:
        word = m.group()
        new = _SWAP.get(word.lower())
        if new is None:
            return word
        return new.capitalize() if word[0].isupper() and word != "I" else new
    out = _WORD.sub(swap, text)
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), out)


def _after_colon(said: str) -> str:
    """'You moved ...' -> 'you moved ...' after "You told me on 3 March:" (a name stays)."""
    first = said.split(" ", 1)[0]
    return said[:1].lower() + said[1:] if first.lower() in _SECOND else said


def quotable(content: str) -> str:
    """The remembered turn as a quote: one line, a leading greeting dropped ("Hi, ..."),
    cut at a sentence end within MAX_QUOTE_CHARS."""
    text = " ".join(content.split())
    stripped = _GREETING.sub("", text)
    text = stripped or text
    if len(text) > MAX_QUOTE_CHARS:
        kept = ""
        for sentence in _SENTENCE.split(text):
            if kept and len(kept) + 1 + len(sentence) > MAX_QUOTE_CHARS:
                break
            kept = f"{kept} {sentence}".strip()
        text = kept[:MAX_QUOTE_CHARS]
    if text and text[-1] not in ".!?":
        text += "."
    return text


def _users_words(item: RecallItem) -> bool:
    """A turn or memory in the user's own words, and not itself a question (an earlier
    asking of the same thing is no answer to it)."""
    if item.role != "user" or item.kind not in ("day_table", "memory"):
        return False
    return not " ".join(item.content.split()).endswith("?")


@dataclass(frozen=True)
class GroundedConfig:
    """How sure a sentence of the user's must be to be said back (a named heuristic).

    Recall's own verdicts (strong/weak) count first. Recall judges a whole turn against
    the question, and a question shares few words with its answer ("Where do I live?" /
    "I live in Lisbon": cosine 0.36, no_match), so each sentence of the user's turns among
    recall's items is judged again: its cosine to the question (the universal embedder)
    and how many of the question's content words it holds (`cover`, light stemming and a
    few named synonyms). Values chosen on bench.factchat's 10 facts and 10 never-said
    questions (2026-11-28): fitted to that small set, not calibrated."""

    sure_similarity: float = 0.55  # alone makes a sentence an answer (facts: 0.62-0.70)
    hedge_similarity: float = 0.40  # alone a hedged answer (the Dana example: 0.43)
    floor_similarity: float = 0.30  # with words of the question: sure (all) or hedged (half)


# words that carry no topic in a question about the user
_STOP_WORDS = """a an the and or but of to in on at for from with about as by into
    what what's whats where where's who who's whom whose when which how why
    do does did doing done am is are was were be been being have has had having can could
    will would shall should may might must i i'm i've i'd i'll me my mine myself we our us
    you your yours it its this that these those there here again please tell remind
    remember know go went going get got last next ago now then just still also very really
    some any all one thing things name named"""
_STOP = frozenset(_STOP_WORDS.split())
# the few paraphrases a question and its answer commonly differ by (named; not a thesaurus)
_CUES = {"live": ("mov", "home", "based", "stay"), "work": ("job", "profession"),
         "visit": ("coming", "stay")}


def _stem(word: str) -> str:
    word = word.lower().replace("\u2019", "'").removesuffix("'s")
    for suffix, keep in (("ing", 5), ("ed", 4), ("es", 5), ("s", 3)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep - 1 and \
                not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def _topic(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP}


def cover(question: str, sentence: str) -> float:
    """The share of the question's content words the sentence holds (1.0: all; a
    question without any: 0)."""
    asked = _topic(question)
    if not asked:
        return 0.0
    said = _topic(sentence)
    held = sum(1 for w in asked if w in said or any(c in said for c in _CUES.get(w, ())))
    return held / len(asked)


@dataclass(frozen=True)
class Said:
    """One sentence of the user's own words among recall's items; `when`: the date it was
    said, when an earlier grounded reply carries it (the item's own date is the reply's)."""

    item: RecallItem
    sentence: str
    when: str | None = None


# an earlier grounded reply: the user's words (already said back) and the date they said them
_EARLIER = re.compile(r"^(?:You told me on (?P<a>[^:]+)|I'm not sure, but on (?P<b>[^:]+) "
                      r"you told me): (?P<quote>.+)$")


def said_sentences(items: Sequence[RecallItem]) -> list[Said]:
    """The sentences of recall's items that are in the user's own words (a greeting-only
    sentence left out), and the quotes of the agent's earlier grounded replies (a question
    asked again finds its earlier answer first, which can crowd the turn it quoted out of
    recall's items): what the service embeds for `grounded_reply`."""
    out: list[Said] = []
    for item in items:
        earlier = _EARLIER.match(" ".join(item.content.split())) \
            if item.role == "assistant" else None
        if earlier:  # asked before: the fact as the agent said it back then
            out.append(Said(item, earlier.group("quote"), earlier.group("a") or earlier.group("b")))
            continue
        if not _users_words(item):
            continue
        for sentence in _SENTENCE.split(" ".join(item.content.split())):
            sentence = _GREETING.sub("", sentence).strip()
            if len(_WORD.findall(sentence)) >= 2:
                out.append(Said(item, sentence))
    return out


def grounded_reply(
    question: str, items: Sequence[RecallItem], similarities: Sequence[float] | None = None,
    now: datetime | None = None, cfg: GroundedConfig = GroundedConfig(),
) -> GroundedReply | None:
    """The reply from memory for a fact question, or None for the model to answer.

    `items`: recall's items for this turn, each with its verdict; `similarities`: the
    cosine of the question to each of `said_sentences(items)`, in order (None: recall's
    verdicts alone). The surest sentence of the user's own words is said back with its
    date: sure when recall judged its turn a strong match, or by GroundedConfig; hedged
    ("I'm not sure, but ...") when recall judged it weak, or by GroundedConfig. None sure
    or hedged: "I don't know" (the agent's own earlier replies are no source), unless
    recall matched text that is no one's turn (a summary block, an imported document):
    then the model, which sees it in its prompt, answers."""
    if not is_fact_question(question):
        return None
    said = said_sentences(items)
    sims = list(similarities) if similarities is not None else [0.0] * len(said)
    if len(sims) != len(said):
        raise ValueError(f"{len(said)} sentences, {len(sims)} similarities")
    ranked: list[tuple[int, float, Said]] = []  # (2 sure / 1 hedged, cosine, sentence)
    for s, sim in zip(said, sims, strict=True):
        share = cover(question, s.sentence)
        if s.item.verdict == "strong_match" or sim >= cfg.sure_similarity or (
                sim >= cfg.floor_similarity and share >= 1.0):
            ranked.append((2, sim, s))
        elif s.item.verdict == "weak_match" or sim >= cfg.hedge_similarity or (
                sim >= cfg.floor_similarity and share >= 0.5):
            ranked.append((1, sim, s))
    if ranked:
        tier, _, best = max(ranked, key=lambda r: (r[0], r[1], r[2].item.score))
        quote = _after_colon(second_person(quotable(best.sentence)))
        when = best.when or spoken_date(best.item.created_at, now)
        if tier == 2:
            text = f"You told me on {when}: {quote}" if when else f"You told me: {quote}"
        else:
            lead = f"on {when} you told me" if when else "you told me"
            text = f"I'm not sure, but {lead}: {quote}"
        return GroundedReply(PATH_STRONG if tier == 2 else PATH_WEAK, text, (best.item.id,))
    if any(i.verdict != "no_match" and i.role not in ("user", "assistant") for i in items):
        return None  # a summary block, an imported document: the model reads it
    return GroundedReply(PATH_NO_MATCH, DONT_KNOW)
