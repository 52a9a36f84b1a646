"""agent/domain/cjk.py and the SQL function cogd_cjk_ngrams() agree; mixed text matches."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.domain.cjk import cjk_ngrams
from agent.domain.lexical import terms, tsquery_text
from tests.conftest import make_session

SAMPLES = ["我喜欢猫", "plain English", "東京タワーに行きました and then Lisbon", "猫",
           "한국어 텍스트", "mixed 中文 and 日本語 words", ""]


@pytest.mark.parametrize("text", SAMPLES)
def test_python_and_sql_bigrams_agree(conn: Any, text: str) -> None:
    sql = conn.execute("SELECT coalesce(cogd_cjk_ngrams(%s), '')", (text,)).fetchone()[0]
    assert sql == cjk_ngrams(text)


_cjkish = st.text(alphabet=st.sampled_from(list("我喜欢猫東京タワーに한국 abc,。")), max_size=30)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_cjkish)
def test_agreement_on_generated_text(db_url: str, text: str) -> None:
    import psycopg

    with psycopg.connect(db_url) as c:
        sql = c.execute("SELECT coalesce(cogd_cjk_ngrams(%s), '')", (text,)).fetchone()
    assert sql is not None and sql[0] == cjk_ngrams(text)


def test_mixed_language_full_text_matches(conn: Any) -> None:
    conn.execute("INSERT INTO day_table (session_id, role, content) VALUES (%s, 'user', %s)",
                 (make_session(conn, "mei"), "我喜欢猫 but my partner prefers dogs"))
    # a lone CJK character matches only as the first of a bigram (documented in cjk.py)
    for query in ("喜欢", "欢猫", "partner 喜欢", "我喜欢"):
        q = tsquery_text(terms(query))
        hit = conn.execute("SELECT count(*) FROM day_table WHERE content_tsv @@ "
                           "to_tsquery('simple', %s)", (q,)).fetchone()
        assert hit == (1,), query
