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
from typing import TYPE_CHECKING, Any

from agent.config import Settings
from agent.providers import factory

if TYPE_CHECKING:
    from agent.providers.ports import LLM, Embedder, Reranker


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

    # -- services: background (consolidation, the DMN) ------------------------------------
