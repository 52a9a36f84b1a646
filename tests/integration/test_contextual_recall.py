"""Contextual indexing, the BM25 lexicon and time/people-aware recall on a real Postgres
(issue "Recall that finds what was said")."""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from agent.config import Settings
from agent.domain import lexical
from agent.domain.contextual import RECIPE_VERSION, IndexConfig
from agent.providers import factory
from agent.runtime import Runtime
from agent.services.access.importer import Importer, ImportReport, read_lines
from agent.services.memory.indexing import Indexer
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401

LINES = [
    ("s1", "Ana", "2023-03-04T10:00:00+00:00", "I finally bought a road bike, a blue one."),
    ("s1", "Ben", "2023-03-04T10:01:00+00:00", "Nice! I bought running shoes last week."),
    ("s1", "Ana", "2023-03-04T10:02:00+00:00", "Did you ever try the pottery class downtown?"),
    ("s1", "Ben", "2023-03-04T10:03:00+00:00", "Yes, twice."),
    ("s2", "Ben", "2023-05-13T18:00:00+00:00", "I bought a record player at the flea market."),
    ("s2", "Ana", "2023-05-13T18:01:00+00:00", "I'm learning to make pottery bowls at home."),
    ("s2", "Ben", "2023-05-13T18:02:00+00:00", "My pottery bowls always crack in the kiln."),
    ("s2", "Ana", "2023-05-13T18:03:00+00:00", "I moved to a new flat near the river in Porto."),
]


def import_lines(settings: Settings, conn: Any, lines: list[tuple[str, str, str, str]]) -> None:
    writer = Runtime(settings).turn_writer()
    text = "".join(json.dumps({"user": "c01", "session": s, "speaker": who, "role": "user",
                               "content": c, "timestamp": t, "external_id": f"{s}-{i}"}) + "\n"
                   for i, (s, who, t, c) in enumerate(lines))
    report = ImportReport()
    Importer(conn, writer, "user", 3).run(read_lines(io.StringIO(text), "user", report, True),
                                          report)
    assert report.inserted == len(lines) and not report.errors


@pytest.fixture
def imported(settings: Settings, conn: Any) -> Any:
    import_lines(settings, conn, LINES)
    return conn


def test_turns_are_indexed_in_context_and_content_stays_verbatim(imported: Any) -> None:
    rows = {r[0]: r[1:] for r in imported.execute(
        "SELECT external_id, content, speaker, index_text, index_version FROM day_table")}
    content, speaker, text, version = rows["s1-3"]
    assert content == "Yes, twice." and speaker == "Ben" and version == RECIPE_VERSION
    # a short reply is indexed with the turn it answers (the batch boundary is at 3 lines)
    assert text == ('(4 March 2023) Ben said, replying to Ana ("Did you ever try the pottery '
                    'class downtown?"): Yes, twice.')
    assert rows["s2-4"][2].startswith("(13 May 2023) Ben said: I bought a record player")
    # every turn belongs to the account named by "user", whoever spoke
    users = imported.execute("SELECT DISTINCT u.handle FROM day_table d "
                             "JOIN users u USING (user_id)").fetchall()
    assert users == [("c01",)]


def test_the_lexicon_holds_okapi_bm25_statistics(imported: Any) -> None:
    n, total = imported.execute(
        "SELECT n_docs, total_len FROM lexical_stats WHERE kind = 'day_table'").fetchone()
    texts = [r[0] for r in imported.execute("SELECT index_text FROM day_table")]
    assert n == len(LINES) and total == sum(len(lexical.tokens(t)) for t in texts)
    # term frequencies come from the contextual text: "pottery" twice in one turn
    tf = Counter(lexical.tokens(texts[0]))
    post = dict(imported.execute(
        "SELECT term, tf FROM lexical_postings p JOIN day_table d ON d.entry_id = p.doc_id "
        "WHERE d.index_text = %s", (texts[0],)).fetchall())
    assert post == dict(tf)


def test_bm25_scores_match_a_reference_implementation(settings: Settings, imported: Any) -> None:
    from agent.db.queries import query

    texts = {r[0]: lexical.tokens(r[1]) for r in imported.execute(
        "SELECT entry_id, index_text FROM day_table")}
    terms = lexical.terms("pottery bowls crack")
    n = len(texts)
    avgdl = sum(len(t) for t in texts.values()) / n
    expected: dict[Any, float] = {}
    for doc, toks in texts.items():
        score = 0.0
        for term in terms:
            df = sum(1 for t in texts.values() if term in t)
            tf = toks.count(term)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(toks) / avgdl))
        if score:
            expected[doc] = score
    rows = imported.execute(query("recall_bm25_day_table"), {
        "terms": terms, "weights": [1.0] * len(terms), "k1": 1.2, "b": 0.75, "k": 20,
        "depth": 1000, "user_id": None, "since": None, "until": None}).fetchall()
    got = {r[0]: float(r[7]) for r in rows}
    assert got.keys() == expected.keys()
    for doc, score in expected.items():
        assert abs(got[doc] - score) < 1e-9
    best = max(expected, key=lambda d: expected[d])
    assert rows[0][0] == best and "crack" in rows[0][3]


def test_bm25_reads_at_most_depth_postings_per_term_best_impact_first(imported: Any) -> None:
    """Revision 0012: a term's list is read best impact first and cut at the depth; the
    documents kept are those the cut lists reach, scored from what was read."""
    from agent.db.queries import query

    terms = [t for t, df in imported.execute(
        "SELECT term, df FROM lexical_terms WHERE kind = 'day_table' AND df >= 2 "
        "ORDER BY df DESC, term LIMIT 3").fetchall()]
    assert len(terms) == 3
    params = {"terms": terms, "weights": [1.0] * 3, "k1": 1.2, "b": 0.75, "k": 50,
              "user_id": None, "since": None, "until": None}
    whole = imported.execute(query("recall_bm25_day_table"), {**params, "depth": 1000}
                             ).fetchall()
    cut = imported.execute(query("recall_bm25_day_table"), {**params, "depth": 1}
                           ).fetchall()
    tops = {r[0] for r in imported.execute(  # each term's best postings (ties included)
        "SELECT doc_id FROM lexical_postings p WHERE kind = 'day_table' AND term = ANY(%s) "
        "AND impact = (SELECT max(impact) FROM lexical_postings q "
        "              WHERE q.kind = p.kind AND q.term = p.term)", (terms,)).fetchall()}
    assert len(whole) > len(cut) and 1 <= len(cut) <= 3 and {r[0] for r in cut} <= tops
    # the impact order is BM25's own term-frequency part: the best posting of a term
    # has the highest tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)) at write time
    for term in terms:
        best = imported.execute(
            "SELECT max(impact), max(tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * doc_len / "
            "(SELECT total_len::float8 / n_docs FROM lexical_stats WHERE kind = 'day_table'))))"
            " FROM lexical_postings WHERE kind = 'day_table' AND term = %s", (term,)).fetchone()
        assert best[0] > 0 and abs(best[0] - best[1]) < 0.5


def test_document_frequencies_follow_inserts_and_deletes(imported: Any) -> None:
    def drift() -> list[Any]:
        return imported.execute(
            "SELECT t.term, t.df, count(p.doc_id) FROM lexical_terms t "
            "LEFT JOIN lexical_postings p ON p.kind = t.kind AND p.term = t.term "
            "WHERE t.kind = 'day_table' GROUP BY t.term, t.df "
            "HAVING t.df <> count(p.doc_id)").fetchall()

    assert imported.execute("SELECT count(*) FROM lexical_terms WHERE kind = 'day_table'"
                            ).fetchone()[0] > 0
    assert drift() == []
    imported.execute("DELETE FROM day_table WHERE external_id IN ('s2-4', 's1-0')")
    assert drift() == []


def test_an_update_reindexes_only_what_changed(imported: Any) -> None:
    """The row-level UPDATE trigger: index_tsv to NULL and back, a new owner or date, and
    an update of another column, each leaving postings, df and stats in step."""
    def state() -> tuple[Any, ...]:
        stats = imported.execute("SELECT n_docs, total_len FROM lexical_stats "
                                 "WHERE kind = 'day_table'").fetchone()
        counted = imported.execute(
            "SELECT count(DISTINCT doc_id), count(*) FROM lexical_postings "
            "WHERE kind = 'day_table'").fetchone()
        drift = imported.execute(
            "SELECT count(*) FROM lexical_terms t WHERE t.kind = 'day_table' AND t.df <> "
            "(SELECT count(*) FROM lexical_postings p WHERE p.kind = 'day_table' "
            " AND p.term = t.term)").fetchone()[0]
        return tuple(stats) + tuple(counted) + (drift,)

    start = state()
    assert start[0] == start[2] and start[4] == 0
    row = imported.execute("SELECT entry_id, index_tsv::text FROM day_table "
                           "WHERE external_id = 's1-1'").fetchone()
    imported.execute("UPDATE day_table SET index_tsv = NULL WHERE entry_id = %s", (row[0],))
    gone = state()
    assert gone[0] == start[0] - 1 and gone[2] == start[2] - 1 and gone[4] == 0
    imported.execute("UPDATE day_table SET index_tsv = %s::tsvector WHERE entry_id = %s",
                     (row[1], row[0]))
    assert state() == start
    other = imported.execute("INSERT INTO users (handle) VALUES ('other') RETURNING user_id"
                             ).fetchone()[0]
    imported.execute("UPDATE day_table SET user_id = %s, created_at = created_at - "
                     "interval '1 day' WHERE entry_id = %s", (other, row[0]))
    moved = imported.execute("SELECT DISTINCT user_id, dated FROM lexical_postings "
                             "WHERE doc_id = %s", (row[0],)).fetchall()
    stamped = imported.execute("SELECT created_at FROM day_table WHERE entry_id = %s",
                               (row[0],)).fetchone()[0]
    assert moved == [(other, stamped)] and state() == start
    before = imported.execute("SELECT xmin::text FROM lexical_postings WHERE doc_id = %s "
                              "ORDER BY term", (row[0],)).fetchall()
    imported.execute("UPDATE day_table SET token_count = token_count + 1 WHERE entry_id = %s",
                     (row[0],))  # not an indexed field: the postings are not rewritten
    assert imported.execute("SELECT xmin::text FROM lexical_postings WHERE doc_id = %s "
                            "ORDER BY term", (row[0],)).fetchall() == before
    assert state() == start


def test_deleting_a_turn_removes_its_postings(imported: Any) -> None:
    before = imported.execute("SELECT count(*) FROM lexical_postings").fetchone()[0]
    gone = imported.execute("DELETE FROM day_table WHERE external_id = 's2-4' "
                            "RETURNING index_text").fetchone()[0]
    after = imported.execute("SELECT count(*) FROM lexical_postings").fetchone()[0]
    assert before - after == len(set(lexical.tokens(gone)))
    assert imported.execute("SELECT n_docs FROM lexical_stats WHERE kind = 'day_table'"
                            ).fetchone()[0] == len(LINES) - 1


def test_reindex_rebuilds_old_rows_and_memories(settings: Settings, imported: Any) -> None:
    imported.execute("UPDATE day_table SET index_version = NULL, index_tsv = NULL, "
                     "index_text = NULL WHERE external_id = 's1-0'")
    assert imported.execute("SELECT count(*) FROM lexical_postings p JOIN day_table d "
                            "ON d.entry_id = p.doc_id WHERE d.external_id = 's1-0'"
                            ).fetchone()[0] == 0
    src = imported.execute("SELECT entry_id, session_id, user_id FROM day_table "
                           "WHERE external_id = 's2-7'").fetchone()
    imported.execute("INSERT INTO memories (user_id, session_id, source_entry_id, content) "
                     "VALUES (%s, %s, %s, 'Ana lives in Porto now')", (src[2], src[1], src[0]))
    indexer = Runtime(settings).indexer()
    report = indexer.run(imported)
    assert report.pending == {"day_table": 1, "memory": 1, "block": 0}
    assert report.indexed == {"day_table": 1, "memory": 1, "block": 0}
    text = imported.execute("SELECT index_text FROM memories").fetchone()[0]
    assert text == "(13 May 2023) Ana: Ana lives in Porto now"
    assert imported.execute("SELECT count(*) FROM lexical_postings WHERE kind = 'memory'"
                            ).fetchone()[0] == len(set(lexical.tokens(text)))
    assert indexer.run(imported).indexed == {"day_table": 0, "memory": 0, "block": 0}
    everything = indexer.run(imported, everything=True)
    assert everything.indexed["day_table"] == len(LINES)


@pytest.mark.parametrize("pipeline", [True, False], ids=["pipeline", "no-pipeline"])
def test_recall_prefers_the_named_speaker_and_the_asked_window(
    settings: Settings, imported: Any, pipeline: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same answers whether the lists go in one round trip (pipeline mode) or one
    after the other (a libpq without pipeline mode)."""
    import psycopg

    if not pipeline:
        monkeypatch.setattr(psycopg.Pipeline, "is_supported", classmethod(lambda cls: False))
        monkeypatch.setattr(type(imported), "pipeline", None)  # any use would fail
    recaller = Runtime(settings).recaller()
    now = datetime(2023, 6, 1, tzinfo=UTC)
    out = recaller.recall(imported, "What does Ben say about his pottery?", log=False, now=now)
    top = out.result.items[0]
    assert top.speaker == "Ben" and "pottery" in top.content.lower()
    out = recaller.recall(imported, "What did Ben buy in May?", log=False, now=now)
    assert out.result.window is not None and out.result.window.start.month == 5
    assert out.result.items[0].external_ids == ("s2-4",)
    payload = out.result.items[0].as_dict()
    assert payload["speaker"] == "Ben" and payload["created_at"].startswith("2023-05-13")


def test_a_turn_only_bm25_finds_comes_with_its_judged_and_goal_similarities(
        settings: Settings, imported: Any) -> None:
    """A row only a BM25 list found (ranked before the query was embedded) comes with its
    similarities to the judged question and to the goals (similarity_by_ids, asked beside
    the dense lists): the same cosines a dense list brings for its own rows."""
    from agent.db.queries import vector_text

    settings.recall["rerank_candidate_multiplier"] = 1  # dense lists of 2 of the 8 turns
    recaller = Runtime(settings).recaller()
    # the kiln turn's vectors point away from the query, so that neither dense list can hold
    # it among its 2 and only BM25 ("kiln") finds it; left as embedded, both dense lists and
    # BM25 may pick the same two pottery turns, and the test would check nothing
    away = vector_text(-recaller.embedder.embed_query("pottery kiln"))
    imported.execute("UPDATE day_table SET universal_embedding = %(v)s::vector, "
                     "index_embedding = %(v)s::vector WHERE external_id = 's2-6'", {"v": away})
    kiln = imported.execute("SELECT entry_id::text FROM day_table WHERE external_id = 's2-6'"
                            ).fetchone()[0]
    goal = factory.build_universal_embedder(settings).embed_query("a bicycle")
    cands, _ = recaller.candidates(imported, "pottery kiln", 2, verdict_text="pottery kiln",
                                   goal_vector=goal.tolist())
    only_bm25 = [c for c in cands if c.kind == "day_table" and c.sparse_rank is not None
                 and c.dense_rank is None and c.bare_rank is None]
    assert [c.source_ids[0] for c in only_bm25] == [kiln], [
        (c.content, c.dense_rank, c.sparse_rank) for c in cands]
    judged = vector_text(recaller.embedder.embed_query("pottery kiln"))
    for c in only_bm25:
        sim, goal_sim = imported.execute(
            "SELECT 1 - least(universal_embedding <=> %(q)s::vector, "
            "index_embedding <=> %(q)s::vector), 1 - (universal_embedding <=> %(g)s::vector) "
            "FROM day_table WHERE entry_id = %(id)s",
            {"q": judged, "g": vector_text(goal), "id": c.source_ids[0]}).fetchone()
        assert c.similarity == pytest.approx(sim, abs=1e-6)
        assert c.goal_similarity == pytest.approx(goal_sim, abs=1e-6)


def test_a_block_hit_leads_back_to_the_turns_it_was_formed_from(settings: Settings,
                                                              imported: Any) -> None:
    from agent.db.queries import vector_text

    turns = imported.execute("SELECT entry_id, session_id, user_id FROM day_table WHERE "
                             "external_id IN ('s2-5', 's2-6') ORDER BY external_id").fetchall()
    prose = {"live_zone": "Both of them make pottery bowls; Ben's crack in the kiln."}
    vec = factory.build_universal_embedder(settings).embed_documents([prose["live_zone"]])[0]
    imported.execute(
        "INSERT INTO holographic_blocks (prose, universal_embedding, flux_metrics, "
        "salience_scores, coherence_gain, ties_merge_weight, session_id, user_id, "
        "arc_start_time, arc_end_time) VALUES (%s::jsonb, %s::vector, %s::jsonb, '{}', 0.5, "
        "0.5, %s, %s, %s, %s)",
        (json.dumps(prose), vector_text(vec),
         json.dumps({"entry_ids": [str(t[0]) for t in turns]}), turns[0][1], turns[0][2],
         datetime(2023, 5, 13, tzinfo=UTC), datetime(2023, 5, 13, 1, tzinfo=UTC)))
    Indexer(None, IndexConfig.from_table(settings.recall)).run(imported, kinds=("block",))
    out = Runtime(settings).recaller().recall(imported, "pottery bowls cracking in the kiln",
                                          k=20, log=False)
    blocks = [i for i in out.result.items if i.kind == "block"]
    assert blocks and set(blocks[0].external_ids) == {"s2-5", "s2-6"}
    assert set(blocks[0].source_ids) == {str(t[0]) for t in turns}
    assert blocks[0].components.get("rrf", 0) > 0


def route_rewrite_to_stub(settings: Settings, stub: StubServer,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    stub.route(settings, monkeypatch, "rewrite")
    settings.recall["strong_match_min_score"] = 1.01  # never strong: the fallback always runs


def test_a_weak_match_is_rewritten_by_the_llm_and_fused(
        settings: Settings, imported: Any, stub_server: StubServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    route_rewrite_to_stub(settings, stub_server, monkeypatch)
    stub_server.queue_replies("1. record player flea market\n"
                              "- What did Ben pick up secondhand?\n"
                              "Which music gadget did Ben buy?\n")
    recaller = Runtime(settings).recaller()
    try:
        out = recaller.recall(imported, "Which music gadget did Ben buy?", k=8, log=False)
    finally:
        recaller.rewriter.close()  # type: ignore[union-attr]
    asked = [r.body for r in stub_server.requests if r.path.endswith("/chat/completions")]
    assert len(asked) == 1 and "Which music gadget did Ben buy?" in json.dumps(asked[0])
    result = out.result
    # list marks stripped, the question itself dropped
    assert result.rewrites == ["record player flea market", "What did Ben pick up secondhand?"]
    assert result.rewritten_by == "llm:openai/stub-chat"
    ranks = {i.external_ids: i.components.get("rewrite_rank") for i in result.items}
    assert ranks[("s2-4",)] == 1.0  # the record player: first under the rewrites' ranking


def test_a_failed_rewrite_keeps_the_first_pass(
        settings: Settings, imported: Any, stub_server: StubServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    route_rewrite_to_stub(settings, stub_server, monkeypatch)
    stub_server.fail_next(1, 401)
    recaller = Runtime(settings).recaller()
    try:
        out = recaller.recall(imported, "Which music gadget did Ben buy?", log=False)
        assert stub_server.count() == 1
        assert (out.result.items and out.result.rewrites == []
                and out.result.rewritten_by is None)
        assert all("rewrite_rank" not in i.components for i in out.result.items)
        recaller.cfg = replace(recaller.cfg, heuristic_fallback=True)  # the heuristic steps in
        stub_server.fail_next(1, 401)
        out = recaller.recall(imported, "Which music gadget did Ben buy?", log=False)
        assert out.result.rewritten_by == "heuristic" and out.result.rewrites
    finally:
        recaller.rewriter.close()  # type: ignore[union-attr]


def test_the_bundled_models_do_not_rewrite(settings: Settings) -> None:
    from agent.runtime import Runtime

    for profile in ("local", "heuristic"):
        settings.llm.roles["rewrite"] = profile
        assert Runtime(settings).rewriter() is None


def test_an_embedding_failure_with_the_bm25_lists_in_flight_leaves_the_connection_usable(
        settings: Settings, imported: Any) -> None:
    """The BM25 lists are sent before the query is embedded: when the embedding fails, the
    error reaches the caller and the connection (its pipeline drained) serves the next
    recall."""
    from agent.errors import ProviderError

    recaller = Runtime(settings).recaller()
    works = recaller.embedder

    class Failing:
        def __getattr__(self, name: str) -> Any:
            return getattr(works, name)

        def embed_query(self, text: str) -> Any:
            raise ProviderError("embedding service unavailable")

    recaller.embedder = Failing()  # type: ignore[assignment]
    with pytest.raises(ProviderError, match="unavailable"):
        recaller.recall(imported, "pottery kiln", log=False)
    assert imported.info.transaction_status.name == "IDLE"
    recaller.embedder = works
    out = recaller.recall(imported, "pottery kiln", log=False)
    assert "kiln" in out.result.items[0].content
