"""The retrieval chain after the database: RRF, weighting, verdicts, dedup, budget."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from agent.config import load_settings
from agent.domain import lexical
from agent.domain.recall import (
    Candidate,
    CandidatePool,
    QueryContext,
    RecallConfig,
    heuristic_variants,
    parse_rewrites,
    preferred_order,
    recall_pipeline,
    recency,
    rewrite_messages,
    rrf,
    verdict_for,
)
from agent.domain.timeref import TimeWindow

CFG = RecallConfig.from_table(load_settings().recall)
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)


def cand(i: str, **kw: object) -> Candidate:
    base: dict[str, object] = {"kind": "memory", "content": f"item {i}", "created_at": NOW}
    base.update(kw)
    return Candidate(id=f"memory:{i}", **base)  # type: ignore[arg-type]


def test_config_comes_from_the_seed_table_and_the_calibration() -> None:
    assert CFG.rrf_k == 60 and CFG.token_budget == 2000  # seed 003 §17e, issue #4
    assert (CFG.weight_recency, CFG.weight_importance) == (0.3, 0.2)  # seed 003 §17e #4
    assert CFG.recency_half_life_days == 30 and CFG.bm25_k1 == 1.2 and CFG.bm25_b == 0.75
    # recency and importance only break near-ties
    assert 0 < CFG.tiebreak_weight < 0.5


def test_rrf_and_recency_formulas() -> None:
    assert rrf([1, None, 3], 60) == 1 / 61 + 1 / 63
    assert rrf([1, 2, None], 60, (1.0, 0.5, 1.0)) == 1 / 61 + 0.5 / 62
    with pytest.raises(ValueError, match="3 ranks, 2 weights"):
        rrf([1, 2, None], 60, (1.0, 0.5))
    assert recency(NOW - timedelta(days=7), NOW, 7) == 0.5
    assert recency(NOW - timedelta(days=14), NOW, 7) == 0.25


def test_items_found_by_both_retrievers_rank_first() -> None:
    both = cand("a", dense_rank=2, sparse_rank=2, similarity=0.7)
    dense_only = cand("b", dense_rank=1, similarity=0.7)
    out = recall_pipeline([dense_only, both], now=NOW, cfg=CFG, k=5)
    assert [i.id for i in out.items] == ["memory:a", "memory:b"]


def test_recency_and_importance_break_ties() -> None:
    old = cand("old", dense_rank=1, created_at=NOW - timedelta(days=60), similarity=0.7)
    new = cand("new", dense_rank=1, created_at=NOW, similarity=0.7)
    assert recall_pipeline([old, new], now=NOW, cfg=CFG, k=5).items[0].id == "memory:new"
    low = cand("low", dense_rank=1, importance=0.1)
    high = cand("high", dense_rank=1, importance=0.9)
    assert recall_pipeline([low, high], now=NOW, cfg=CFG, k=5).items[0].id == "memory:high"


def test_rerank_scores_reorder() -> None:
    a = cand("a", dense_rank=1)
    b = cand("b", dense_rank=2)
    out = recall_pipeline([a, b], now=NOW, cfg=CFG, k=5,
                          rerank_scores={"memory:a": 0.0, "memory:b": 1.0})
    assert out.reranked and out.items[0].id == "memory:b"


def test_verdict_thresholds_and_verification_mode() -> None:
    strong = CFG.strong_match_min_score
    weak = CFG.weak_match_min_score
    assert verdict_for(strong + 0.01, CFG) == "strong_match"
    assert verdict_for((strong + weak) / 2, CFG) == "weak_match"
    assert verdict_for(weak - 0.01, CFG) == "no_match"
    assert verdict_for(None, CFG) == "no_match"
    # verification needs the stricter threshold
    between = (strong + CFG.verification_min_score) / 2
    if CFG.verification_min_score > strong:
        assert verdict_for(between, CFG, verify=True) == "weak_match"
    assert verdict_for(CFG.verification_min_score + 0.01, CFG, verify=True) == "strong_match"


def test_query_verdict_is_the_best_item_verdict() -> None:
    hi = cand("hi", dense_rank=2, similarity=0.95, coverage=1.0)
    lo = cand("lo", dense_rank=1, similarity=0.05, coverage=0.0)
    out = recall_pipeline([hi, lo], now=NOW, cfg=CFG, k=5)
    assert out.verdict == "strong_match"
    assert {i.id: i.verdict for i in out.items}["memory:lo"] == "no_match"
    none = recall_pipeline([lo], now=NOW, cfg=CFG, k=5)
    assert none.verdict == "no_match"
    assert recall_pipeline([], now=NOW, cfg=CFG, k=5).verdict == "no_match"


def test_recently_injected_ids_are_dropped() -> None:
    out = recall_pipeline([cand("a", dense_rank=1), cand("b", dense_rank=2)], now=NOW, cfg=CFG,
                          k=5, recent_ids={"memory:a"})
    assert [i.id for i in out.items] == ["memory:b"] and out.dropped_recent == ["memory:a"]


def test_token_budget_is_respected() -> None:
    cands = [cand(str(n), dense_rank=n, token_count=300) for n in range(1, 20)]
    out = recall_pipeline(cands, now=NOW, cfg=CFG, k=20, budget_tokens=2000)
    assert out.tokens <= 2000 and len(out.items) == 6
    assert len(out.dropped_budget) == 13


def test_merge_keeps_the_best_of_each_retriever() -> None:
    a = cand("a", dense_rank=3, similarity=0.5, source_ids=("x",))
    merged = a.merge(sparse_rank=1, dense_rank=5, similarity=0.4, source_ids=("y",))
    assert merged.dense_rank == 3 and merged.sparse_rank == 1
    assert merged.similarity == 0.5 and merged.source_ids == ("x", "y")


def test_the_candidate_pool_merges_by_the_same_rules_and_freezes_once() -> None:
    sightings = [
        {"kind": "day_table", "content": "c", "dense_rank": 3, "similarity": 0.5,
         "source_ids": ("x",), "speaker": None},
        {"kind": "day_table", "content": "c", "sparse_rank": 1, "dense_rank": 5,
         "similarity": 0.4, "source_ids": ("y",), "speaker": "ana", "importance": 0.9},
        {"kind": "day_table", "content": "c", "window_dense_rank": 2, "importance": 0.1},
    ]
    pool = CandidatePool()
    expected = Candidate(id="day_table:1", **sightings[0])
    for fields in sightings:
        pool.add("day_table:1", **fields)
    for fields in sightings[1:]:
        expected = expected.merge(**fields)
    pool.add("memory:2", kind="memory", content="m")
    pool.set("memory:2", similarity=0.7)  # a judged similarity overwrites
    assert pool.ids("memory") == ["2"] and pool.pop("memory:9") is None
    built = pool.build()
    assert built[0] == expected
    assert (built[0].importance, built[0].speaker, built[0].dense_rank) == (0.9, "ana", 3)
    assert built[1] == Candidate(id="memory:2", kind="memory", content="m", similarity=0.7)


def test_the_pool_fills_what_a_first_sighting_lacked_and_keeps_defaults() -> None:
    """A BM25 row comes without similarities (None) and a block's importance may be
    missing: a later sighting fills them; a field no sighting gives keeps its default."""
    pool = CandidatePool()
    pool.put("day_table:1", {"kind": "day_table", "content": "c", "sparse_rank": 2,
                             "similarity": None, "goal_similarity": None, "importance": None})
    pool.put("day_table:1", {"dense_rank": 4, "similarity": 0.6, "goal_similarity": 0.1})
    pool.put("day_table:1", {"bare_rank": 1, "similarity": 0.5, "goal_similarity": None})
    (c,) = pool.build()
    assert (c.sparse_rank, c.dense_rank, c.bare_rank) == (2, 4, 1)
    assert (c.similarity, c.goal_similarity) == (0.6, 0.1)
    assert c.importance == 0.5 and c.source_ids == () and c.window_dense_rank is None


def test_lexical_coverage_weighs_rare_terms() -> None:
    q = lexical.terms("What's the name of my cat?")
    assert q == ["name", "cat"]
    weights = {"name": lexical.idf(500, 1000), "cat": lexical.idf(0, 1000)}
    assert weights["cat"] > weights["name"]
    dog = lexical.coverage(q, "My dog's name is Biscuit.", weights)
    cat = lexical.coverage(q, "My cat is named Tom.", weights)
    assert dog < 0.2 < 0.9 < cat  # the rare word decides
    assert lexical.terms("Where does she live?") == ["live"]
    assert lexical.coverage(["live"], "She lives in Lisbon", {}) == 1.0  # 4-char stems


def test_lexical_terms_include_cjk_bigrams() -> None:
    assert "喜欢" in lexical.terms("我喜欢猫")


def test_lexical_tokens_of_mixed_text_are_those_of_the_rule() -> None:
    """ASCII texts skip the CJK look-ups (a speed path): a text that mixes accented words,
    CJK runs and ASCII words still gets every term, each CJK run as bigrams only."""
    assert lexical.tokens("Café naïve 我喜欢猫 Lisbon lives") == [
        "café", "naïv", "lisb", "live", "我喜", "喜欢", "欢猫"]
    assert lexical.tokens("She lives in Lisbon, 2 cats") == ["live", "lisb", "2", "cat"]
    text = "Résumé 東京 trip"
    assert lexical.term_set(text) == frozenset(lexical.terms(text))


def test_pool_build_sets_each_candidates_coverage() -> None:
    pool = CandidatePool()
    pool.add("memory:a", kind="memory", content="My cat is named Tom.", dense_rank=1)
    pool.add("memory:b", kind="memory", content="My dog's name is Biscuit.", sparse_rank=1)
    q = lexical.terms("What's my cat called?")
    got = {c.id: c.coverage for c in pool.build(
        coverage=lambda content: lexical.coverage(q, content, {}))}
    assert got == {"memory:a": 0.5, "memory:b": 0.0}  # "cat" is there, "called" is not
    assert all(c.coverage is None for c in pool.build())


def test_relevance_is_the_share_of_the_best_fused_score() -> None:
    """Relevance = fused / best: a month-old best match still beats a fresh weak one, and
    the scale does not stretch noise between near-equal candidates (min-max did)."""
    best_old = cand("old", dense_rank=1, sparse_rank=1, created_at=NOW - timedelta(days=30))
    weak_new = cand("new", dense_rank=20, created_at=NOW)
    out = recall_pipeline([weak_new, best_old], now=NOW, cfg=CFG, k=5)
    assert [i.id for i in out.items] == ["memory:old", "memory:new"]
    rel = {i.id: i.components["relevance"] for i in out.items}
    assert rel["memory:old"] == 1.0
    dense, sparse = CFG.plain_dense_list_weight, CFG.sparse_list_weight  # no name, no period
    assert abs(rel["memory:new"] - (dense / 80) / ((dense + sparse) / 61)) < 1e-9


def test_a_list_weight_of_zero_removes_that_list() -> None:
    from dataclasses import replace

    dense_first = cand("d", dense_rank=1, sparse_rank=9)
    sparse_first = cand("s", dense_rank=9, sparse_rank=1)
    no_bm25 = replace(CFG, sparse_list_weight=0.0)
    out = recall_pipeline([sparse_first, dense_first], now=NOW, cfg=no_bm25, k=5)
    assert [i.id for i in out.items] == ["memory:d", "memory:s"]
    no_dense = replace(CFG, dense_list_weight=0.0, plain_dense_list_weight=0.0)
    out = recall_pipeline([dense_first, sparse_first], now=NOW, cfg=no_dense, k=5)
    assert [i.id for i in out.items] == ["memory:s", "memory:d"]


def test_a_plain_query_leans_on_the_bare_content_a_named_one_on_the_context() -> None:
    """"where do I work?" names nobody: the turn whose bare content matches wins; "where
    does Ana work?" names a speaker: the turn whose contextual entry matches wins."""
    bare = cand("bare", bare_rank=1, dense_rank=8)
    contextual = cand("ctx", bare_rank=8, dense_rank=1)
    assert CFG.plain_bare_list_weight > CFG.plain_dense_list_weight
    assert CFG.dense_list_weight > CFG.bare_list_weight
    plain = recall_pipeline([contextual, bare], now=NOW, cfg=CFG, k=5)
    assert [i.id for i in plain.items] == ["memory:bare", "memory:ctx"]
    named = recall_pipeline([bare, contextual], now=NOW, cfg=CFG, k=5,
                            context=QueryContext(people=frozenset({"ana"})))
    assert [i.id for i in named.items] == ["memory:ctx", "memory:bare"]
    dated = recall_pipeline([bare, contextual], now=NOW, cfg=CFG, k=5,
                            context=QueryContext(window=MAY))
    assert dated.items[0].id == "memory:ctx"


MAY = TimeWindow(datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC), "in May")


def test_a_turn_inside_the_asked_window_outranks_one_outside() -> None:
    march = cand("march", dense_rank=1, created_at=datetime(2026, 3, 10, tzinfo=UTC))
    may = cand("may", dense_rank=3, created_at=datetime(2026, 5, 10, tzinfo=UTC))
    plain = recall_pipeline([march, may], now=NOW, cfg=CFG, k=5)
    assert plain.items[0].id == "memory:march" and plain.window is None
    timed = recall_pipeline([march, may], now=NOW, cfg=CFG, k=5,
                            context=QueryContext(window=MAY))
    assert [i.id for i in timed.items] == ["memory:may", "memory:march"]
    assert timed.window == MAY and timed.items[0].components["time"] == 1.0


def test_words_said_by_the_named_person_outrank_the_other_speaker() -> None:
    ben = cand("ben", dense_rank=1, speaker="Ben", role="user", content="I love pottery")
    ana = cand("ana", dense_rank=2, speaker="Ana", role="user", content="Pottery is fun")
    out = recall_pipeline([ben, ana], now=NOW, cfg=CFG, k=5,
                          context=QueryContext(people=frozenset({"ana"})))
    assert [i.id for i in out.items] == ["memory:ana", "memory:ben"]
    assert out.items[0].speaker == "Ana"
    # naming the person can count too (person_mention_boost; 0 as chosen on seed 7)
    from dataclasses import replace

    about = cand("about", dense_rank=2, speaker="Ben", role="user", content="Ana made a vase")
    mention = replace(CFG, person_mention_boost=0.15)
    out = recall_pipeline([ben, about], now=NOW, cfg=mention, k=5,
                          context=QueryContext(people=frozenset({"ana"})))
    assert out.items[0].id == "memory:about"
    assert out.items[0].components["person"] == 0.5


def test_the_named_speakers_preference_never_hides_the_other_speakers_turn() -> None:
    """Issue 39 item 4: "What did Ana say about the lighthouse?" when Ben said it. Ben's
    turn ranks first on the words; a dozen of Ana's turns, each less relevant, used to pass
    it under the said-by boost and push it out of the top 10 (a filter). The preference
    may now push a turn down [recall] person_max_shift places at most."""
    ana = QueryContext(people=frozenset({"ana"}))
    bens = cand("ben", dense_rank=1, speaker="Ben", role="user",
                content="The lighthouse tour was closed on Sunday")
    anas = [cand(f"ana{n}", dense_rank=n, speaker="Ana", role="user",
                 content=f"Sunday walk number {n} by the sea") for n in range(2, 14)]
    out = recall_pipeline([bens, *anas], now=NOW, cfg=CFG, k=10, context=ana)
    ids = [i.id for i in out.items]
    assert 0 <= CFG.person_max_shift < 9
    assert ids.index("memory:ben") <= CFG.person_max_shift  # rank 1 without the preference
    # Ana's words are still preferred: the first place is hers, in her own order
    assert ids[0] == "memory:ana2"
    assert [i for i in ids if i != "memory:ben"] == [f"memory:ana{n}" for n in range(2, 11)]
    # without a limit (the rule before issue 39) Ben's turn is out of the top 10
    unbounded = recall_pipeline([bens, *anas], now=NOW, cfg=replace(CFG, person_max_shift=-1),
                                k=10, context=ana)
    assert "memory:ben" not in [i.id for i in unbounded.items]


def test_preferred_order_moves_no_item_further_down_than_the_shift() -> None:
    plain = list(range(8))
    preferred = [5, 6, 7, 0, 1, 2, 3, 4]  # the preference lifts the last three
    assert preferred_order(preferred, plain, -1) == preferred
    assert preferred_order(preferred, plain, 0) == plain
    for shift in range(1, 9):
        got = preferred_order(preferred, plain, shift)
        assert sorted(got) == plain  # nothing lost, nothing twice
        assert all(got.index(i) <= i + shift for i in plain)
    assert preferred_order(preferred, plain, 1) == [5, 0, 1, 2, 3, 4, 6, 7]
    assert preferred_order(preferred, plain, 2) == [5, 6, 0, 1, 2, 3, 4, 7]
    assert preferred_order(preferred, plain, 8) == preferred


def test_the_users_own_words_outrank_the_assistants_invention() -> None:
    """`/recall where do I work?`: the assistant's invented "I'm Dana, a marine biologist"
    ranked first by similarity must not beat the user's own statement."""
    invented = cand("a", dense_rank=1, role="assistant", content="I'm Dana, a marine biologist")
    said = cand("u", dense_rank=2, role="user", content="I work as a marine biologist")
    out = recall_pipeline([invented, said], now=NOW, cfg=CFG, k=5)
    assert [i.id for i in out.items] == ["memory:u", "memory:a"]
    assert {i.id: i.speaker for i in out.items} == {"memory:u": "the user",
                                                    "memory:a": "the assistant"}


def test_asking_for_the_current_state_lets_the_newer_statement_win() -> None:
    stale = cand("stale", dense_rank=1, sparse_rank=1, created_at=NOW - timedelta(days=90))
    new = cand("new", dense_rank=5, sparse_rank=8, created_at=NOW - timedelta(days=5))
    plain = recall_pipeline([stale, new], now=NOW, cfg=CFG, k=5)
    assert plain.items[0].id == "memory:stale"
    current = recall_pipeline([stale, new], now=NOW, cfg=CFG, k=5,
                              context=QueryContext(asks_current=True))
    assert current.items[0].id == "memory:new"
    assert current.items[0].components["newness"] == 1.0


def test_llm_rewrites_are_parsed_one_per_line() -> None:
    text = ("Here are the queries:\n1. Ana's new job offer\n2) the job interview in May\n"
            "- \"Did Ana accept the offer?\"\n* What did Ana decide about the move?\n\n"
            "Ana's new job offer\n" + "x" * 400)
    got = parse_rewrites(text, "What did Ana decide about the move?", 3)
    # the preamble (ends with a colon), the question itself, repeats and a runaway line go
    assert got == ["Ana's new job offer", "the job interview in May", "Did Ana accept the offer?"]
    assert parse_rewrites(text, "q", 1) == ["Ana's new job offer"]
    assert parse_rewrites("", "q", 3) == []
    messages = rewrite_messages("  What did Ana decide?  ", 3)
    assert messages[0]["role"] == "system" and messages[-1]["content"].endswith(
        "At most 3 queries for: What did Ana decide?")


def test_heuristic_rewrites_split_clauses_then_keep_keywords() -> None:
    got = heuristic_variants("Where did Ana travel and what did she eat there?",
                             ["Ana", "travel", "eat"], 3)
    assert got == ["Where did Ana travel", "what did she eat there", "Ana travel eat"]
    assert heuristic_variants("Ana?", ["Ana"], 3) == ["Ana"]
    assert heuristic_variants("Where did Ana travel and what did she eat?", ["x"], 0) == []


def test_a_reply_without_words_of_its_own_gets_no_said_by_boost() -> None:
    """"lol" from Ana, found through the turn it quotes (Ben's), is not Ana's statement:
    Ben's turn with the words stays above it; Ana's own statement is still boosted."""
    ana = QueryContext(people=frozenset({"ana"}))
    lol = cand("lol", dense_rank=2, speaker="Ana", role="user", content="lol")
    bens = cand("ben", dense_rank=1, speaker="Ben", role="user",
                content="My colleague speaks five languages")
    out = recall_pipeline([lol, bens], now=NOW, cfg=CFG, k=5, context=ana)
    assert [i.id for i in out.items] == ["memory:ben", "memory:lol"]
    assert out.items[1].components["person"] == 0.0
    own = cand("own", dense_rank=2, speaker="Ana", role="user",
               content="I am learning Portuguese")
    out = recall_pipeline([own, bens], now=NOW, cfg=CFG, k=5, context=ana)
    assert [i.id for i in out.items] == ["memory:own", "memory:ben"]


def test_a_turn_two_lists_return_is_one_candidate_with_both_ranks() -> None:
    """Recall's rows into the pool: the BM25 row (no similarities: NULL) first, then the
    dense list's row of the same turn, whose similarities fill the candidate's."""
    from agent.services.memory.recall import Recaller

    when = datetime(2026, 5, 1, tzinfo=UTC)
    bm25 = [("t2", "s", "user", "the kiln", when, "x-2", 3, 7.5, "ana", None, None),
            ("t1", "s", "user", "a bowl", when, None, 2, 3.1, None, None, None)]
    dense = [("t1", "s", "user", "a bowl", when, None, 2, 0.2, None, 0.8, 0.3)]
    pool = CandidatePool()
    Recaller._add_rows(pool, "sparse_rank", "turn", bm25)
    Recaller._add_rows(pool, "dense_rank", "turn", dense)
    by_id = {c.id: c for c in pool.build()}
    assert set(by_id) == {"day_table:t1", "day_table:t2"}
    t1, t2 = by_id["day_table:t1"], by_id["day_table:t2"]
    assert (t1.sparse_rank, t1.dense_rank, t1.similarity, t1.goal_similarity) == (2, 1, 0.8, 0.3)
    assert (t1.content, t1.token_count, t1.source_ids, t1.external_ids) == (
        "a bowl", 2, ("t1",), ())
    assert (t2.sparse_rank, t2.dense_rank, t2.similarity) == (1, None, None)
    assert (t2.speaker, t2.external_ids, t2.importance) == ("ana", ("x-2",), 0.5)
