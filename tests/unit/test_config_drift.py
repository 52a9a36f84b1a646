"""One source of config values (issue "One shape for config, ..."): config/default.toml.

The domain's config dataclasses have no defaults of their own and are built from
default.toml alone; every key of the seed tables in default.toml is read by something
(a dataclass's from_table, or the code that reads the table directly)."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agent.config import SEED_TABLES, default_config_path, load_settings
from agent.domain.broad import BroadConfig
from agent.domain.consolidation import ConsolidationConfig, SafetyConfig
from agent.domain.contextual import IndexConfig
from agent.domain.dmn import DmnConfig
from agent.domain.emotion import EmotionConfig
from agent.domain.episodes import EpisodeConfig
from agent.domain.frustration import FrustrationConfig
from agent.domain.gates import EntryGateConfig, ExitGateConfig
from agent.domain.monitors import MonitorConfig
from agent.domain.night_blocks import BlockConfig
from agent.domain.night_flux import FluxConfig
from agent.domain.night_salience import SalienceConfig
from agent.domain.prompt import IdentityConfig
from agent.domain.recall import RecallConfig
from agent.domain.thinking_models import ModelConfig, PrincipleConfig
from agent.errors import ConfigError
from agent.services.access.hook import HookConfig
from agent.services.reach.corrections import CorrectionsConfig
from agent.services.reach.handoff import HandoffConfig
from agent.services.reach.intentions import IntentionsConfig
from agent.services.reach.workflows import WorkflowsConfig
from agent.services.thinking.decisions import DecisionsConfig
from agent.services.thinking.predictions import PredictionsConfig
from agent.services.thinking.self_test import SelfTestConfig

REPO = Path(__file__).resolve().parents[2]


class Recording(Mapping[str, Any]):
    """A config table that remembers which keys were read."""

    def __init__(self, section: str, table: Mapping[str, Any], seen: set[tuple[str, str]]):
        self.section, self.table, self.seen = section, table, seen

    def __getitem__(self, key: str) -> Any:
        self.seen.add((self.section, key))
        return self.table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


# each domain config and how it is built from the settings' tables
BUILDERS: dict[type, Callable[[Callable[[str], Mapping[str, Any]]], Any]] = {
    EntryGateConfig: lambda t: EntryGateConfig.from_table(t("entry_gate")),
    ExitGateConfig: lambda t: ExitGateConfig.from_table(t("exit_gate")),
    RecallConfig: lambda t: RecallConfig.from_table(t("recall")),
    BroadConfig: lambda t: BroadConfig.from_table(t("recall")),
    IndexConfig: lambda t: IndexConfig.from_table(t("recall")),
    ConsolidationConfig: lambda t: ConsolidationConfig.from_table(t("consolidation")),
    SafetyConfig: lambda t: SafetyConfig.from_table(t("compulsion_safety")),
    DmnConfig: lambda t: DmnConfig.from_table(t("idle")),
    MonitorConfig: lambda t: MonitorConfig.from_table(t("monitors")),
    EmotionConfig: lambda t: EmotionConfig.from_table(t("emotion")),
    FrustrationConfig: lambda t: FrustrationConfig.from_table(t("emotion")),
    BlockConfig: lambda t: BlockConfig.from_table(t("night_cycle")),
    FluxConfig: lambda t: FluxConfig.from_table(t("night_cycle")),
    SalienceConfig: lambda t: SalienceConfig.from_table(t("night_cycle")),
    EpisodeConfig: lambda t: EpisodeConfig.from_table(t("night_cycle")),  # issue 42
    IdentityConfig: lambda t: IdentityConfig.from_tables(t("identity"), t("context"),
                                                         t("goals")),
    ModelConfig: lambda t: ModelConfig.from_table(t("cognitive_models")),
    PrincipleConfig: lambda t: PrincipleConfig.from_table(t("principles")),
    # the services' configs (issue 41 item 2: parsed once, by agent/runtime.py)
    IntentionsConfig: lambda t: IntentionsConfig.from_table(t("intentions")),
    CorrectionsConfig: lambda t: CorrectionsConfig.from_table(t("context")),
    HandoffConfig: lambda t: HandoffConfig.from_table(t("context")),
    WorkflowsConfig: lambda t: WorkflowsConfig.from_tables(t("workflows"), t("context")),
    DecisionsConfig: lambda t: DecisionsConfig.from_table(t("decisions")),
    PredictionsConfig: lambda t: PredictionsConfig.from_table(t("predictions")),
    SelfTestConfig: lambda t: SelfTestConfig.from_tables(t("self_test"), t("identity"),
                                                         t("context"), t("goals")),
    HookConfig: lambda t: HookConfig.from_tables(t("hook"), t("goals"), t("workflows")),
}


@pytest.mark.parametrize("cls", list(BUILDERS), ids=lambda c: c.__name__)
def test_a_domain_config_has_no_defaults_of_its_own(cls: type) -> None:
    with_default = [f.name for f in dataclasses.fields(cls)
                    if f.default is not dataclasses.MISSING
                    or f.default_factory is not dataclasses.MISSING]
    assert with_default == []


@pytest.mark.parametrize("cls", list(BUILDERS), ids=lambda c: c.__name__)
def test_a_domain_config_is_built_from_default_toml_alone(
    cls: type, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    for var in [v for v in os.environ if v.startswith("COGD_")]:
        monkeypatch.delenv(var)
    settings = load_settings()
    built = BUILDERS[cls](lambda section: getattr(settings, section))
    assert isinstance(built, cls)


def test_a_missing_key_is_an_error_naming_it() -> None:
    table = dict(tomllib.loads(default_config_path().read_text())["recall"])
    del table["bm25_k1"]
    with pytest.raises(ConfigError, match="'bm25_k1' is missing"):
        RecallConfig.from_table(table)


def _source_literals() -> tuple[set[str], set[str]]:
    """Every quoted word in the code that reads settings tables directly, and every tail
    of an f-string key (f"{tier}_holographic_cycles" reads three retention keys)."""
    words: set[str] = set()
    tails: set[str] = set()
    for base in ("agent", "night_cycle"):
        for path in (REPO / base).rglob("*.py"):
            text = path.read_text()
            words |= set(re.findall(r"[\"']([a-z][a-z0-9_]*)[\"']", text))
            tails |= set(re.findall(r"f[\"'][^\"']*\}(_[a-z0-9_]+)[\"']", text))
    return words, tails


def test_every_key_of_default_toml_is_read_by_something() -> None:
    defaults = tomllib.loads(default_config_path().read_text())
    seen: set[tuple[str, str]] = set()
    for build in BUILDERS.values():
        build(lambda section: Recording(section, defaults[section], seen))
    literals, tails = _source_literals()
    assert "_holographic_cycles" in tails  # the f-string reader is seen
    unread = sorted(f"[{section}] {key}" for section in SEED_TABLES
                    for key in defaults.get(section, {})
                    if (section, key) not in seen and key not in literals
                    and not any(key.endswith(t) for t in tails))
    assert unread == [], ("keys nothing reads: read them, or comment them out in "
                          "default.toml as 'not read yet'")


TYPED = ("embedding", "database", "retry", "reranker", "bus", "process")


@pytest.mark.parametrize("section", TYPED)
def test_a_typed_section_declares_every_key_of_its_table_with_the_same_default(
    section: str,
) -> None:
    """The typed sections (pydantic models) keep a default per field, for a Settings built
    without the file; it must be default.toml's value, and every key of the table must
    be a field (nothing in the file silently ignored)."""
    from agent.config import Settings

    table = tomllib.loads(default_config_path().read_text())[section]
    model = Settings.model_fields[section].annotation
    fields = model.model_fields  # type: ignore[union-attr]
    assert sorted(set(table) - set(fields)) == []
    drifted = {k: (fields[k].default, v) for k, v in table.items() if fields[k].default != v}
    assert drifted == {}
