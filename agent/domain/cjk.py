"""CJK n-grams: the Python twin of the SQL function cogd_cjk_ngrams() (revision 0003).

Postgres' 'simple' text-search configuration splits on spaces, and Chinese or
Japanese text has none, so "喜欢" would never match "我喜欢猫". Every run of CJK
characters contributes its character bigrams (a lone character as itself) to the
tsvector; queries are built with the same rule. A query of one lone CJK character
matches only bigrams that start with it (a known limit of bigram indexing). Keep
the two in step: tests/integration/test_cjk_sql.py compares them on the same inputs.
"""

from __future__ import annotations

import re

# Hiragana, Katakana, CJK ext. A, CJK unified, Hangul syllables, CJK compatibility
CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def cjk_ngrams(text: str) -> str:
    """Space-separated bigrams of every CJK run in `text` ('' when there is none)."""
    grams: list[str] = []
    for run in CJK_RUN.findall(text):
        if len(run) == 1:
            grams.append(run)
        else:
            grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return " ".join(grams)
