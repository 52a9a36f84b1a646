"""bench.loop's questions: the first pass asks other questions than the measured ones."""

from __future__ import annotations

from bench.suites import loop as L


def test_the_first_pass_asks_none_of_the_measured_questions() -> None:
    measured = L.query_texts(200, 12)
    first = L.query_texts(200, 12 + L.FIRST_PASS_SEED, avoid=measured)
    texts = [t for _, t in first]
    assert len(texts) == len(set(texts)) == 200
    assert not set(texts) & {t for _, t in measured}
    # without `avoid` the two seeds share questions (the frames are few): the filter matters
    assert {t for _, t in L.query_texts(200, 12 + L.FIRST_PASS_SEED)} & {t for _, t in measured}
    assert L.query_texts(200, 12) == measured  # deterministic
