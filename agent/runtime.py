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
import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.config import Settings
from agent.db.pool import SidePool, side_pool
from agent.providers import factory

if TYPE_CHECKING:
    import psycopg

    from agent.cortex.store import CortexWhenPresent
    from agent.db.pool import Checkout
    from agent.domain.contextual import IndexConfig
    from agent.domain.prompt import IdentityConfig
    from agent.providers.ports import LLM, Embedder, Reranker
    from agent.services.access.hook import PromptHook
    from agent.services.access.memory_api import MemoryAPI
    from agent.services.background.consolidation import Consolidator
    from agent.services.background.dmn import Dmn
    from agent.services.conversation.cognition import Cognition
    from agent.services.memory.contradictions import Contradictions
    from agent.services.memory.forget import Forgetter
    from agent.services.memory.indexing import Indexer
    from agent.services.memory.profile import Profile
    from agent.services.memory.recall import Recaller
    from agent.services.reach.corrections import CorrectionMatcher
    from agent.services.reach.handoff import Continuity, NoteWriter
    from agent.services.reach.intentions import IntentionTracker
    from agent.services.reach.long_range import LongRange
    from agent.services.reach.workflows import Workflows
    from agent.services.records.turns import TurnWriter
    from agent.services.thinking.decisions import DecisionTracker
    from agent.services.thinking.foresight import Foresight
    from agent.services.thinking.models_principles import ModelsOp, PrincipleMatcher, PrinciplesOp
    from agent.services.thinking.predictions import PredictionTracker
    from agent.services.thinking.self_test import SelfTest


class Runtime:
    """What one process builds from its Settings: adapters once, then services from them."""

    def __init__(self, settings: Settings, recorder: Any = None, *, url: str | None = None,
                 process: str | None = None) -> None:
        self.settings = settings
        self.recorder = recorder
        self.url = url  # a worker's database and name: its side pool (`pool`)
        self.process = process
        self._llms: dict[str, LLM] = {}
        self._pool: SidePool | None = None
        self._replica: SidePool | None = None

    # -- connections: the process's side pool ---------------------------------------------

    @property
    def pool(self) -> SidePool:
        """The worker's pool for side work (agent/db/pool.py): heartbeat, inbox lease,
        partial replies, llm_calls and recall's pooled dense list. Opened on first use,
        closed by `close_pool` when the worker stops; a Runtime built without `url` and
        `process` (a CLI command) has none."""
        if self._pool is None:
            if self.url is None or self.process is None:
                raise RuntimeError("this Runtime was built without a database url and "
                                   "process name: it has no side pool")
            self._pool = side_pool(self.settings, self.url, self.process)
        return self._pool

    def close_pool(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._replica is not None:
            self._replica.close()
            self._replica = None

    @property
    def recall_reader(self) -> Checkout | None:
        """Connections to the read replica of [database] recall_url, for recall's
        read-only queries (agent/services/memory/recall.py); None without one. A pool of
        its own (autocommit, as [database] app_role), opened on first use."""
        url = self.settings.database.recall_url
        if not url:
            return None
        if self._replica is None:
            from agent.db.connect import postgres_url

            self._replica = side_pool(self.settings, postgres_url(url, "[database] recall_url"),
                                      f"{self.process or 'cli'}-recall")
        return self._replica.connection

    def record_calls(self) -> None:
        """Record every model call in llm_calls through the side pool (the loop and
        consolidation). Call it before anything builds a model: adapters keep the
        recorder they were built with."""
        from agent.db.llm_calls import PgCallRecorder

        self.recorder = PgCallRecorder(self.pool.connection)

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

    def _llm_of(self, role: str, providers: tuple[str, ...]) -> LLM | None:
        """The LLM of a role only when it routes to one of `providers` (a real model)."""
        _, profile = self.settings.role_profile(role)
        return self.llm(role) if profile.provider in providers else None

    @functools.cached_property
    def cortex(self) -> CortexWhenPresent:
        """The LanceDB cortex once the night cycle has created it (checked again on each
        search, so a long-running loop starts using it the night it appears); empty
        answers until then (agent/cortex/store.py). Its native embedder is this runtime's,
        built when the cortex first opens."""
        from agent.cortex.store import CortexWhenPresent

        return CortexWhenPresent(self.settings, self.universal, lambda: self.native)

    # -- services: conversation, memory, records, access ---------------------------------

    @functools.cached_property
    def index_config(self) -> IndexConfig:
        """The contextual index's recipe ([recall] index_*)."""
        from agent.domain.contextual import IndexConfig

        return IndexConfig.from_table(self.settings.recall)

    @functools.cached_property
    def identity_config(self) -> IdentityConfig:
        from agent.domain.prompt import IdentityConfig

        s = self.settings
        return IdentityConfig.from_tables(s.identity, s.context, s.goals)

    def rewriter(self) -> LLM | None:
        """Recall's weak-match rewriter: the LLM of role `rewrite` when it routes to a real
        model (recall.REWRITE_PROVIDERS); None: the named heuristic rewrites, if any."""
        from agent.services.memory.recall import REWRITE_PROVIDERS

        return self._llm_of("rewrite", REWRITE_PROVIDERS)

    def emotion_judge(self) -> LLM | None:
        """The LLM of role `emotion` when it routes to a real model (emotion.JUDGE_PROVIDERS);
        None: the lexicon heuristic."""
        from agent.services.conversation.emotion import JUDGE_PROVIDERS

        return self._llm_of("emotion", JUDGE_PROVIDERS)

    def recaller(self, side: Checkout | None = None) -> Recaller:
        """The recall pipeline as `cogd recall`, the memory API and the DMN use it: the
        universal embedder, the reranker, the default token counter, the cortex and the
        rewriter. A new Recaller each call (it holds a side connection and a size cache);
        the adapters are shared. `side`: a pool's checkout for the largest dense list."""
        from agent.domain.broad import BroadConfig
        from agent.domain.recall import RecallConfig
        from agent.providers.text import default_counter
        from agent.services.memory.recall import Recaller

        return Recaller(
            self.universal, self.reranker, RecallConfig.from_table(self.settings.recall),
            default_counter().count, cortex=self.cortex, rewriter=self.rewriter(),
            broad_cfg=BroadConfig.from_table(self.settings.recall), side=side,
            reader=self.recall_reader)

    def indexer(self) -> Indexer:
        """The contextual indexer with the universal embedder (it re-embeds turns)."""
        from agent.services.memory.indexing import Indexer

        return Indexer(self.universal, self.index_config)

    def turn_writer(self, rng: random.Random | None = None) -> TurnWriter:
        """The writer every entry point uses: the embedders, the default token counter, the
        entry gate and the index recipe ([entry_gate], [recall] index_*)."""
        from agent.domain.gates import EntryGateConfig
        from agent.providers.text import default_counter
        from agent.services.records.turns import TurnWriter

        return TurnWriter(self.universal, self.native, default_counter().count,
                          EntryGateConfig.from_table(self.settings.entry_gate), rng,
                          self.index_config)

    def contradictions(self) -> Contradictions:
        """Contradiction resolution (issue 42 item 3): a merge is embedded like a memory;
        its text is the caller's, else the consolidation model's, else a heuristic's."""
        from agent.services.memory.contradictions import Contradictions

        return Contradictions(self.universal, self.native, self.consolidation_model)

    def forgetter(self, conn: psycopg.Connection[Any]) -> Forgetter:
        """A Forgetter on `conn` with the embedders, the indexer and the cortex when there
        is one: a handle of its own, reading the latest version (one kept from an earlier
        forget would read the version it first saw, or none made since), so build one for
        each forget."""
        from agent.cortex.lance import LanceCortex, cortex_uri
        from agent.services.memory.forget import Forgetter

        universal, native, indexer = self.universal, self.native, self.indexer()
        uri = cortex_uri(self.settings)
        cortex = (LanceCortex.from_settings(self.settings, read_consistency_s=0.0)
                  if "://" in uri or Path(uri).is_dir() else None)
        return Forgetter(conn, lambda texts: list(universal.embed_documents(texts)),
                         lambda c: indexer.run(c, kinds=("day_table", "memory", "block"),
                                               count=False),
                         cortex, Path(self.settings.data_dir),
                         None if native.model_id == universal.model_id
                         else lambda texts: list(native.embed_documents(texts)))

    def memory_api(self, url: str, default_user: str, channel: str = "mcp",
                   app: str = "cogd-mcp") -> MemoryAPI:
        """What cogd offers other programs (the MCP server, the HTTP API)."""
        from agent.domain.emotion import EmotionConfig
        from agent.services.access.memory_api import MemoryAPI

        return MemoryAPI(url, default_user, contradictions=self.contradictions,
                         recaller=self.recaller(),
                         writer=self.turn_writer(), identity_cfg=self.identity_config,
                         decisions=self.decision_tracker(), forgetter=self.forgetter,
                         continuity=self.continuity,
                         emotion_cfg=EmotionConfig.from_table(self.settings.emotion),
                         profile=self.profile(), channel=channel, app=app)

    def cognition(self, rng: random.Random | None = None,
                  side: Checkout | None = None) -> Cognition:
        """One turn of the loop, built once per process. `rng`: the gates' draws (the
        writer's and the rollover's); `side`: a second connection (a pool's checkout) that
        recall's largest dense list runs on (the loop worker's)."""
        from agent.domain.broad import BroadConfig
        from agent.domain.emotion import EmotionConfig
        from agent.services.conversation.cognition import (
            Cognition,
            CognitionConfig,
            CognitionParts,
        )
        from agent.services.conversation.rollover import RelevanceScorer, Rollover
        from agent.services.memory.indexing import Indexer
        from agent.services.memory.recall import Recaller
        from agent.services.records.turns import TurnWriter

        cfg = CognitionConfig.from_settings(self.settings)
        rng = rng or random.Random()
        universal, system1 = self.universal, self.llm("system1")
        count_tokens = system1.count_tokens
        relevance = RelevanceScorer(lambda texts: universal.embed_documents(list(texts)))
        parts = CognitionParts(
            universal=universal, native=self.native, system1=system1,
            system2=self.llm("system2"), reranker=self.reranker,
            emotion_cfg=EmotionConfig.from_table(self.settings.emotion),
            emotion_judge=self.emotion_judge(),
            writer=TurnWriter(universal, self.native, count_tokens, cfg.entry, rng,
                              self.index_config),
            recaller=Recaller(universal, self.reranker, cfg.recall, count_tokens,
                              cortex=self.cortex,
                              broad_cfg=BroadConfig.from_table(self.settings.recall),
                              side=side, reader=self.recall_reader),
            indexer=Indexer(None, self.index_config),
            relevance=relevance,
            rollover=Rollover(cfg.entry, cfg.exit, relevance, rng),
            continuity=self.continuity(), workflows=self.workflows(),
            principles=self.principle_matcher(), foresight=self.foresight(),
        )
        return Cognition(cfg, parts, rng=rng)

    # -- services: thinking and reach -----------------------------------------------------

    def consolidation_model(self) -> LLM | None:
        """The consolidation role's LLM when it routes to a real provider (openai, gemini),
        else None: the named heuristics decide. The trackers below take this method, not
        its value: each asks for the model the first time it would use it."""
        from agent.services.reach.intentions import REAL_PROVIDERS

        return self._llm_of("consolidation", REAL_PROVIDERS)

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
                          intentions=self.intention_tracker(), profile=self.profile(),
                          long_range=self.long_range())

    def profile(self) -> Profile:
        """The user profile (issue 42 item 1; [context] profile_*): the consolidation
        role's model reads the user's words when it routes to a real provider, else the
        named heuristic."""
        from agent.services.memory.profile import Profile, ProfileConfig

        return Profile(ProfileConfig.from_table(self.settings.context),
                       self.consolidation_model)

    def long_range(self) -> LongRange:
        """Landmarks and the temporal sweep at a session start (issue 42 item 2; [recall]
        landmarks_at_session_start, sweep_*; seed 000 §4.6)."""
        from agent.services.reach.long_range import LongRange, LongRangeConfig

        return LongRange(LongRangeConfig.from_tables(self.settings.recall,
                                                     self.settings.consolidation))

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
        return SelfTest(SelfTestConfig.from_tables(s.self_test, s.identity, s.context, s.goals),
                        self.universal, self.llm("system1"),
                        self._llm_of("system1", REAL_PROVIDERS))

    # -- services: background (consolidation, the DMN) ------------------------------------

    def consolidator(self, rng: random.Random | None = None) -> Consolidator:
        """The consolidation pass ([consolidation], the consolidation role's LLM). `rng`:
        the exit gate's stochastic keep when a scratch row is judged. Its indexer writes
        the index of memories and blocks only (turns keep the vectors their writers made);
        the thinking and reach operations it runs come from the methods above."""
        from agent.services.background.consolidation import Consolidator, PassConfig
        from agent.services.conversation.rollover import RelevanceScorer, Rollover
        from agent.services.memory.indexing import Indexer

        config = PassConfig.from_settings(self.settings)
        universal = self.universal
        relevance = RelevanceScorer(lambda texts: universal.embed_documents(list(texts)))
        return Consolidator(
            config, llm=self.llm("consolidation"), universal=universal, native=self.native,
            relevance=relevance,
            rollover=Rollover(config.entry_gate, config.exit_gate, relevance,
                              rng or random.Random()),
            indexer=Indexer(None, self.index_config), notes=self.note_writer(),
            workflows=self.workflows(), decisions=self.decision_tracker(),
            models_op=self.models_op(), principles_op=self.principles_op(),
            profile=self.profile())

    def dmn(self, rng: random.Random | None = None) -> Dmn:
        """The idle default-mode network ([idle]): proactive recall with this runtime's
        recaller; the system1 role's model for its internal turns, built on the first one.
        `rng`: surfacing's draws."""
        from agent.services.background.dmn import Dmn, IdleConfig

        return Dmn(IdleConfig.from_settings(self.settings), universal=self.universal,
                   recaller=self.recaller(), system1=lambda: self.llm("system1"), rng=rng)

    def prompt_hook(self, max_tokens: int | None = None) -> PromptHook:
        """`cogd hook` (seed 000 §5.4): corrections, the handoff, the DMN's thoughts,
        workflows, recall and goals for a prompt, within `max_tokens` (default: [hook]
        max_tokens). Counts tokens with the default counter: no model is built."""
        import dataclasses

        from agent.providers.text import default_counter
        from agent.services.access.hook import HookConfig, PromptHook

        count = default_counter().count
        s = self.settings
        cfg = HookConfig.from_tables(s.hook, s.goals, s.workflows)
        if max_tokens:
            cfg = dataclasses.replace(cfg, max_tokens=max_tokens)
        return PromptHook(cfg, self.dmn(), self.continuity(count), count)
