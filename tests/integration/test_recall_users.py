"""Recall scoped to one user among many (issue "Recall at a million memories"): the HNSW
lists keep their recall under the user filter (pgvector's iterative index scan), and the
BM25 lists read one user's postings best first, never another user's."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest

from agent.config import Settings
from agent.db.queries import query, vector_text
from agent.domain import lexical
from agent.runtime import Runtime
from agent.services.memory.recall import _hnsw_settings

USERS, PER_USER, DIM_SEED = 40, 30, 3


def _load(conn: psycopg.Connection[Any], dim: int) -> tuple[list[Any], np.ndarray, list[Any]]:
    """USERS users with PER_USER memories each: random unit vectors, and a text with a
    term every memory shares ("budget") and one of its own user."""
    rng = np.random.default_rng(DIM_SEED)
    users = [conn.execute("INSERT INTO users (handle) VALUES (%s) RETURNING user_id",
                          (f"user{u}",)).fetchone()[0] for u in range(USERS)]
    vectors = rng.normal(size=(USERS * PER_USER, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owners = []
    with conn.cursor() as cur, cur.copy(
            "COPY memories (content, memory_type, universal_embedding, index_text, index_tsv, "
            "user_id) FROM STDIN") as copy:
        for i, vec in enumerate(vectors):
            owner = users[i // PER_USER]
            text = f"budget review number {i} for team{i // PER_USER}"
            owners.append(owner)
            copy.write_row((text, "fact", vector_text(vec), text,
                            lexical.tsvector_literal(lexical.tokens(text)), str(owner)))
    conn.execute("ANALYZE memories")
    return users, vectors, owners


def test_dense_recall_of_one_user_among_many_keeps_the_index_recall(
        settings: Settings, conn: psycopg.Connection[Any]) -> None:
    dim = int(settings.embedding.universal_dim)
    users, vectors, owners = _load(conn, dim)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == USERS * PER_USER
    rng = np.random.default_rng(11)
    by_text = {r[1]: r[0] for r in conn.execute("SELECT memory_id, content FROM memories")}
    mine = users[7]
    own = [i for i, o in enumerate(owners) if o == mine]
    found: list[float] = []

    def plan() -> str:
        return "\n".join(r[0] for r in conn.execute(
            "EXPLAIN " + query("recall_dense_memories"),
            {"query": vector_text(vectors[0]), "k": 10, "user_id": str(mine),
             "judge": vector_text(vectors[0]), "goal": None}))

    # a user with few rows: the planner reads them through the user index, exactly
    assert "ix_memories_user_status" in plan()
    ask(conn, settings, rng, vectors, owners, by_text, mine, own, found)
    assert found == [1.0] * 10
    # a user with many rows among many users (forced here: no user index, no seq scan of
    # this small table): HNSW under the filter
    conn.execute("DROP INDEX ix_memories_user_status")
    conn.execute("SET enable_seqscan = off")
    assert "ix_memories_universal_embedding_hnsw" in plan()
    found.clear()
    ask(conn, settings, rng, vectors, owners, by_text, mine, own, found)
    assert sum(found) / len(found) >= 0.95


def ask(conn: psycopg.Connection[Any], settings: Settings, rng: Any, vectors: np.ndarray,
        owners: list[Any], by_text: dict[str, Any], mine: Any, own: list[int],
        found: list[float]) -> None:
    dim = vectors.shape[1]
    for _ in range(10):
        q = rng.normal(size=dim).astype(np.float32)
        q /= np.linalg.norm(q)
        exact = sorted(own, key=lambda i: -float(vectors[i] @ q))[:10]
        want = {by_text[f"budget review number {i} for team{i // PER_USER}"] for i in exact}
        _hnsw_settings(conn, settings.recall.hnsw_ef_search[0])  # a small table
        rows = conn.execute(query("recall_dense_memories"),
                            {"query": vector_text(q), "k": 10, "user_id": str(mine),
                             "judge": vector_text(q), "goal": None}).fetchall()
        got = {r[0] for r in rows}
        # the filter selects 1 row in 40: a plain HNSW scan of ef_search 40 finds ~1 of
        # them; the iterative scan keeps going until 10 pass
        assert len(got) == 10
        assert {r[0] for r in conn.execute(
            "SELECT user_id FROM memories WHERE memory_id = ANY(%s)", (list(got),))} == {mine}
        found.append(len(got & want) / 10)


def test_bm25_of_one_user_reads_only_that_users_postings(
        settings: Settings, conn: psycopg.Connection[Any]) -> None:
    users, _, _ = _load(conn, int(settings.embedding.universal_dim))
    mine = users[3]
    params = {"terms": ["budg"], "weights": [1.0], "k1": 1.2, "b": 0.75, "k": 50,
              "since": None, "until": None}
    rows = conn.execute(query("recall_bm25_memories"),
                        {**params, "depth": 1000, "user_id": str(mine)}).fetchall()
    owners = {r[0] for r in conn.execute(
        "SELECT user_id FROM memories WHERE memory_id = ANY(%s)", ([r[0] for r in rows],))}
    assert len(rows) == PER_USER and owners == {mine}
    # the depth bounds what is read per term: 5 of this user's postings, still only theirs
    cut = conn.execute(query("recall_bm25_memories"),
                       {**params, "depth": 5, "user_id": str(mine)}).fetchall()
    assert len(cut) == 5 and {r[0] for r in cut} <= {r[0] for r in rows}
    plan = "\n".join(r[0] for r in conn.execute(
        "EXPLAIN " + query("recall_bm25_memories"), {**params, "depth": 5,
                                                    "user_id": str(mine)}))
    assert "ix_lexical_postings_top" in plan
    # operator tools (no user): every user's documents
    everyone = conn.execute(query("recall_bm25_memories"),
                            {**params, "depth": 1000, "user_id": None}).fetchall()
    owners_all = {r[0] for r in conn.execute(
        "SELECT user_id FROM memories WHERE memory_id = ANY(%s)", ([r[0] for r in everyone],))}
    assert len(everyone) == 50 and len(owners_all) > 1


FACTS = ("My sister Ana booked the rental car for Lisbon.", "The plumber fixed the kitchen tap.",
         "Grandma Rosa sent a jar of honey.", "Kenji lent me a first edition of Dune.",
         "The vet moved the cat's vaccination to Friday.", "Priya asked about the tax return.")


def test_the_memories_dense_list_on_a_side_connection_changes_nothing_but_where_it_runs(
        settings: Settings, conn: psycopg.Connection[Any], db_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop worker's recall runs its memories' dense list on a pooled side connection
    (issue 15); the recall is the same, and inside a caller's transaction (whose writes
    another connection cannot see) the side connection is not used. An error while the
    side's scan is open reaches the caller, and the side connection goes back to the pool
    idle, ready for the next recall."""
    from contextlib import contextmanager

    from agent.db.pool import side_pool
    from agent.runtime import Runtime

    recaller = Runtime(settings).recaller()
    user = conn.execute("INSERT INTO users (handle) VALUES ('ana') RETURNING user_id"
                        ).fetchone()[0]

    def remember(text: str) -> None:
        vec = vector_text(recaller.embedder.embed_documents([text])[0])
        conn.execute("INSERT INTO memories (content, memory_type, universal_embedding, "
                     "index_text, index_tsv, user_id) VALUES (%s, 'fact', %s::vector, %s, "
                     "%s::tsvector, %s)", (text, vec, text,
                                           lexical.tsvector_literal(lexical.tokens(text)),
                                           user))

    for text in FACTS:
        remember(text)
    question = "Who booked the rental car?"
    alone = recaller.recall(conn, question, user_id=user, log=False)
    pool = side_pool(settings, db_url, "test", role=False)
    lent: list[int] = []

    @contextmanager
    def counted() -> Any:
        with pool.connection() as other:
            lent.append(1)
            yield other

    recaller.side = counted
    try:
        beside = recaller.recall(conn, question, user_id=user, log=False)
        assert lent == [1]
        assert [(i.id, round(i.score, 6)) for i in beside.result.items] == [
            (i.id, round(i.score, 6)) for i in alone.result.items]
        assert "rental car" in beside.result.items[0].content
        with conn.transaction():  # not committed: only this connection sees it
            remember("Quentin the zebra lives at the Oslo zoo.")
            inside = recaller.recall(conn, "Where does Quentin the zebra live?",
                                     user_id=user, log=False)
            assert "Quentin" in inside.result.items[0].content
            assert lent == [1]  # the side connection was not used inside the transaction

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("cortex unreachable")

        with monkeypatch.context() as patch:  # raised before the side's rows are read
            patch.setattr(recaller.cortex, "search", broken)
            with pytest.raises(RuntimeError, match="cortex unreachable"):
                recaller.recall(conn, question, user_id=user, log=False)
        assert lent == [1, 1]
        stats = pool.get_stats()
        assert stats.get("returns_bad", 0) == 0 and stats.get("connections_lost", 0) == 0
        again = recaller.recall(conn, question, user_id=user, log=False)
        assert lent == [1, 1, 1]
        recaller.side = None  # the same recall without it (Quentin is committed by now)
        plain = recaller.recall(conn, question, user_id=user, log=False)
        assert [(i.id, round(i.score, 6)) for i in again.result.items] == [
            (i.id, round(i.score, 6)) for i in plain.result.items]
    finally:
        pool.close()


def test_recall_widens_the_hnsw_search_as_memories_grow(
        settings: Settings, conn: psycopg.Connection[Any], db_url: str) -> None:
    """hnsw.ef_search follows memories' size ([recall] hnsw_ef_search by
    hnsw_ef_search_sizes, the planner's estimate of every user's rows), on the caller's
    connection and on the side one; the size is re-read once a minute, not per recall."""
    from dataclasses import replace

    from agent.db.pool import side_pool
    from agent.services.memory import recall as service

    recaller = Runtime(settings).recaller()
    recaller.cfg = replace(recaller.cfg, hnsw_ef_search=(41, 42, 43),
                           hnsw_ef_search_sizes=(100, USERS * PER_USER - 1))
    pool = side_pool(settings, db_url, "test", role=False)
    recaller.side = pool.connection
    side_ef: list[str] = []
    real_settings = service._hnsw_settings

    def record(c: psycopg.Connection[Any], ef: int) -> None:
        real_settings(c, ef)
        if c is not conn:
            side_ef.append(c.execute("SHOW hnsw.ef_search").fetchone()[0])

    def recall() -> tuple[str, str]:
        recaller.recall(conn, "budget review", log=False)
        return conn.execute("SHOW hnsw.ef_search").fetchone()[0], side_ef[-1]

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(service, "_hnsw_settings", record)
            conn.execute("ANALYZE memories")  # empty: the estimate is 0
            seen = [recall()]
            _load(conn, int(settings.embedding.universal_dim))  # 1,200 rows, analyzed
            seen.append(recall())  # the size was read less than a minute ago
            recaller.forget_memories_size()  # as a minute later
            seen.append(recall())
        assert seen == [("41", "41"), ("41", "41"), ("43", "43")]
        assert [recaller.cfg.ef_search_for(n) for n in (0, 100, 101, 1199, 1200)] == [
            41, 41, 42, 42, 43]
    finally:
        pool.close()


def test_similarity_by_ids_gives_the_memories_bm25_found_their_cosines(
        settings: Settings, conn: psycopg.Connection[Any]) -> None:
    """The similarity ask for the rows the BM25 lists found (recall sends it once the query
    is embedded): each memory's cosine to the judged question and to the goals, keyed as
    the candidate pool keys it; NULL goal similarity without goals."""
    _, vectors, _ = _load(conn, int(settings.embedding.universal_dim))
    ids = [str(r[0]) for r in conn.execute(
        "SELECT memory_id FROM memories ORDER BY content LIMIT 5")]
    judge, goal = vector_text(vectors[0]), vector_text(vectors[1])
    got = {(kind, str(rid)): (sim, goal_sim) for kind, rid, sim, goal_sim in conn.execute(
        query("similarity_by_ids"),
        {"judge": judge, "goal": goal, "turn_ids": [], "memory_ids": ids})}
    want = {("memory", str(rid)): (sim, goal_sim) for rid, sim, goal_sim in conn.execute(
        "SELECT memory_id, 1 - (universal_embedding <=> %(j)s::vector), "
        "1 - (universal_embedding <=> %(g)s::vector) FROM memories "
        "WHERE memory_id = ANY(%(ids)s::uuid[])", {"j": judge, "g": goal, "ids": ids})}
    assert len(want) == 5 and got.keys() == want.keys()
    for key, (sim, goal_sim) in want.items():
        assert got[key][0] == pytest.approx(sim, abs=1e-9)
        assert got[key][1] == pytest.approx(goal_sim, abs=1e-9)
    no_goal = conn.execute(query("similarity_by_ids"), {
        "judge": judge, "goal": None, "turn_ids": [], "memory_ids": ids[:1]}).fetchall()
    assert len(no_goal) == 1 and no_goal[0][3] is None


def test_the_memories_dense_list_is_planned_for_each_recall(
        settings: Settings, conn: psycopg.Connection[Any]) -> None:
    """recall_dense_memories goes unprepared (agent/services/memory/recall.py _list): Postgres plans
    it for each recall's user and k, never with a generic plan kept from average estimates
    (an exact search through the user index, where a user has most rows). The other lists
    become prepared statements as before (psycopg prepares a query run 5 times)."""
    from agent.runtime import Runtime
    from bench.suites.loop import _as_sent

    users, _, _ = _load(conn, int(settings.embedding.universal_dim))
    recaller = Runtime(settings).recaller()
    for _ in range(7):
        out = recaller.recall(conn, "budget review for team7", user_id=users[7], log=False)
        assert out.result.items  # the memories' list found the user's memories
    statements = [r[0] for r in conn.execute(
        "SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")]
    assert _as_sent(query("recall_dense_day_table")) in statements  # prepared
    assert _as_sent(query("recall_bm25_memories")) in statements
    assert _as_sent(query("recall_dense_memories")) not in statements
