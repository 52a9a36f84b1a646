"""Recall (issue #4, step 3): the database side of the retrieval chain.

dense (HNSW over day_table, memories, holographic_blocks) | BM25 over their contextual
index entries (lexical_postings, revision 0007) | both again inside the time window the
question names | cortex port → the domain pipeline (weighted RRF, time, person and role
factors, tie-breakers or newness, rerank, verdict, recently-injected filter, token
budget) → recall_log.

A broad question (about a period or a theme, by the broad-question heuristic of
agent/domain/broad.py) also gets the cortex's RAPTOR nodes (levels 1-3) as items of kind
"cluster", first, within a share of the token budget; the cortex is read only then.

Round trips per recall (pipeline mode): the speakers the question names and the BM25
lists, sent before the query is embedded (the server ranks them meanwhile: the local
model's query threads never spin, so they leave it a core when they wait); once it is
embedded, one for the dense lists and the judged and goal similarities of BM25's rows
(the dense lists return their own); one for recall_log. Given
a side connection (the loop worker's pool), the memories' dense list, the longest HNSW
scan, runs on it beside the others.

Given a reader (a pool on [database] recall_url, a read replica), those read-only queries
run on one of its connections instead, side list included; recall_log and reconsolidation
(recall's only writes) stay on the caller's connection, the primary. A caller inside a
transaction reads its own connection (the replica would not see its writes), and so does
a recall whose reader cannot lend a connection (the replica is down: said once a minute).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.string import TextLoader

from agent.cortex.port import CortexStore, EmptyCortex
from agent.db.pool import Checkout
from agent.db.queries import query, vector_text
from agent.domain import broad, lexical, timeref
from agent.domain import recall as domain
from agent.domain.contextual import prose_text, speaker_label
from agent.domain.emotion import EmotionState, MoodCue
from agent.domain.fusion import FusionModel
from agent.errors import ConfigError, ProviderError
from agent.providers.ports import LLM, Embedder, Reranker
from agent.services.memory import claims

logger = logging.getLogger(__name__)
MAX_QUERY_TERMS = 64
# the dense list that runs on the side connection, beside the rest: the largest HNSW scan
SIDE_LIST = "recall_dense_memories"
# the lists sent unprepared, planned for each recall's user and k (see _list)
UNPREPARED = frozenset({"recall_dense_memories"})
EF_REFRESH_S = 60.0  # how often recall re-reads memories' size for its ef_search band
# a turn list's own score (column 7), kept for the learned fusion: (field, is a distance)
_TURN_SCORES = {"sparse_rank": ("bm25_score", False), "window_sparse_rank": ("bm25_score", False),
                "dense_rank": ("dense_similarity", True), "bare_rank": ("bare_similarity", True)}


@dataclass
class RecallOutcome:
    result: domain.RecallResult
    query_text: str
    latency_ms: float
    log_id: int | None
    cortex_events: list[dict[str, Any]] = field(default_factory=list)  # reconsolidation
    # the universal query vectors this recall embedded, by the text embedded (its query and
    # the judged question, as bounded): the loop reuses them for the rest of the turn
    vectors: dict[str, Any] = field(default_factory=dict)


class Recaller:
    def __init__(
        self,
        embedder: Embedder,
        reranker: Reranker | None,
        cfg: domain.RecallConfig,
        count_tokens: Callable[[str], int],
        cortex: CortexStore | None = None,
        rewriter: LLM | None = None,
        broad_cfg: broad.BroadConfig | None = None,
        side: Checkout | None = None,
        reader: Checkout | None = None,
    ) -> None:
        self.embedder = embedder
        # connections to a read replica ([database] recall_url) for the read-only queries
        self.reader = reader
        self._reader_warned = 0.0
        # broad questions read the cortex's RAPTOR nodes ([recall] broad_*); None: never
        self.broad_cfg = broad_cfg
        # the weak-match fallback's LLM (role `rewrite`), only when it routes to a real
        # model; None: the named heuristic rewrites, if [recall] heuristic_fallback
        self.rewriter = rewriter
        self.reranker = reranker
        self.cfg = cfg
        self.count_tokens = count_tokens
        self.cortex = cortex or EmptyCortex()
        # term coverage costs one capped doc-frequency query; skipped when neither the
        # verdict (lexical_weight 0) nor the learned fusion (a feature, [recall] fusion)
        # uses it, unless a caller asks (bench/suites/calibrate.py)
        self.compute_coverage = cfg.lexical_weight > 0
        # a second connection (a process pool's checkout) the memories' dense list runs on,
        # beside the other lists on the caller's; None, or a caller inside a transaction
        # (whose own writes another connection would not see): one connection
        self.side: Checkout | None = side
        # (hnsw.ef_search for memories' size, when that size was read): see ef_search
        self._ef: tuple[int, float] | None = None

    def ef_search(self, conn: psycopg.Connection[Any]) -> int:
        """hnsw.ef_search for memories' current size ([recall] hnsw_ef_search by
        hnsw_ef_search_sizes): the planner's row estimate, re-read once a minute."""
        now = time.monotonic()
        if self._ef is None or now - self._ef[1] >= EF_REFRESH_S:
            row = conn.execute(query("recall_memories_estimate")).fetchone()
            self._ef = (self.cfg.ef_search_for(int(row[0]) if row else 0), now)
        return self._ef[0]

    def fusion(self) -> FusionModel | None:
        """The learned fusion's model when [recall] fusion = "learned" (read once per file);
        None: the weighted RRF. Checked at each recall, so a copy with another config
        (bench ablations) follows its own."""
        if self.cfg.fusion != "learned":
            return None
        return load_fusion(self.cfg.fusion_model)

    def forget_memories_size(self) -> None:
        """Read memories' size again at the next recall (after a bulk load, say)."""
        self._ef = None

    def query_context(self, text: str, now: datetime) -> tuple[domain.QueryContext, list[str]]:
        """The period the question asks about (against `now`) and whether it asks for the
        current state; with the words that could name a speaker of this user's turns, which
        `candidates` looks up in its first round trip (the context's `people`)."""
        tq = timeref.resolve(text, now)
        # a name is written with a capital, unless the whole query is lower case (asked
        # once: per word, it made the step quadratic in the message's length, issue 38)
        all_lower = text.islower()
        words = [w for w in lexical.WORD.findall(text) if len(w) > 1 and not w.isdigit()
                 and (w[0].isupper() or all_lower)]
        names = sorted({v for w in words for v in (w, w.lower(), w.capitalize())})
        return domain.QueryContext(window=tq.window, asks_current=tq.asks_current,
                                   asks_past=tq.asks_past or tq.asks_first), names

    def candidates(
        self, conn: psycopg.Connection[Any], text: str, k: int, verdict_text: str | None = None,
        goal_vector: Sequence[float] | None = None, user_id: Any = None,
        context: domain.QueryContext | None = None, speaker_names: Sequence[str] = (),
        embedded: dict[str, Any] | None = None, use_side: bool = True,
    ) -> tuple[list[domain.Candidate], frozenset[str]]:
        """Candidates from every list (dense | BM25 per table, both inside the asked time
        window, cortex), each with similarity and term coverage; and the people the query
        names: those of `speaker_names` that are speakers of this user's turns (the
        context's own `people` when none are given).

        `text` is what is searched (the compound query in the loop); `verdict_text`
        (default: `text`) is what the verdict judges: the question actually asked.
        `user_id`: only that user's rows (and rows of no user); None: everyone's.
        `embedded`: the universal query vectors already embedded, by text (reused, not
        embedded again); those embedded here are added to it.

        psycopg pipeline mode. The speaker lookup and the BM25 lists are sent first: the
        server ranks them while the query is embedded (the local model embeds a query on two
        threads that never spin, [embedding] local_query_threads and local_query_spin: a
        waiting thread leaves its core to the backend; threads spinning within the run were
        faster alone but slower beside these lists, one thread slower at 10k memories).
        Once the query is embedded, one round
        trip: the dense lists, and the judged and goal similarities of the rows BM25 found
        (similarity_by_ids); the dense lists return their own rows' similarities. Given a
        side connection (`side`), it runs the memories' dense list (the largest HNSW scan),
        sent first, beside all that; it is read last, after the cortex. Between the
        embedding and the sync the client only sends and reads: on 2 cores, any other work
        there keeps the caller's backend off the core the side's scan leaves free.
        """
        ef_search = self.ef_search(conn)
        _hnsw_settings(conn, ef_search)
        ctx = context or domain.QueryContext()
        judge = verdict_text or text
        pool = k * max(1, int(self.cfg.rerank_candidate_multiplier))
        uid = None if user_id is None else str(user_id)
        search_terms = lexical.terms(text)[:MAX_QUERY_TERMS]
        window = (None if ctx.window is None
                  else {"since": ctx.window.start, "until": ctx.window.end})
        bm25 = {"terms": search_terms, "weights": [1.0] * len(search_terms),
                "k1": float(self.cfg.bm25_k1), "b": float(self.cfg.bm25_b), "k": pool,
                "depth": max(pool, int(self.cfg.bm25_term_depth)),
                "user_id": uid, "since": None, "until": None}
        lists: list[tuple[str, str, Any]] = []  # (list, row kind, cursor): the caller's
        side_lists: list[tuple[str, str, Any]] = []  # the one on the side connection
        side = (self.side if use_side
                and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE else None)
        dense = [("dense_rank", "turn", "recall_dense_day_table"),
                 ("dense_rank", "memory", "recall_dense_memories"),
                 ("dense_rank", "block", "recall_dense_blocks")]
        if max(self.cfg.bare_list_weight, self.cfg.plain_bare_list_weight) > 0:
            dense.insert(1, ("bare_rank", "turn", "recall_dense_day_table_bare"))
        found = domain.CandidatePool()
        sparse: list[tuple[str, str, Any]] = []  # the BM25 lists, sent before the embedding
        with contextlib.ExitStack() as stack:
            other = stack.enter_context(side()) if side is not None else None
            with _pipeline(conn):
                # sent first: the server ranks them while the query is embedded (on threads
                # that never spin: [embedding] local_query_spin)
                speakers = (conn.execute(query("known_speakers"), {
                    "names": list(speaker_names), "user_id": uid}) if speaker_names else None)
                if search_terms:
                    for kind, name in (("turn", "recall_bm25_day_table"),
                                       ("memory", "recall_bm25_memories"),
                                       ("block", "recall_bm25_blocks")):
                        sparse.append(("sparse_rank", kind, _list(conn, name, bm25)))
                    if window is not None:
                        sparse.append(("window_sparse_rank", "turn", _list(
                            conn, "recall_bm25_day_table", {**bm25, **window})))
                _flush_request(conn)  # their rows come back as soon as they are ranked
                known = {} if embedded is None else embedded
                qvec_raw = known.get(text)
                if qvec_raw is None:
                    qvec_raw = self.embedder.embed_query(text)
                qvec = vector_text(qvec_raw)
                jvec_raw = qvec_raw if judge == text else known.get(judge)
                if jvec_raw is None:
                    jvec_raw = self.embedder.embed_query(judge)
                jvec = qvec if judge == text else vector_text(jvec_raw)
                if embedded is not None:  # the caller's: what was embedded, by its text
                    embedded[text], embedded[judge] = qvec_raw, jvec_raw
                goal = None if goal_vector is None else vector_text(goal_vector)
                params = {"query": qvec, "k": pool, "user_id": uid, "judge": jvec, "goal": goal}
                # the side's list first: its HNSW scan, the longest, starts at once
                side_pipe = stack.enter_context(contextlib.ExitStack())
                if other is not None:
                    _hnsw_settings(other, ef_search)
                    side_pipe.enter_context(_pipeline(other))
                    side_lists.append(("dense_rank", "memory", _list(other, SIDE_LIST, params)))
                for rank_field, kind, name in dense:
                    if other is None or name != SIDE_LIST:
                        lists.append((rank_field, kind, _list(conn, name, params)))
                if window is not None:
                    lists.append(("window_dense_rank", "turn", _list(
                        conn, "recall_dense_day_table_window", {**params, **window})))
                # BM25's rows (ranked during the embedding, ahead of the dense lists in the
                # connection's stream: read without waiting for those); their similarities to
                # the judged question and to the goals are asked after the dense lists
                sparse_rows = [(f, kind, cur.fetchall()) for f, kind, cur in sparse]
                asked = self._ask_similarities(conn, jvec, goal, sparse_rows)
            # the caller's lists are in (one sync); the side's scan may still run. BM25's rows
            # go into the pool only now: on 2 cores, the client's work before the sync kept
            # the caller's backend off the CPU the side's scan left (its lists started 1.6
            # ms after they were sent, against 0.6 so)
            for rank_field, kind, rows in sparse_rows:
                self._add_rows(found, rank_field, kind, rows)
            people = (ctx.people if speakers is None
                      else frozenset(str(r[0]).lower() for r in speakers.fetchall()))
            for rank_field, kind, cur in lists:
                self._add_rows(found, rank_field, kind, cur.fetchall())
            for kind, rid, sim, goal_sim in asked.fetchall() if asked is not None else ():
                found.put(f"{kind}:{rid}", {"similarity": sim, "goal_similarity": goal_sim})
            for rank, (cid, content, sim) in enumerate(
                self.cortex.search([float(x) for x in qvec_raw], pool, query_text=text,
                                   user_id=uid), 1
            ):
                # a migrated block is also a hippocampus row: one candidate, the cortex's
                hippo = found.pop(f"block:{cid}") or {}
                found.add(f"cortex:{cid}", kind="cortex", content=content, created_at=None,
                          importance=hippo.get("importance", 0.5), similarity=sim,
                          cortex_rank=rank, dense_rank=hippo.get("dense_rank"),
                          sparse_rank=hippo.get("sparse_rank"), source_ids=())
            side_pipe.close()  # the side's list is in
            for rank_field, kind, cur in side_lists:
                self._add_rows(found, rank_field, kind, cur.fetchall())
        if self.cfg.link_seed_rank > 0:  # one hop along the conversation (issue 39 item 3)
            self._follow_links(conn, found, jvec, goal, uid)
        if ctx.mood is not None:  # the imprints, only when mood congruence asks for them
            self._fill_imprints(conn, found)
        if self.cfg.retired_claim_weight != 1.0:  # claim slots (claim_demotion); 1.0: off
            self._fill_claims(conn, found)
        if self.compute_coverage or self.cfg.fusion == "learned":  # coverage: a feature
            qterms = lexical.terms(judge)
            weights = self.term_weights(conn, qterms)
            return found.build(
                coverage=lambda content: lexical.coverage(qterms, content, weights)), people
        return found.build(), people

    @staticmethod
    def _add_rows(found: domain.CandidatePool, rank_field: str, kind: str,
                  rows: list[Any]) -> None:
        """One list's rows into the pool, ranked in their order; turns and memories come
        with their judged and goal similarities, a dense block list with its distance. An
        item another list holds already gets only what can differ between two lists' rows
        of the same table: the rank, and the similarities (NULL in a BM25 list's row)."""
        for rank, r in enumerate(rows, 1):
            rid = str(r[0])
            if kind == "turn":
                key, fields = "day_table:" + rid, {"similarity": r[9], "goal_similarity": r[10]}
            elif kind == "memory":
                key, fields = "memory:" + rid, {"similarity": r[11], "goal_similarity": r[12]}
            else:
                key, fields = "block:" + rid, {
                    "similarity": 1 - r[5] if rank_field == "dense_rank" else None}
            fields[rank_field] = rank
            if kind == "turn" and rank_field in _TURN_SCORES and r[7] is not None:
                score, is_distance = _TURN_SCORES[rank_field]  # the list's own score
                fields[score] = 1 - float(r[7]) if is_distance else float(r[7])
            if key not in found:  # the first sighting: the item itself
                if kind == "turn":
                    fields.update(_turn_item(r))
                elif kind == "memory":
                    fields.update(kind="memory", content=r[2], created_at=r[3],
                                  importance=r[4], status=r[6],
                                  source_ids=(str(r[5]),) if r[5] else (),
                                  external_ids=(r[8],) if r[8] else (), speaker=r[9],
                                  role=r[10])
                else:
                    fields.update(kind="block", content=prose_text(r[2])[:4000],
                                  created_at=r[3],
                                  importance=min(1.0, max(0.0, r[4] or 0.0)),
                                  source_ids=tuple(r[6] or ()),
                                  external_ids=tuple(r[7] or ()))
            found.put(key, fields)

    def _follow_links(self, conn: psycopg.Connection[Any], found: domain.CandidatePool,
                      judge: str, goal: str | None, uid: str | None) -> None:
        """The turns right before and after each turn ranked [recall] link_seed_rank or
        better in one of the question's lists join the pool (one round trip,
        recall_neighbours), each with the best rank of a seed it neighbours (`link_rank`) and
        whether it follows that seed (`link_next`): the answer to a question often sits in
        the next turn, in words the question does not use. The learned fusion weighs them
        (fusion.GROUPS "links"); the weighted RRF has no list for them."""
        seeds = found.turn_seeds(self.cfg.link_seed_rank)
        if not seeds:
            return
        rows = conn.execute(query("recall_neighbours"), {
            "ids": [rid for rid, _ in seeds], "judge": judge, "goal": goal,
            "user_id": uid}).fetchall()
        for r in rows:
            rid = str(r[0])
            key = "day_table:" + rid
            fields: dict[str, Any] = {"link_rank": seeds[int(r[7]) - 1][1],
                                      "similarity": r[9], "goal_similarity": r[10]}
            if r[11]:
                fields["link_next"] = True
            if key not in found:
                fields.update(_turn_item(r))
            found.put(key, fields)

    @staticmethod
    def _ask_similarities(
        conn: psycopg.Connection[Any], judge: str, goal: str | None,
        sparse_rows: list[tuple[str, str, list[Any]]],
    ) -> Any:
        """Send (in the caller's pipeline) the cosine of every turn and memory the BM25 lists
        found to the judged question, and to the active goals (Layer 1: the goal boost; NULL
        without goals): a cursor of (pool kind, id, similarity, goal similarity), or None
        when they found none."""
        ids: dict[str, dict[str, None]] = {"turn": {}, "memory": {}}
        for _, kind, rows in sparse_rows:
            if kind in ids:
                ids[kind].update(dict.fromkeys(str(r[0]) for r in rows))
        if not ids["turn"] and not ids["memory"]:
            return None
        return _list(conn, "similarity_by_ids", {
            "judge": judge, "goal": goal, "turn_ids": list(ids["turn"]),
            "memory_ids": list(ids["memory"])})

    @staticmethod
    def _fill_imprints(conn: psycopg.Connection[Any], found: domain.CandidatePool) -> None:
        """The emotional imprint of every memory candidate that has one (seed 000 §3.4)."""
        ids = found.ids("memory")
        if not ids:
            return
        for rid, imprint in conn.execute(query("emotion_memory_imprints"), {"ids": ids}):
            state = EmotionState.from_mapping(imprint)
            if state is not None:
                found.set(f"memory:{rid}", emotion=state)

    @staticmethod
    def _fill_claims(conn: psycopg.Connection[Any], found: domain.CandidatePool) -> None:
        """The claim state of every memory candidate that claims a slot, and of every turn
        a claiming memory was made from (issue 39 item 5, agent/services/memory/claims.py)."""
        for key, state in claims.states(conn, found.ids("memory"),
                                        found.ids("day_table")).items():
            found.set(key, claim=state)

    def term_weights(self, conn: psycopg.Connection[Any], qterms: list[str]) -> dict[str, float]:
        """IDF of each query term over day_table's lexicon."""
        if not qterms:
            return {}
        rows = conn.execute(query("term_doc_freq"), {"terms": qterms}).fetchall()
        return {t: lexical.idf(int(df), max(1, int(n or 0))) for t, df, n in rows}

    def recall(
        self,
        conn: psycopg.Connection[Any],
        text: str,
        *,
        verdict_text: str | None = None,
        goal_vector: Sequence[float] | None = None,
        k: int | None = None,
        verify: bool = False,
        recent_ids: set[str] | None = None,
        session_id: Any = None,
        entry_id: Any = None,
        budget_tokens: int | None = None,
        now: datetime | None = None,
        log: bool = True,
        reconsolidate: bool = True,
        user_id: Any = None,
        mood: MoodCue | None = None,
    ) -> RecallOutcome:
        """Recall for `text`. Scoped to one user: `user_id`, or else the user of
        `session_id`; with neither (operator tools), everyone's memories. `mood`: the
        current emotional state, for mood congruence (None: recall ignores emotion)."""
        started = time.perf_counter()
        k = k or int(self.cfg.top_k)
        # recall reads at most [recall] max_message_chars of what it is given (issue 38:
        # its steps stay bounded for a 1 MB message; day_table keeps the whole message)
        text, verdict_text = bounded(text, self.cfg), (
            None if verdict_text is None else bounded(verdict_text, self.cfg))
        with self._reading(conn) as read:  # a replica's connection, or `conn`
            use_side = read is conn  # the side list reads the primary: not beside a replica
            if user_id is None and session_id is not None:
                row = read.execute(query("recall_session_user"),
                                   (session_id,)).fetchone()
                user_id = row[0] if row else None
            now = now or datetime.now(UTC)
            ctx, names = self.query_context(verdict_text or text, now)
            if mood is not None:
                ctx = replace(ctx, mood=mood)
            budget = budget_tokens if budget_tokens is not None else self.cfg.token_budget
            decision, nodes = self.broad_nodes(verdict_text or text, ctx, now, user_id,
                                               recent_ids or set(), budget)
            budget -= sum(self.count_tokens(n.content) for n in nodes)
            embedded: dict[str, Any] = {}
            cands, people = self.candidates(read, text, k, verdict_text, goal_vector, user_id,
                                            ctx, speaker_names=names, embedded=embedded,
                                            use_side=use_side)
            ctx = replace(ctx, people=people)
            rerank_scores = self._rerank(text, cands)
            result = domain.recall_pipeline(
                cands,
                now=now,
                context=ctx,
                cfg=self.cfg,
                k=k,
                rerank_scores=rerank_scores,
                verify=verify,
                recent_ids=recent_ids or set(),
                budget_tokens=budget,
                count_tokens=self.count_tokens,
                fusion=self.fusion(),
            )
            if (result.verdict != "strong_match" and self.cfg.fallback_query_variants > 0
                    and (self.rewriter is not None or self.cfg.heuristic_fallback)):
                result = self._fallback(read, cands, result, text, verdict_text, goal_vector,
                                        user_id, ctx, now, k, verify, recent_ids, budget,
                                        embedded, use_side=use_side)
            if self.cfg.adjacent_turns != "off" and result.items:
                self._attach_adjacent(read, result, user_id, budget, recent_ids or set())
        if decision.fired:  # the nodes first: the prompt shows the overview before turns
            result.items = nodes + result.items
            result.tokens += sum(self.count_tokens(n.content) for n in nodes)
            result.verdict = domain.query_verdict(result.items)
            result.broad = {**decision.as_dict(), "nodes": len(nodes)}
            logger.info("broad question (%s, cue %r): %d RAPTOR node(s)", broad.DETECTOR,
                        decision.cue, len(nodes))
        cortex_ids = [i.id.split(":", 1)[1] for i in result.items if i.kind == "cortex"]
        events = (self.cortex.reconsolidate(conn, cortex_ids, session_id)
                  if cortex_ids and reconsolidate else [])
        latency = (time.perf_counter() - started) * 1000
        log_id = self._log(conn, text, result, latency, session_id, entry_id) if log else None
        return RecallOutcome(result=result, query_text=text, latency_ms=latency, log_id=log_id,
                             cortex_events=events, vectors=embedded)

    def _attach_adjacent(self, conn: psycopg.Connection[Any], result: domain.RecallResult,
                         user_id: Any, budget: int, recent_ids: set[str]) -> None:
        """Each recalled turn (or memory whose turn is still in day_table) gets the turns
        said right before and after it in its session ([recall] adjacent_turns: "next", the
        one after only), within what `budget` leaves after the items; one round trip
        (recall_adjacent). The answer to a question is often the next turn, in words the
        question does not use; a short answer needs the question it answers."""
        seeds = [(n, item.source_ids[0]) for n, item in enumerate(result.items)
                 if item.kind in ("day_table", "memory") and item.source_ids]
        if not seeds:
            return
        rows = conn.execute(query("recall_adjacent"), {
            "ids": [rid for _, rid in seeds], "before": self.cfg.adjacent_turns == "both",
            "user_id": None if user_id is None else str(user_id)}).fetchall()
        found: dict[int, list[domain.AdjacentTurn]] = {}
        for place, eid, role, content, created, ext, tokens, speaker, after in rows:
            found.setdefault(seeds[int(place) - 1][0], []).append(domain.AdjacentTurn(
                id=f"day_table:{eid}", content=content, created_at=created,
                speaker=speaker_label(speaker, role) if role else speaker, role=role,
                external_id=ext, after=bool(after),
                tokens=int(tokens) if tokens is not None else self.count_tokens(content)))
        result.items, used = domain.attach_adjacent(
            result.items, found, max(0, budget - result.tokens), skip=recent_ids)
        result.tokens += used

    def own_words(self, conn: psycopg.Connection[Any], vector: Sequence[float],
                  user_id: Any, k: int) -> list[domain.RecallItem]:
        """The grounded reply's own pool (issue 40): `user_id`'s own turns, and memories of
        their own turns, nearest the question's vector `vector` (the message alone, not
        the compound query); `k` of each. Recall's items are ranked for the prompt: in a
        session of several questions the compound query carries the earlier ones, and the
        assistant's long replies crowd the user's short statements out of the top k, so
        the statement that answers the question is often not among them. Every item is
        `no_match` (the grounded heuristic judges each sentence itself); none without a
        user (an operator's turn has no "own words" to say back)."""
        if user_id is None or k <= 0:
            return []
        with self._reading(conn) as read:
            _hnsw_settings(read, self.ef_search(conn))
            rows = read.execute(query("recall_own_words"), {
                "query": vector_text(vector), "user_id": str(user_id), "k": k}).fetchall()
        rows.sort(key=lambda r: -r[6])  # nearest first (the iterative scan's relaxed order)
        return [domain.RecallItem(
            id=f"{kind}:{rid}", kind=kind, content=content, score=0.0, verdict="no_match",
            similarity=float(sim), coverage=None, match=None, created_at=created,
            source_ids=(rid,) if kind == "day_table" else (),
            external_ids=(ext,) if ext else (), components={}, speaker=speaker, role="user")
            for kind, rid, content, created, speaker, ext, sim in rows]

    @contextlib.contextmanager
    def _reading(self, conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
        """The connection recall's read-only queries run on: the reader's (a replica), or
        `conn` when there is none, when `conn` holds a transaction (its own writes are not
        on the replica) or when the reader cannot lend one (said once a minute)."""
        if (self.reader is None
                or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE):
            yield conn
            return
        with contextlib.ExitStack() as stack:
            try:
                read = stack.enter_context(self.reader())
            except psycopg.OperationalError as exc:  # psycopg_pool's PoolTimeout too
                if time.monotonic() - self._reader_warned > 60:
                    self._reader_warned = time.monotonic()
                    logger.warning("recall: the read replica ([database] recall_url) is "
                                   "unreachable (%s); recall reads the primary meanwhile",
                                   " ".join(str(exc).split())[:200])
                read = conn
            yield read

    def _fallback(
        self, conn: psycopg.Connection[Any], cands: list[domain.Candidate],
        first: domain.RecallResult, text: str, verdict_text: str | None,
        goal_vector: Sequence[float] | None, user_id: Any, ctx: domain.QueryContext,
        now: datetime, k: int, verify: bool, recent_ids: set[str] | None,
        budget_tokens: int | None, embedded: dict[str, Any] | None = None,
        use_side: bool = True,
    ) -> domain.RecallResult:
        """Weak-match fallback (seed 003 §17e #7): the question rewritten (by the LLM of
        role `rewrite`, else the named heuristic: clauses and keywords), each rewrite's
        ranking fused with the first pass as one more list. `embedded`: the first pass's
        query vectors, by text (the judged question is not embedded again)."""
        judge = verdict_text or text
        variants, how = self.rewrites(judge)
        if not variants:
            return first
        merged = {c.id: c for c in cands}
        for variant in variants:
            extra, _ = self.candidates(conn, variant, k, judge, goal_vector, user_id, ctx,
                                       embedded=embedded, use_side=use_side)
            ranked = domain.recall_pipeline(extra, now=now, cfg=self.cfg, k=len(extra),
                                            context=ctx, budget_tokens=10**9,
                                            fusion=self.fusion())
            by_id = {c.id: c for c in extra}
            for rank, item in enumerate(ranked.items, 1):
                if item.id in merged:
                    merged[item.id] = merged[item.id].merge(fallback_rank=rank)
                else:
                    merged[item.id] = replace(
                        by_id[item.id], dense_rank=None, sparse_rank=None, cortex_rank=None,
                        window_dense_rank=None, window_sparse_rank=None, fallback_rank=rank)
        pool = list(merged.values())
        result = domain.recall_pipeline(
            pool, now=now, cfg=self.cfg, k=k, rerank_scores=self._rerank(text, pool),
            verify=verify, recent_ids=recent_ids or set(),
            budget_tokens=budget_tokens if budget_tokens is not None else self.cfg.token_budget,
            count_tokens=self.count_tokens, context=ctx, fusion=self.fusion())
        result.rewrites, result.rewritten_by = variants, how
        return result

    def broad_nodes(
        self, question: str, ctx: domain.QueryContext, now: datetime, user_id: Any,
        recent_ids: set[str], budget: int,
    ) -> tuple[broad.BroadQuestion, list[domain.RecallItem]]:
        """The broad-question heuristic's decision on `question` and, when it fires, the
        RAPTOR nodes that answer it as recall items (kind "cluster"), within
        broad_budget_share of `budget`. Reads the cortex only when it fires."""
        cfg = self.broad_cfg
        if cfg is None or not cfg.broad_questions:
            return broad.NOT_BROAD, []
        decision = broad.classify(question, ctx.window)
        if not decision.fired:
            return decision, []
        # its topic words: without the time phrase
        decision = broad.classify(question, ctx.window, timeref.resolve(question, now).text)
        tree, blocks = self.cortex.cluster_tree()
        if not tree:
            return decision, []
        # the topic words alone: "garden" finds the garden's node better than the whole
        # "summarise our conversations about the garden" (a spot check with MiniLM)
        qvec = ([float(x) for x in self.embedder.embed_query(" ".join(decision.topic))]
                if decision.topic else None)
        chosen = broad.choose_nodes(
            tree, blocks, decision, window=ctx.window, query_vector=qvec,
            user_id=None if user_id is None else str(user_id), cfg=cfg,
            skip=frozenset(i.split(":", 1)[1] for i in recent_ids if i.startswith("cluster:")))
        window = None if ctx.window is None else ctx.window.as_dict()
        items: list[domain.RecallItem] = []
        left = int(cfg.broad_budget_share * budget)
        for c in chosen:
            content = broad.node_text(c)
            tokens = self.count_tokens(content)
            if tokens > left:
                continue
            left -= tokens
            match = c.similarity
            verdict = domain.verdict_for(match, self.cfg)
            share = c.in_window / len(c.leaves)
            items.append(domain.RecallItem(
                id=f"cluster:{c.node.cluster_id}", kind="cluster", content=content,
                score=match if match is not None else share,
                # chosen by the rule (in the window, or near the topic): at least weak
                verdict="weak_match" if verdict == "no_match" else verdict,
                similarity=c.similarity, coverage=None, match=match,
                created_at=c.leaves[-1].end or c.leaves[-1].start,
                source_ids=tuple(dict.fromkeys(e for b in c.sources for e in b.entry_ids)),
                external_ids=(), components={"broad": 1.0, "in_window_share": share},
                cluster={"level": c.node.level, "leaf_count": len(c.leaves), "window": window,
                         "detector": broad.DETECTOR,
                         "blocks": broad.node_sources(c, ctx.window)}))
        return decision, items

    def rewrites(self, question: str) -> tuple[list[str], str | None]:
        """Up to fallback_query_variants rewrites of `question` and who wrote them. A
        failed LLM call is logged and falls back to the heuristic (when enabled), so a
        provider outage costs the fallback, never the recall."""
        n = int(self.cfg.fallback_query_variants)
        if self.rewriter is not None:
            try:
                out = self.rewriter.chat(domain.rewrite_messages(question, n), temperature=0.0,
                                         max_tokens=40 * n)
            except ProviderError as exc:
                logger.warning("query rewrite failed (%s); %s", exc,
                               "heuristic rewrites instead" if self.cfg.heuristic_fallback
                               else "first pass only")
            else:
                variants = domain.parse_rewrites(out.text, question, n)
                if variants:
                    return variants, f"llm:{out.provider}/{out.model}"
        if not self.cfg.heuristic_fallback:
            return [], None
        words = [w for w in lexical.WORD.findall(question)
                 if w.lower() not in lexical.STOPWORDS]
        return domain.heuristic_variants(question, words, n), "heuristic"

    def _rerank(self, text: str, cands: list[domain.Candidate]) -> dict[str, float] | None:
        if self.reranker is None or not getattr(self.reranker, "enabled", False) or not cands:
            return None
        ranked = self.reranker.rerank(text, [c.content for c in cands])
        return {cands[r.index].id: float(r.score) for r in ranked}

    def _log(
        self, conn: psycopg.Connection[Any], text: str, result: domain.RecallResult,
        latency: float, session_id: Any, entry_id: Any,
    ) -> int | None:
        items = [
            {"id": i.id, "kind": i.kind, "score": round(i.score, 5), "verdict": i.verdict,
             "similarity": None if i.similarity is None else round(i.similarity, 5),
             "match": None if i.match is None else round(i.match, 5),
             **({"level": i.cluster["level"], "via": i.cluster["detector"]}
                if i.cluster is not None else {})}
            for i in result.items
        ]
        row = conn.execute(
            query("recall_log_insert"),
            (session_id, entry_id, text, result.verdict, json.dumps(items), latency),
        ).fetchone()
        return None if row is None else int(row[0])


# the directory holding the agent package (the repository, or site-packages): a relative
# [recall] fusion_model is read from it
ROOT = Path(__file__).resolve().parents[3]


@functools.cache
def _turn_item(r: Any) -> dict[str, Any]:
    """A turn's own fields from a row of a turn list (recall.sql's day_table lists and
    recall_neighbours share columns 0-6 and 8): what its first sighting puts in the pool."""
    rid = str(r[0])
    return {"kind": "day_table", "content": r[3], "created_at": r[4], "importance": 0.5,
            "source_ids": (rid,), "external_ids": (r[5],) if r[5] else (),
            "token_count": r[6], "role": r[2], "speaker": r[8],
            "session_id": None if r[1] is None else str(r[1])}


def load_fusion(path: str) -> FusionModel:
    """The learned fusion's model from its JSON file ([recall] fusion_model; a relative path
    is read from ROOT). A missing or malformed file is a ConfigError that
    names it."""
    file = Path(path) if Path(path).is_absolute() else ROOT / path
    try:
        return FusionModel.from_dict(json.loads(file.read_text()))
    except (OSError, ValueError) as exc:  # FusionModelError, JSON errors: ValueErrors
        what = "malformed" if isinstance(exc, ValueError) else "unreadable"
        raise ConfigError(f"recall.fusion_model {file}: {what} ({exc}); set [recall] "
                          "fusion = \"rrf\" to recall without it") from exc


def bounded(text: str, cfg: domain.RecallConfig) -> str:
    """The part of a message recall reads: its first [recall] max_message_chars characters
    (whole words: a cut word would be searched as a word of its own)."""
    cap = int(cfg.max_message_chars)
    if len(text) <= cap:
        return text
    cut = text[:cap]
    space = cut.rfind(" ", cap // 2)
    return cut[:space] if space > 0 else cut


def warm(conn: psycopg.Connection[Any], cfg: domain.RecallConfig,
         searches: int | None = None) -> int:
    """Read memories' HNSW graph into shared_buffers: `searches` ([recall] warm_queries)
    searches from stored vectors at recall's ef_search for memories' size, in one
    statement. After a restart recall reads each index page from the OS (or the disk) the
    first time it needs it: at 1M memories the first 200 recalls after a restart ran a p95
    of 91.6 ms without it (740 where the OS page cache had lost the database's files too),
    37.7 after 200 searches (5.4 s), against 34.4-40.6 once warm (bench.warm,
    bench/results/warm-1m-2026-11-27.md). The loop worker
    runs it in the background when it starts (LoopWorker.run). Returns the searches run (0:
    none asked, or no memories)."""
    n = int(cfg.warm_queries if searches is None else searches)
    row = conn.execute(query("recall_memories_estimate")).fetchone()
    size = int(row[0]) if row else 0
    if n <= 0 or size <= 0:  # before the first ANALYZE the size reads 0: nothing to warm
        return 0
    # SYSTEM sampling keeps whole pages: pages holding about 4 rows per search
    percent = min(100.0, 400.0 * n / size)
    with conn.transaction():
        conn.execute(query("recall_warm_settings"), {"ef_search": cfg.ef_search_for(size)})
        done = conn.execute(query("recall_warm"), {"n": n, "percent": percent}).fetchone()
    return int(done[0]) if done else 0


# providers whose rewrites the fallback asks for; the bundled 135M model (`local`) and the
# extractive `heuristic` profile cannot rewrite a question usefully, so with them the
# fallback uses the named heuristic rewrites (or none)
REWRITE_PROVIDERS = ("openai", "gemini")


_RELAXED: weakref.WeakKeyDictionary[psycopg.Connection[Any], int] = weakref.WeakKeyDictionary()


def _pipeline(conn: psycopg.Connection[Any]) -> Any:
    """psycopg's pipeline mode (several queries, one round trip) where libpq offers it;
    elsewhere the same queries one after the other."""
    if psycopg.Pipeline.is_supported():
        return conn.pipeline()
    return contextlib.nullcontext()


def _list(conn: psycopg.Connection[Any], name: str, params: dict[str, Any]) -> Any:
    """Send one of recall's list queries (or its similarity ask): a cursor whose uuid
    columns read as text. The pool keys its items by an id's text; a UUID object, then its
    str(), cost ~1.2 us a row (two ids), against 0.08 read as text (~170 rows a recall).

    The memories' dense list (UNPREPARED) is never a prepared statement, so Postgres plans
    it for the asking user and k each time. psycopg prepares a statement run 5 times on a
    connection, and Postgres may then keep one generic plan, chosen on average estimates:
    for a user filter that plan can read the user's rows through the user index and sort
    them all, an exact search, where the user has most of the table. bench.loop's own
    index-recall query (a user filter, LIMIT 10) switched to it at 10k memories: 25.65 ms
    against 1.7 with HNSW. This list was planned anew each time already (Postgres found no
    generic plan as cheap), so not preparing it costs only its parse: +0.03 ms, paired A/B
    at 100k. The other lists keep their prepared statements (+0.4-0.6 ms a recall
    unprepared); they read the day's turns and the blocks, small tables."""
    cur = conn.cursor()
    cur.adapters.register_loader("uuid", TextLoader)
    return cur.execute(query(name), params, prepare=False if name in UNPREPARED else None)


def _flush_request(conn: psycopg.Connection[Any]) -> None:
    """In pipeline mode, ask the server to send the results of what was sent so far as soon
    as it has them (libpq's PQsendFlushRequest), not at the next sync: the BM25 lists'
    rows are then read after the embedding without waiting for the dense lists sent after
    them (the server reads a later flush request only once it has run those)."""
    if conn.pgconn.pipeline_status != psycopg.pq.PipelineStatus.OFF:
        conn.pgconn.send_flush_request()
        conn.pgconn.flush()


def _hnsw_settings(conn: psycopg.Connection[Any], ef_search: int) -> None:
    """pgvector >= 0.8: keep scanning the HNSW index until enough rows pass a filter
    (the user scope; an older pgvector filters what it finds), and search `ef_search`
    candidates (Recaller.ef_search: [recall] hnsw_ef_search by memories' size, chosen by
    bench.loop's index recall against exact search). Session settings: set once per
    autocommit connection (the workers') and value; inside a caller's transaction they are
    set each time, since a rollback would undo them."""
    if _RELAXED.get(conn) == ef_search:
        return
    try:
        with conn.transaction():  # a savepoint when the caller holds a transaction
            conn.execute(query("recall_hnsw_settings"), {"ef_search": ef_search})
    except psycopg.errors.Error as exc:
        logger.debug("hnsw settings unavailable: %s", exc)
        return
    if conn.autocommit:
        _RELAXED[conn] = ef_search


def candidate_list(conn: psycopg.Connection[Any], name: str, params: dict[str, Any]) -> Any:
    """One of recall's candidate lists (a query of PIPELINE_QUERIES) sent as the pipeline
    sends it (bench.suites.loop times each list this way)."""
    return _list(conn, name, params)


def forget_hnsw_settings(conn: psycopg.Connection[Any]) -> None:
    """Forget the hnsw settings recall made on `conn`, so that its next recall sets them
    again (after a caller changed hnsw.ef_search itself: bench.suites.loop)."""
    _RELAXED.pop(conn, None)
