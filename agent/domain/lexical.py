"""Lexical evidence for the match verdict: IDF-weighted coverage of the query's terms.

Cosine similarity alone cannot tell "What's my cat called?" from "My dog's name is
Biscuit" (all-MiniLM-L6-v2 puts them at ~0.55, above true question→statement pairs
such as "What am I allergic to?" → "I'm allergic to peanuts" at ~0.34). The
verdict therefore also asks how much of the query's *informative* vocabulary the
item contains, each term weighted by its inverse document frequency, so a missing
rare word ("cat") costs more than a missing common one ("name").

Terms are lower-cased words minus stopwords, cut to a 4-character prefix after a
plural 's' (a crude stemmer: "lives"/"lived"/"live", "allergic"/"allergies") plus
CJK bigrams.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping

from agent.domain.cjk import cjk_ngrams

WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
STEM_CHARS = 4
_STOPWORD_TEXT = """
a an the and or but if of to in on at by for with from as is are was were be been being
it its this that these those i you he she we they me my mine your yours our their his
her him them do does did doing done what which who whom whose how when where why can
could would should will shall may might must not no yes so than then there here about
into over under again just also am s t d ll re ve m don didn doesn isn wasn tell
remember know any some all one thing things something anything get got have has had
having say said please ever still very really much many more most let lets like okay ok
well now today
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def stem(word: str) -> str:
    """A crude stemmer: drop a plural 's', keep a 4-character prefix (lives/lived -> live)."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:STEM_CHARS]


def tokens(text: str) -> list[str]:
    """The terms of a text in order, repeats kept (BM25 counts them): stemmed
    non-stopwords, then CJK bigrams. What the BM25 lexicon indexes (revision 0007)."""
    out: list[str] = []
    ascii_only = text.isascii()  # no CJK to look for (most texts: the regex per word is
    # a third of the function's time)
    for w in WORD.findall(text.lower()):
        if w in STOPWORDS or (len(w) < 2 and not w.isdigit()):
            continue
        if not ascii_only and not w.isascii() and cjk_ngrams(w):
            continue  # CJK runs are counted as bigrams below
        out.append(stem(w))
    if not ascii_only:
        out += cjk_ngrams(text).split()
    return out


def terms(text: str) -> list[str]:
    """Informative terms of a text: stemmed non-stopwords and CJK bigrams, unique."""
    return list(dict.fromkeys(tokens(text)))


# tsvector limits: positions run 1..16383, at most 256 positions are kept per lexeme
_MAX_POSITION, _MAX_POSITIONS = 16383, 256


def tsvector_literal(toks: list[str]) -> str:
    """A tsvector in Postgres' text form whose positions count each token's repeats:
    the lexicon trigger reads a term's frequency as its number of positions."""
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(toks, 1):
        positions.setdefault(tok, []).append(min(i, _MAX_POSITION))
    return " ".join(
        "'" + tok.replace("\\", "\\\\").replace("'", "''") + "':"
        + ",".join(str(p) for p in list(dict.fromkeys(ps))[:_MAX_POSITIONS])
        for tok, ps in positions.items()
    )


def tsquery_text(query_terms: list[str], limit: int = 64) -> str | None:
    """An OR of quoted prefix lexemes for to_tsquery('simple', ...): 'allerg':* | '喜欢':*.
    For content_tsv (psql full text, the ts_rank_cd baseline of bench.quality); recall
    itself scores BM25 over the lexicon."""
    if not query_terms:
        return None
    return " | ".join("'" + t.replace("'", "''") + "':*" for t in query_terms[:limit])


def idf(doc_freq: int, n_docs: int) -> float:
    """BM25's IDF, floored at a small positive weight."""
    return max(0.05, math.log(1 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5)))


@functools.lru_cache(maxsize=8192)
def term_set(text: str) -> frozenset[str]:
    """terms(text) as a set, cached: recall reads the terms of each of its ~100 candidates
    (coverage, the said-by rule), and the same turns and memories come back question after
    question."""
    return frozenset(tokens(text))


def coverage(query_terms: list[str], content: str, weights: Mapping[str, float]) -> float:
    """Share of the query's IDF weight whose terms appear in `content` (0..1)."""
    if not query_terms:
        return 0.0
    have = term_set(content)
    total = sum(weights.get(t, 1.0) for t in query_terms)
    hit = sum(weights.get(t, 1.0) for t in query_terms if t in have)
    return hit / total if total else 0.0


def match_score(
    similarity: float | None, cover: float | None, lexical_weight: float
) -> float | None:
    """What the verdict thresholds judge: (1 - w)·cosine + w·coverage."""
    if similarity is None:
        return None
    if cover is None:
        return similarity
    return (1 - lexical_weight) * similarity + lexical_weight * cover
