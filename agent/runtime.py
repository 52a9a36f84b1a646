"""The composition root (issue 41 item 2): every process builds its collaborators here, once.

`Settings` stops at this module. It builds the adapters a process needs (embedders, LLMs by
role, the reranker, the cortex) the first time something asks for them and keeps them, and
it builds each service from its typed config and those collaborators. Services receive
their config dataclasses and collaborators as arguments; none takes `Settings` and none
calls the provider factory itself.

    rt = Runtime(settings, recorder)
    cognition = rt.cognition()      # the loop
    consolidator = rt.consolidator()

Workers, commands and the night cycle import this module; agent.services never does (the
import-linter layers contract in pyproject.toml).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.config import Settings
from agent.providers import factory

if TYPE_CHECKING:
    from agent.providers.ports import LLM, Embedder, Reranker
    from agent.services.reach.corrections import CorrectionMatcher
    from agent.services.reach.handoff import Continuity, NoteWriter
    from agent.services.reach.intentions import IntentionTracker
    from agent.services.reach.workflows import Workflows
    from agent.services.thinking.decisions import DecisionTracker
    from agent.services.thinking.foresight import Foresight
    from agent.services.thinking.models_principles import ModelsOp, PrincipleMatcher, PrinciplesOp
    from agent.services.thinking.predictions import PredictionTracker
    from agent.services.thinking.self_test import SelfTest


class Runtime:
    """What one process builds from its Settings: adapters once, then services from them."""

    def __init__(self, settings: Settings, recorder: Any = None) -> None:
        self.settings = settings
        self.recorder = recorder
        self._llms: dict[str, LLM] = {}

    # -- adapters: built on first use, then shared ---------------------------------------

    @functools.cached_property
    def universal(self) -> Embedder:
        """The universal embedder (memories, turns and queries share one vector space)."""
        return factory.build_universal_embedder(self.settings)

    @functools.cached_property
    def native(self) -> Embedder:
        return factory.build_native_embedder(self.settings, self.recorder)

    @functools.cached_property
    def reranker(self) -> Reranker:
        return factory.build_reranker(self.settings, self.recorder)

    def llm(self, role: str) -> LLM:
        """The LLM of a role ([llm.roles]), one per role per process."""
        if role not in self._llms:
            self._llms[role] = factory.build_llm(self.settings, role, self.recorder)
        return self._llms[role]

    # -- services: conversation, memory, records, access ---------------------------------

    # -- services: thinking and reach -----------------------------------------------------

    def consolidation_model(self) -> LLM | None:
        """The consolidation role's LLM when it routes to a real provider (openai, gemini),
        else None: the named heuristics decide. The trackers below take this method, not
        its value: each asks for the model the first time it would use it."""
        from agent.services.reach.intentions import REAL_PROVIDERS

        _, profile = self.settings.role_profile("consolidation")
        return self.llm("consolidation") if profile.provider in REAL_PROVIDERS else None

    def intention_tracker(self) -> IntentionTracker:
        """Open intentions: fulfilled by a later turn, surfaced on their topic ([intentions])."""
        from agent.services.reach.intentions import IntentionsConfig, IntentionTracker

        return IntentionTracker(IntentionsConfig.from_table(self.settings.intentions),
                                self.consolidation_model)

    def correction_matcher(self) -> CorrectionMatcher:
        """The corrections that apply to a turn ([context] correction_*)."""
        from agent.services.reach.corrections import CorrectionMatcher, CorrectionsConfig

        return CorrectionMatcher(CorrectionsConfig.from_table(self.settings.context))

    def note_writer(self) -> NoteWriter:
        """A session's continuation note (consolidation's `continuation`, the handoff)."""
        from agent.services.reach.handoff import HandoffConfig, NoteWriter

        return NoteWriter(HandoffConfig.from_table(self.settings.context),
                          self.consolidation_model)

    def continuity(self, count_tokens: Callable[[str], int] | None = None) -> Continuity:
        """Session handoff, corrections and intentions in the prompt (issue 17).
        `count_tokens`: the handoff block's budget counter (default: the system1 model's)."""
        from agent.services.reach.handoff import Continuity, HandoffConfig

        return Continuity(HandoffConfig.from_table(self.settings.context),
                          self.universal.embed_query,
                          count_tokens or self.llm("system1").count_tokens,
                          notes=self.note_writer(), corrections=self.correction_matcher(),
                          intentions=self.intention_tracker())

    def workflows(self) -> Workflows:
        """Seed 000 §10.5: workflows detected (consolidation), offered and settled."""
        from agent.services.reach.workflows import Workflows, WorkflowsConfig

        universal = self.universal
        return Workflows(WorkflowsConfig.from_tables(self.settings.workflows,
                                                     self.settings.context),
                         lambda t: universal.embed_documents(list(t)),
                         universal.embed_query, self.consolidation_model)

    def decision_tracker(self) -> DecisionTracker:
        """Reasoning trails and their outcomes ([decisions])."""
        from agent.services.thinking.decisions import DecisionsConfig, DecisionTracker

        return DecisionTracker(DecisionsConfig.from_table(self.settings.decisions),
                               self.consolidation_model)

    def prediction_tracker(self) -> PredictionTracker:
        """Predictions made, settled and expired ([predictions])."""
        from agent.services.thinking.predictions import PredictionsConfig, PredictionTracker

        return PredictionTracker(PredictionsConfig.from_table(self.settings.predictions),
                                 self.consolidation_model)

    def foresight(self) -> Foresight:
        """Seed 000 §8.2-8.3, §10.3: predictions and decisions a turn makes or settles."""
        from agent.services.thinking.foresight import Foresight

        return Foresight(self.prediction_tracker(), self.decision_tracker())

    def models_op(self) -> ModelsOp:
        """Consolidation's `models` ([cognitive_models]; the consolidation role's LLM)."""
        from agent.domain.thinking_models import ModelConfig
        from agent.services.thinking.models_principles import ModelsOp

        return ModelsOp(ModelConfig.from_table(self.settings.cognitive_models), self.universal,
                        self.llm("consolidation"))

    def principles_op(self) -> PrinciplesOp:
        """Consolidation's `principles` ([principles]; the consolidation role's LLM)."""
        from agent.domain.thinking_models import PrincipleConfig
        from agent.services.thinking.models_principles import PrinciplesOp

        return PrinciplesOp(PrincipleConfig.from_table(self.settings.principles),
                            self.universal, self.llm("consolidation"))

    def principle_matcher(self) -> PrincipleMatcher:
        """Seed 000 §10.4: the principles that apply to a turn."""
        from agent.domain.thinking_models import PrincipleConfig
        from agent.services.thinking.models_principles import PrincipleMatcher

        return PrincipleMatcher(PrincipleConfig.from_table(self.settings.principles))

    def self_test(self) -> SelfTest:
        """`cogd self-test`: the system1 role's model runs each scenario, and predicts it
        when that role routes to a real provider (else the identity-similarity heuristic)."""
        from agent.services.thinking.self_test import REAL_PROVIDERS, SelfTest, SelfTestConfig

        s = self.settings
        system1 = self.llm("system1")
        _, profile = s.role_profile("system1")
        return SelfTest(SelfTestConfig.from_tables(s.self_test, s.identity, s.context, s.goals),
                        self.universal, system1,
                        system1 if profile.provider in REAL_PROVIDERS else None)

    # -- services: background (consolidation, the DMN) ------------------------------------
