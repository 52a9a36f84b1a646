"""The learned fusion (issue 39 item 2): feature vectors, the model file, and the pipeline
ranking by the model when [recall] fusion = "learned"."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent.config import load_settings
from agent.domain import fusion
from agent.domain.fusion import FEATURES, FusionModel, FusionModelError
from agent.domain.recall import (
    Candidate,
    QueryContext,
    RecallConfig,
    fused_scores,
    pool_features,
    recall_pipeline,
)
from agent.domain.timeref import TimeWindow
from agent.errors import ConfigError

CFG = RecallConfig.from_table(load_settings().recall)
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
T0 = NOW - timedelta(days=10)


def turn(i: str, content: str = "we talked about the weather", **kw: object) -> Candidate:
    base: dict[str, object] = {"kind": "day_table", "content": content, "created_at": T0,
                               "source_ids": (f"t{i}",), "external_ids": (f"x{i}",),
                               "session_id": "s1", "speaker": "Ana", "role": "user"}
    base.update(kw)
    return Candidate(id=f"day_table:t{i}", **base)  # type: ignore[arg-type]


def vec(features: list[float]) -> dict[str, float]:
    assert len(features) == len(FEATURES)
    return dict(zip(FEATURES, features, strict=True))


def features(cands: list[Candidate], ctx: QueryContext | None = None) -> list[dict[str, float]]:
    ctx = ctx or QueryContext()
    fused, newness = fused_scores(cands, CFG, ctx)
    return [vec(x) for x in pool_features(cands, fused, newness, now=NOW, cfg=CFG, ctx=ctx)]


def test_every_feature_has_one_group_and_one_place() -> None:
    named = [f for group in fusion.GROUPS.values() for f in group]
    assert len(named) == len(set(named)) == len(FEATURES)


def test_features_of_a_pool() -> None:
    a = turn("a", "Ben bought a blue road bike", dense_rank=1, sparse_rank=4, bm25_score=2.0,
             dense_similarity=0.6, similarity=0.6, coverage=0.5)
    b = turn("b", "nice one", sparse_rank=1, bm25_score=8.0, bare_rank=9, bare_similarity=0.3,
             similarity=0.3, speaker="Ben", created_at=T0 + timedelta(minutes=1))
    c = turn("c", "the bike shop closed", dense_rank=2, dense_similarity=0.4, similarity=0.4,
             session_id="s2", created_at=T0 + timedelta(days=2))
    memory = Candidate(id="memory:m", kind="memory", content="Ben owns a road bike",
                       source_ids=("tc",), dense_rank=3, similarity=0.5, created_at=T0)
    window = TimeWindow(T0 - timedelta(days=1), T0 + timedelta(days=1), "then")
    ctx = QueryContext(window=window, people=frozenset({"ben"}))
    fa, fb, fc, fm = features([a, b, c, memory], ctx)
    assert (fa["dense_inv"], fa["sparse_inv"], fa["bare_inv"]) == (1.0, 0.5, 0.0)
    assert fb["bare_inv"] == pytest.approx(1 / 3)
    assert (fa["bm25_norm"], fb["bm25_norm"], fc["bm25_norm"]) == (0.25, 1.0, 0.0)
    assert fa["coverage"] == 0.5 and fb["coverage"] == 0.0
    assert fa["sim_gap"] == pytest.approx(0.0) and fb["sim_gap"] == pytest.approx(-0.3)
    # a list's similarity where the candidate is not in it: the list's worst in the pool
    assert fb["dense_sim"] == pytest.approx(0.4) and fa["bare_sim"] == pytest.approx(0.3)
    # said by the named person needs person_boost_min_terms words of its own; named: a mention
    assert (fa["person_said"], fa["person_named"]) == (0.0, 1.0)
    assert (fb["person_said"], fb["short_reply"]) == (0.0, 1.0)  # "nice one": 1 term
    assert fc["people_asked"] == 1.0 and fc["person_named"] == 0.0
    assert fa["window_asked"] == 1.0 and fa["time_overlap"] == 1.0
    assert fc["time_overlap"] == pytest.approx(1 - 1 / 3)  # a day past it, 3 days of slack
    assert fm["kind_memory"] == 1.0 and fc["pointed"] == 1.0 and fa["pointed"] == 0.0
    # sessions: s1 holds a and b (half the pool), a is its best; b is a's neighbour
    assert fa["session_share"] == 0.5 and fc["session_share"] == 0.25
    assert (fa["session_top"], fb["session_top"], fc["session_top"]) == (1.0, 0.0, 1.0)
    assert fb["neighbour_best"] == fa["relevance"] and fa["neighbour_best"] == fb["relevance"]
    assert fc["neighbour_best"] == 0.0  # alone in its session
    assert max(f["relevance"] for f in (fa, fb, fc, fm)) == 1.0
    assert fa["recency"] == pytest.approx(0.5 ** (10 / CFG.recency_half_life_days))


def test_voice_tells_a_statement_from_a_reply_and_only_the_named_speakers_statement_is_preferred(
        ) -> None:
    """Issue 39 item 4: "I called out of work today" (first person) states a thing; "enjoy
    your day off!" (second person) answers it in the same words. said_statement marks the
    named speaker's own first-person turn that addresses no one: the person preference's
    feature (fusion.PREFERENCE), zeroed by without_preference."""
    told = turn("a", "I called out of work today because of a stomach ache", speaker="Nico")
    reply = turn("b", "Enjoy your day off, I hope the stomach ache goes away",
                 speaker="Nebraas")
    echo = turn("c", "I'm sorry you're sick", speaker="Nico")  # first and second person
    other = turn("d", "I called out of work too", speaker="Nebraas")
    ft, fr, fe, fo = features([told, reply, echo, other],
                              QueryContext(people=frozenset({"nico"})))
    assert (ft["first_person"], ft["second_person"], ft["said_statement"]) == (1.0, 0.0, 1.0)
    assert (fr["first_person"], fr["second_person"], fr["said_statement"]) == (1.0, 1.0, 0.0)
    assert (fe["first_person"], fe["second_person"], fe["said_statement"]) == (1.0, 1.0, 0.0)
    assert (fo["first_person"], fo["said_statement"]) == (1.0, 0.0)  # not the named one
    plain = fusion.without_preference([ft[f] for f in FEATURES])
    assert plain[FEATURES.index("said_statement")] == 0.0
    assert plain[FEATURES.index("first_person")] == 1.0  # voice is not a preference
    # a question naming nobody prefers no one's statement
    assert features([told], QueryContext())[0]["said_statement"] == 0.0


def test_a_linked_turns_features_carry_its_seeds_rank_and_side() -> None:
    """The "links" group (issue 39 item 3): 1 / sqrt(the seed's rank), and whether the turn
    follows its seed; a turn no link brought has zeros."""
    answer = turn("a", "yes, twice", link_rank=4, link_next=True, similarity=0.1)
    before = turn("b", "we were downtown", link_rank=1, similarity=0.2)
    plain = turn("c", "did you try the pottery class?", dense_rank=1, similarity=0.6)
    fa, fb, fc = features([answer, before, plain], QueryContext())
    assert (fa["link_inv"], fa["link_next"]) == (0.5, 1.0)
    assert (fb["link_inv"], fb["link_next"]) == (1.0, 0.0)
    assert (fc["link_inv"], fc["link_next"]) == (0.0, 0.0)


def test_no_window_and_no_people_give_zeros_and_the_vector_is_deterministic() -> None:
    cands = [turn("a", dense_rank=1), turn("b", sparse_rank=2, bm25_score=1.0)]
    first, again = features(cands), features(list(cands))
    assert first == again
    assert all(f["window_asked"] == f["time_overlap"] == f["people_asked"] == 0.0
               for f in first)
    assert features([]) == []


def test_the_model_file_is_checked() -> None:
    ok = FusionModel.from_dict({"kind": "linear", "bias": -1.0, "weights": {"bm25_norm": 2.0}})
    assert ok.weights[FEATURES.index("bm25_norm")] == 2.0 and sum(ok.weights) == 2.0
    x = [0.0] * len(FEATURES)
    assert ok.logit(x) == -1.0 and ok.probability(x) == pytest.approx(1 / (1 + math.e))
    x[FEATURES.index("bm25_norm")] = 1.0
    assert ok.probability(x) > 0.5
    assert FusionModel.from_dict({"kind": "linear", "bias": 0, "weights": {}}
                                 ).probability([-800.0] * len(FEATURES)) == 0.5
    for bad, says in (({"kind": "trees", "weights": {}}, "kind"),
                      ({"kind": "linear", "weights": {"bm26": 1.0}}, "bm26"),
                      ({"kind": "linear", "weights": {"bm25_norm": "x"}}, "not a number"),
                      ({"kind": "linear", "weights": {"bm25_norm": float("nan")}}, "finite"),
                      ({"kind": "linear", "weights": [1.0]}, "map")):
        with pytest.raises(FusionModelError, match=says):
            FusionModel.from_dict(bad)


def test_the_pipeline_ranks_by_the_model_when_given_one() -> None:
    """RRF puts `dense` first (rank 1 in the heavier list); a model that reads BM25's own
    score puts `lexical` first; without a model the order is RRF's."""
    dense = turn("d", dense_rank=1, bare_rank=1, similarity=0.5, dense_similarity=0.5)
    lexical = turn("l", sparse_rank=1, bm25_score=9.0, similarity=0.4)
    model = FusionModel.from_dict({"kind": "linear", "bias": 0.0,
                                   "weights": {"bm25_norm": 3.0}})
    rrf_out = recall_pipeline([dense, lexical], now=NOW, cfg=CFG, k=2)
    assert [i.id for i in rrf_out.items] == [dense.id, lexical.id]
    out = recall_pipeline([dense, lexical], now=NOW, cfg=CFG, k=2, fusion=model)
    assert [i.id for i in out.items] == [lexical.id, dense.id]
    top = out.items[0]
    assert top.components["learned"] == pytest.approx(1 / (1 + math.exp(-3.0)))
    assert top.score == pytest.approx(top.components["learned"])
    # the assistant's words still count less (REALTALK, the training data, has none)
    said = recall_pipeline([replace(lexical, role="assistant")], now=NOW, cfg=CFG, k=1,
                           fusion=model).items[0]
    assert said.score == pytest.approx(CFG.assistant_weight * top.score)


def test_the_learned_person_preference_moves_a_turn_down_at_most_person_max_shift() -> None:
    """Issue 39 item 4 under the learned fusion: the model's person weight may prefer the
    named speaker's turns, never hide the other speaker's best one."""
    other = turn("o", "Ana planted tomatoes in the garden", sparse_rank=1, bm25_score=9.0,
                 speaker="Ana")
    bens = [turn(f"b{n}", f"Ben watered the garden plants {n} times", sparse_rank=n + 2,
                 bm25_score=8.0 - n, speaker="Ben") for n in range(5)]
    model = FusionModel.from_dict({"kind": "linear", "bias": 0.0,
                                   "weights": {"bm25_norm": 2.0, "person_said": 5.0}})
    ctx = QueryContext(people=frozenset({"ben"}))
    for shift, place in ((3, 3), (0, 0), (-1, 5)):
        cfg = replace(CFG, person_max_shift=shift)
        out = recall_pipeline([other, *bens], now=NOW, cfg=cfg, k=6, context=ctx,
                              fusion=model)
        assert [i.id for i in out.items].index(other.id) == place, shift
    # naming nobody: one ranking, no "unpreferred" score
    out = recall_pipeline([other, *bens], now=NOW, cfg=CFG, k=6, fusion=model)
    assert out.items[0].id == other.id and "unpreferred" not in out.items[0].components


def test_the_config_names_the_fusion_and_refuses_others(monkeypatch: pytest.MonkeyPatch) -> None:
    table = dict(load_settings().recall)
    assert RecallConfig.from_table(table).fusion in ("learned", "rrf")
    with pytest.raises(ValueError, match=r"recall\.fusion='trees'"):
        RecallConfig.from_table({**table, "fusion": "trees"})
    monkeypatch.setenv("COGD_RECALL__FUSION", "trees")
    with pytest.raises(ConfigError, match=r"recall\.fusion"):
        load_settings()


def test_the_shipped_model_loads_and_says_how_it_was_trained() -> None:
    from agent.services.memory.recall import load_fusion

    path = load_settings().recall["fusion_model"]
    model = load_fusion(path)
    assert model.meta["trained"]["command"].startswith("python -m bench fusion_train --pools")
    assert "Chat_1-5" in model.meta["trained"]["pools"]  # dev conversations only
    assert any(model.weights)
    # issue 39 item 4: the named speaker's own statement is preferred, not all their words
    weights = dict(zip(FEATURES, model.weights, strict=True))
    assert weights["person_said"] == 0.0 and weights["said_statement"] != 0.0


def test_a_missing_model_file_is_a_config_error(tmp_path: Path) -> None:
    from agent.services.memory.recall import load_fusion

    with pytest.raises(ConfigError, match="unreadable"):
        load_fusion(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"kind": "linear", "weights": {"nope": 1}}))
    with pytest.raises(ConfigError, match=r"malformed.*nope"):
        load_fusion(str(bad))
