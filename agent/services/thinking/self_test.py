"""`cogd self-test`: the self-model prediction test (seed 003, "measurable proxy": ask the
agent to predict its own behaviour, present the case, measure the alignment; track it
over time).

Each held-back scenario (a choice between 2-6 options; the built-in set ships in
agent/data/self_test_scenarios.json, more can come from a JSON file) is answered twice:
1. prediction, from Layer 0 traits and Layer 1 goals only: the system1 role's model asked
   "given these values, which option would you choose?" when that role routes to a real
   provider (openai, gemini); otherwise the named "identity-similarity-heuristic"
   (agent/domain/self_test.py);
2. run: the scenario as a real turn of System 1 with the normal prompt (the identity hash
   and goals, agent/domain/prompt.py build_messages), written nowhere (no day-table turn,
   no recall, no memory); the option is read from the answer (a leading letter, or one
   option's text quoted) or else, named "nearest-option-similarity", the option whose
   universal vector is closest to the answer's (how the extractive heuristic's answers
   are read).
A `self_test_runs` row (+ one `self_test_items` row per scenario) keeps the agreement;
`v_self_test` shows it over time.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from agent.db.queries import query
from agent.domain import self_test as rules
from agent.domain.prompt import IdentityConfig, PromptParts, build_messages, identity_hash
from agent.domain.tables import need
from agent.errors import InputError, ProviderError
from agent.services.records.identity import load_goals, load_traits

logger = logging.getLogger(__name__)

REAL_PROVIDERS = ("openai", "gemini")  # the models trusted to predict themselves


def builtin_scenarios() -> list[rules.Scenario]:
    text = resources.files("agent").joinpath("data/self_test_scenarios.json").read_text()
    return rules.parse_scenarios(json.loads(text), "built-in scenarios")


def file_scenarios(path: Path) -> list[rules.Scenario]:
    """Scenarios from a JSON file; InputError (one line) for a missing or bad file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None
    try:
        return rules.parse_scenarios(data, str(path))
    except ValueError as exc:
        raise InputError(str(exc)) from None


def pick(n: int | None, default: int, extra: list[rules.Scenario]) -> list[rules.Scenario]:
    """The file's scenarios first, then the built-in ones; the first `n` (default: the
    configured count)."""
    if n is not None and n < 1:
        raise InputError(f"--scenarios must be at least 1 (got {n})")
    return [*extra, *builtin_scenarios()][: n or default]


@dataclass(frozen=True)
class SelfTestConfig:
    """[self_test], and the identity the prompt is built from ([identity], [context],
    [goals])."""

    scenarios: int  # the default count
    answer_max_tokens: int
    identity: IdentityConfig
    boundaries: tuple[str, ...]  # [identity] bootstrap_boundaries

    @classmethod
    def from_tables(cls, self_test: Mapping[str, Any], identity: Mapping[str, Any],
                    context: Mapping[str, Any], goals: Mapping[str, Any]) -> SelfTestConfig:
        return cls(scenarios=int(need(self_test, "scenarios")),
                   answer_max_tokens=int(need(self_test, "answer_max_tokens")),
                   identity=IdentityConfig.from_tables(identity, context, goals),
                   boundaries=tuple(need(identity, "bootstrap_boundaries")))


class SelfTest:
    """`system1`: the system1 role's model (each scenario's run); `predict_llm`: the same
    model when that role routes to a real provider (REAL_PROVIDERS), else None (the
    identity-similarity heuristic predicts). Built by agent/runtime.py:
    Runtime.self_test."""

    def __init__(self, cfg: SelfTestConfig, universal: Any, system1: Any,
                 predict_llm: Any = None) -> None:
        self.default_n = cfg.scenarios
        self.max_tokens = cfg.answer_max_tokens
        self.identity_cfg = cfg.identity
        self.boundaries = list(cfg.boundaries)
        self.universal = universal
        self.system1 = system1
        self.predict_llm = predict_llm

    def run(self, conn: psycopg.Connection[Any], scenarios: list[rules.Scenario]
            ) -> dict[str, Any]:
        traits, goals = load_traits(conn), load_goals(conn)
        texts = [t.description or t.name for t in traits] + [g.description or g.name
                                                            for g in goals]
        weights = [float(t.weight) for t in traits] + [float(g.weight) for g in goals]
        if not texts:  # nothing bootstrapped yet: the boundaries every identity starts with
            texts, weights = list(self.boundaries), [1.0] * len(self.boundaries)
        id_vecs = np.asarray(self.universal.embed_documents(texts)) if texts else None
        identity = identity_hash(traits, goals, self.identity_cfg)
        predictor = (f"llm:{self.predict_llm.model}" if self.predict_llm is not None
                     else rules.PREDICT_HEURISTIC)
        items, how_read = [], Counter[str]()
        for s in scenarios:
            opt_vecs = np.asarray(self.universal.embed_documents(list(s.options)))
            predicted, p_how = self._predict(s, identity, opt_vecs, id_vecs, weights)
            actual, a_how, answer = self._run(s, identity, opt_vecs)
            how_read[f"prediction:{p_how}"] += 1
            how_read[f"run:{a_how}"] += 1
            items.append({"scenario": s.id, "text": s.text, "options": list(s.options),
                          "predicted": rules.LETTERS[predicted],
                          "actual": rules.LETTERS[actual], "agreed": predicted == actual,
                          "prediction_read_by": p_how, "run_read_by": a_how,
                          "answer": answer[:300]})
        agreed = sum(1 for i in items if i["agreed"])
        agreement = round(agreed / len(items), 4) if items else 0.0
        detector = f"prediction: {predictor}; run: system1 {self.system1.model}"
        details = {"predictor": predictor, "read": dict(how_read),
                   "identity_texts": len(texts), "run_model": self.system1.model}
        with conn.transaction():
            row = conn.execute(query("self_test_run_insert"), {
                "scenarios": len(items), "agreed": agreed, "agreement": agreement,
                "model": self.system1.model, "detector": detector,
                "details": json.dumps(details)}).fetchone()
            assert row is not None
            for it in items:
                conn.execute(query("self_test_item_insert"), {
                    "run": row[0], "scenario": it["scenario"],
                    "options": json.dumps(it["options"]), "predicted": it["predicted"],
                    "actual": it["actual"], "agreed": it["agreed"]})
        return {"run_id": row[0], "created_at": row[1], "scenarios": len(items),
                "agreed": agreed, "agreement": agreement, "model": self.system1.model,
                "detector": detector, "items": items}

    def _predict(self, s: rules.Scenario, identity: str, opt_vecs: Any, id_vecs: Any,
                 weights: list[float]) -> tuple[int, str]:
        if self.predict_llm is not None:
            try:
                result = self.predict_llm.chat(rules.predict_messages(identity, s),
                                               temperature=0.0, max_tokens=self.max_tokens)
                choice, how = self._read(result.text, s, opt_vecs)
                return choice, f"llm {how}"
            except ProviderError as exc:
                logger.warning("self-test: the prediction's model failed (%s); the "
                               "identity-similarity heuristic predicts", exc)
        choice, _scores = rules.predict_by_identity(opt_vecs, id_vecs, weights)
        return choice, rules.PREDICT_HEURISTIC

    def _run(self, s: rules.Scenario, identity: str, opt_vecs: Any) -> tuple[int, str, str]:
        parts = PromptParts(identity=identity, user_message=rules.run_message(s))
        result = self.system1.chat(build_messages(parts), max_tokens=self.max_tokens)
        choice, how = self._read(result.text, s, opt_vecs, extractive=result.fallback)
        return choice, how, result.text

    def _read(self, answer: str, s: rules.Scenario, opt_vecs: Any, *,
              extractive: bool = False) -> tuple[int, str]:
        """The option an answer chose: its letter or quoted option text, else (and always
        for the extractive heuristic's answers, which quote the prompt) the nearest option
        by similarity."""
        if not extractive:
            choice, how = rules.parse_choice(answer, s.options)
            if choice is not None:
                return choice, how
        vec = self.universal.embed_query(answer or " ")
        return rules.nearest(vec, opt_vecs), rules.NEAREST_OPTION
