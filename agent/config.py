"""Settings: config/default.toml, then an optional user TOML, then COGD_* env vars.

Nothing here runs at import time; `load_settings()` is called from `main()`.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import ItemsView, Iterator, KeysView, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    ValidationError,
    create_model,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from agent.errors import ConfigError

ProviderName = Literal["local", "openai", "gemini", "heuristic"]
EMBEDDING_PROVIDERS: tuple[str, ...] = ("local", "openai", "gemini")
LLM_PROVIDERS: tuple[str, ...] = ("local", "openai", "gemini", "heuristic")
# the LLM roles of [llm.roles]: each one is asked for by some code (Runtime.llm, build_llm;
# tests/unit/test_roles_used.py compares this list with config/default.toml and the code)
ROLES: tuple[str, ...] = ("system1", "system2", "consolidation", "night_cycle", "rewrite",
                          "emotion")
# roles [llm.roles] once listed that nothing ever built (issue 42 item 7): a user file that
# still names one is refused with the reason, like any other key that would have no effect
RETIRED_ROLES: dict[str, str] = {
    "gate": "the entry and exit gates are rules, they ask no model",
    "dmn": "the idle DMN's internal turn is a System 1 turn (seed 003 §Idle Loop) and runs "
           "on the system1 role",
}


# keys that moved to another table: a file or env var still naming the old place is
# refused with the new one
MOVED_KEYS: dict[str, str] = {
    "night_cycle.cortex_uri": "[cortex] uri (env COGD_CORTEX__URI)",
}


def default_config_path() -> Path:
    """config/default.toml in a checkout; agent/default.toml inside a wheel."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "config" / "default.toml", here / "default.toml"):
        if candidate.is_file():
            return candidate
    raise ConfigError("config/default.toml is missing from this installation")


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cogd"


_PG_SIZE_KB = {"kB": 1, "MB": 2**10, "GB": 2**20, "TB": 2**30}
_SHARED_BUFFERS_KB = (128, 1073741823 * 8)  # Postgres's own bounds: 16 to 2^30 - 1 pages


def _shared_buffers(value: str) -> str:
    """"auto", or a size Postgres accepts for shared_buffers (checked here: a value it
    rejects would stop the embedded server from starting)."""
    if value == "auto":
        return value
    match = re.fullmatch(r"([1-9][0-9]*)(kB|MB|GB|TB)", value)
    if match is None:
        raise ValueError(f"{value!r} is not a size: write \"auto\" or e.g. \"512MB\", \"2GB\"")
    kb = int(match.group(1)) * _PG_SIZE_KB[match.group(2)]
    low, high = _SHARED_BUFFERS_KB
    if not low <= kb <= high:
        raise ValueError(f"{value} is outside Postgres's range for shared_buffers (128kB to 8TB)")
    return value


class DatabaseSettings(BaseModel):
    # an unknown key is refused: a misspelt embedded_shared_buffers, or the retired
    # hnsw_m / hnsw_ef_construction (read by nothing; the index parameters live in the
    # migrations), would otherwise be dropped without a word
    model_config = ConfigDict(extra="forbid")

    application_name_prefix: str = "cogd"
    connect_timeout_s: PositiveFloat = 5.0
    app_role: str = "cogd_app"
    # the embedded server's shared_buffers (agent/db/embedded.py): "auto" or a size
    embedded_shared_buffers: Annotated[str, AfterValidator(_shared_buffers)] = "auto"
    # a read replica of the server: recall's read-only queries run there ("" = the primary)
    recall_url: str = ""


def _storage_value(value: Any) -> str:
    """A storage option as LanceDB takes it: text (true/false for a TOML boolean)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise ValueError(f"{value!r} is not a storage option value: write text, a number or "
                     "true/false")


class CortexSettings(BaseModel):
    """Where the LanceDB cortex lives ([cortex]): a local path or an object-store URI, and
    the options LanceDB opens that store with (endpoint, region, allow_http, ...)."""

    model_config = ConfigDict(extra="forbid")

    uri: str = ""  # "": DATA_DIR/cortex
    storage_options: dict[str, Annotated[str, BeforeValidator(_storage_value)]] = Field(
        default_factory=dict)


class EmbeddingSettings(BaseModel):
    universal_model: str = "all-MiniLM-L6-v2-int8"
    universal_dim: int = 384
    native_provider: str = "local"
    native_model: str = "all-MiniLM-L6-v2-int8"
    native_dim: int = 384
    native_base_url: str | None = None
    native_api_key_env: str | None = None
    batch_size: PositiveInt = 64
    max_chars: PositiveInt = 8000
    # intra-op threads of the local model for a search query; 0: onnxruntime's default (one
    # per core) on the documents' session
    local_query_threads: NonNegativeInt = 2
    # whether those threads spin while a query's run lasts (documents' do); false: a waiting
    # thread sleeps, leaving the core to the database (agent/providers/local.py)
    local_query_spin: bool = False


class LLMProfile(BaseModel):
    provider: str = "heuristic"
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.7
    max_tokens: PositiveInt = 256
    timeout_s: PositiveFloat = 60.0
    # issue 40: answer fact questions from memory (agent/domain/grounded.py, a named
    # heuristic); true only on the bundled local profile
    grounded_replies: bool = False
    # provider "local" only (llama.cpp): another GGUF file instead of the bundled model,
    # sampling penalties, stop sequences, the repetition guard, threads and spinning
    model_path: str | None = None
    repeat_penalty: Annotated[float, Field(ge=0.0)] = 1.0
    frequency_penalty: Annotated[float, Field(ge=-2.0, le=2.0)] = 0.0
    presence_penalty: Annotated[float, Field(ge=-2.0, le=2.0)] = 0.0
    repeat_last_n: NonNegativeInt = 64
    stop: list[str] = Field(default_factory=list)
    repetition_guard: bool = True
    threads: NonNegativeInt = 0  # 0: half the cores, at least one
    poll: Annotated[int, Field(ge=0, le=100)] = 0


class LLMSettings(BaseModel):
    profiles: dict[str, LLMProfile] = Field(default_factory=dict)
    roles: dict[str, str] = Field(default_factory=dict)


class RetrySettings(BaseModel):
    max_retries: NonNegativeInt = 3
    base_delay_s: NonNegativeFloat = 1.0
    max_delay_s: NonNegativeFloat = 30.0
    jitter: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5


class RerankerSettings(BaseModel):
    enabled: bool = True
    model: str = "ms-marco-MiniLM-L-12-v2"
    cache_dir: str | None = None


class BusSettings(BaseModel):
    listen_timeout_s: PositiveFloat = 1.0
    keepalive_s: PositiveFloat = 30.0
    poll_interval_s: PositiveFloat = 5.0
    reconnect_delay_s: NonNegativeFloat = 1.0


class ProcessSettings(BaseModel):
    heartbeat_interval_s: PositiveFloat = 5.0
    stale_after_s: PositiveFloat = 30.0
    prune_after_s: PositiveFloat = 3600.0
    shutdown_grace_s: NonNegativeFloat = 10.0
    restart_backoff_initial_s: NonNegativeFloat = 1.0
    restart_backoff_max_s: NonNegativeFloat = 30.0
    restart_stable_after_s: NonNegativeFloat = 10.0
    inbox_lease_s: PositiveFloat = 30.0
    inbox_max_attempts: PositiveInt = 3
    turn_timeout_s: PositiveFloat = 600.0


class Section(BaseModel, Mapping[str, Any]):  # type: ignore[misc]
    """A seed table of config/default.toml ([recall], [exit_gate], ...) as a typed model.

    Its fields are the table's keys, each typed as its value in default.toml (a number
    that is not negative there may not be negative; a list of numbers keeps its length:
    bands and windows have positions) and required: default.toml is the one source of
    values, a user file or a COGD_ env var only overrides. An unknown key is refused by
    name. The domain reads a section like a table (`need(section, "key")`, agent/domain/
    tables.py) into its frozen config dataclasses; assignment is validated the same way.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    def __getitem__(self, key: str) -> Any:
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in type(self).model_fields:
            raise KeyError(key)
        setattr(self, key, value)

    def __contains__(self, key: object) -> bool:
        return key in type(self).model_fields

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # a mapping's keys
        return iter(type(self).model_fields)

    def __len__(self) -> int:
        return len(type(self).model_fields)

    def keys(self) -> KeysView[str]:
        return type(self).model_fields.keys()

    def items(self) -> ItemsView[str, Any]:
        return ItemsView(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def update(self, values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            self[key] = value


def _field_type(table: str, key: str, default: Any) -> Any:
    """The type of a key: its value's type in default.toml, checked and converted by
    _coerce (env vars arrive as text) with the same messages as before."""
    base: Any = (bool if isinstance(default, bool) else int if isinstance(default, int)
                 else float if isinstance(default, float) else str
                 if isinstance(default, str) else list if isinstance(default, list) else Any)
    return Annotated[base, BeforeValidator(
        lambda value, _k=f"{table}.{key}", _d=default: _coerce(_k, value, _d))]


def _section_model(table: str, values: Mapping[str, Any]) -> type[Section]:
    camel = "".join(part.title() for part in table.split("_"))
    fields: dict[str, Any] = {key: (_field_type(table, key, value), ...)
                              for key, value in values.items() if not isinstance(value, dict)}
    return create_model(f"{camel}Section", __base__=Section, **fields)


@cache
def _seed_defaults() -> dict[str, Any]:
    with default_config_path().open("rb") as fh:
        return tomllib.load(fh)


def _sections() -> dict[str, type[Section]]:
    defaults = _seed_defaults()  # read once, shared with the fuzz tests' env keys
    return {table: _section_model(table, defaults.get(table, {})) for table in SEED_TABLES}


SEED_TABLES: tuple[str, ...] = (
    "entry_gate", "exit_gate", "context", "recall", "identity", "goals", "consolidation",
    "compulsion_safety", "intentions", "idle", "night_cycle", "retention", "monitors",
    "emotion", "cognitive_models", "principles",
    "workflows", "self_test", "predictions", "decisions", "hook",
)
SECTIONS = _sections()  # one model per seed table, typed from config/default.toml

if TYPE_CHECKING:  # the models are made from default.toml when cogd starts
    EntryGateSection: TypeAlias = Section
    ExitGateSection: TypeAlias = Section
    ContextSection: TypeAlias = Section
    RecallSection: TypeAlias = Section
    IdentitySection: TypeAlias = Section
    GoalsSection: TypeAlias = Section
    ConsolidationSection: TypeAlias = Section
    CompulsionSafetySection: TypeAlias = Section
    IntentionsSection: TypeAlias = Section
    IdleSection: TypeAlias = Section
    NightCycleSection: TypeAlias = Section
    RetentionSection: TypeAlias = Section
    MonitorsSection: TypeAlias = Section
    EmotionSection: TypeAlias = Section
    WorkflowsSection: TypeAlias = Section
    SelfTestSection: TypeAlias = Section
    CognitiveModelsSection: TypeAlias = Section
    PrinciplesSection: TypeAlias = Section
    PredictionsSection: TypeAlias = Section
    DecisionsSection: TypeAlias = Section
    HookSection: TypeAlias = Section
else:
    EntryGateSection, ExitGateSection, ContextSection, RecallSection = (
        SECTIONS[t] for t in ("entry_gate", "exit_gate", "context", "recall"))
    IdentitySection, GoalsSection, ConsolidationSection, CompulsionSafetySection = (
        SECTIONS[t] for t in ("identity", "goals", "consolidation", "compulsion_safety"))
    IntentionsSection, IdleSection, NightCycleSection, RetentionSection = (
        SECTIONS[t] for t in ("intentions", "idle", "night_cycle", "retention"))
    MonitorsSection = SECTIONS["monitors"]
    EmotionSection = SECTIONS["emotion"]
    WorkflowsSection, SelfTestSection = SECTIONS["workflows"], SECTIONS["self_test"]
    CognitiveModelsSection = SECTIONS["cognitive_models"]
    PrinciplesSection = SECTIONS["principles"]
    PredictionsSection, DecisionsSection = SECTIONS["predictions"], SECTIONS["decisions"]
    HookSection = SECTIONS["hook"]

class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="COGD_",
        env_nested_delimiter="__",
        extra="ignore",
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("COGD_DATABASE_URL", "DATABASE_URL")
    )
    # the URL the daemon's processes log in with (as cogd_app); unset: DATABASE_URL, with
    # SET ROLE [database] app_role. The embedded server needs neither.
    app_database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("COGD_APP_DATABASE_URL"))
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    cortex: CortexSettings = Field(default_factory=CortexSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    reranker: RerankerSettings = Field(default_factory=RerankerSettings)
    bus: BusSettings = Field(default_factory=BusSettings)
    process: ProcessSettings = Field(default_factory=ProcessSettings)
    # the seed tables: typed sections, every key from config/default.toml
    entry_gate: EntryGateSection
    exit_gate: ExitGateSection
    context: ContextSection
    recall: RecallSection
    identity: IdentitySection
    goals: GoalsSection
    consolidation: ConsolidationSection
    compulsion_safety: CompulsionSafetySection
    intentions: IntentionsSection
    idle: IdleSection
    night_cycle: NightCycleSection
    retention: RetentionSection
    monitors: MonitorsSection
    emotion: EmotionSection
    workflows: WorkflowsSection
    self_test: SelfTestSection
    cognitive_models: CognitiveModelsSection
    principles: PrinciplesSection
    predictions: PredictionsSection
    decisions: DecisionsSection
    hook: HookSection

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # one source per file, the user's first: pydantic-settings merges sources key by
        # key (a file that sets one [recall] value keeps every other default), where two
        # files in one source would replace each other's tables whole
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        user = os.environ.get("COGD_CONFIG")
        if user:
            if not Path(user).is_file():
                raise ConfigError(f"COGD_CONFIG={user} does not exist or is not a file")
            sources.append(TomlConfigSettingsSource(settings_cls, Path(user)))
        sources.append(TomlConfigSettingsSource(settings_cls, default_config_path()))
        return tuple(sources)

    def role_profile(self, role: str) -> tuple[str, LLMProfile]:
        """The profile name and profile a role routes to."""
        if role not in ROLES:
            raise ConfigError(f"unknown role {role!r}; valid roles: {', '.join(ROLES)}")
        name = self.llm.roles.get(role, "default")
        if name not in self.llm.profiles:
            valid = ", ".join(sorted(self.llm.profiles)) or "(none)"
            raise ConfigError(
                f"role {role} routes to LLM profile {name!r}, which is not defined; "
                f"defined profiles: {valid}"
            )
        return name, self.llm.profiles[name]


def _section_env_values() -> None:
    """A section named whole in the environment (COGD_LLM=null) is not a setting:
    pydantic-settings would silently ignore a value that is not a JSON object, so the
    user would believe the LLM was switched off. Sections take COGD_<SECTION>__<KEY>."""
    sections = {name.upper() for name, field in Settings.model_fields.items()
                if isinstance(field.annotation, type) and issubclass(field.annotation,
                                                                     BaseModel)}
    for name, value in os.environ.items():
        if name.startswith("COGD_") and name[5:] in sections:
            try:
                ok = isinstance(json.loads(value), dict)
            except ValueError:
                ok = False
            if not ok:
                raise ConfigError(
                    f"{name}={value!r}: [{name[5:].lower()}] is a section of settings, not "
                    f"one value; set one key as {name}__<KEY>=<value> (for example "
                    "COGD_LLM__ROLES__SYSTEM1=heuristic)")


def load_settings(**overrides: Any) -> Settings:
    """Build settings or raise ConfigError with a readable message."""
    _section_env_values()
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(_explain(exc)) from None
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML
        where = os.environ.get("COGD_CONFIG") or str(default_config_path())
        raise ConfigError(f"could not read the configuration file {where}: {exc}") from None
    _validate(settings)
    return settings


def _coerce(key: str, value: Any, default: Any) -> Any:
    """`value` as the type of config/default.toml's `default` (env vars arrive as text);
    a number whose default is not negative must not be negative."""
    def bad(expected: str) -> ConfigError:
        return ConfigError(f"invalid configuration: {key}: expected {expected}, got {value!r}")

    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false",
                                                               "0", "no"):
            return value.strip().lower() in ("true", "1", "yes")
        raise bad("true or false")
    if isinstance(default, int | float):
        number: Any = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                raise bad("a number") from None
        if isinstance(number, bool) or not isinstance(number, int | float) or number != number \
                or number in (float("inf"), float("-inf")):
            raise bad("a number")
        if isinstance(default, int) and not float(number).is_integer():
            raise bad("a whole number")
        if default >= 0 > number:
            raise bad("a number >= 0")
        return int(number) if isinstance(default, int) else float(number)
    if isinstance(default, list):
        items = value
        if isinstance(value, str):
            try:
                items = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                raise bad("a list, e.g. [1, 2]") from None
        numbers = bool(default) and all(isinstance(d, int | float) and not isinstance(d, bool)
                                        for d in default)
        if not isinstance(items, list):
            raise bad(f"a list of {len(default)} numbers like {default}" if numbers
                      else "a list")
        if numbers:
            if len(items) != len(default):  # bands, windows: positions have meanings
                raise bad(f"a list of {len(default)} numbers like {default}")
            return [_coerce(f"{key}[{i}]", v, d) for i, (v, d) in
                    enumerate(zip(items, default, strict=True))]
        return items
    if isinstance(default, str):
        if not isinstance(value, str):
            raise bad("text")
        return value
    return value


def _explain(exc: ValidationError) -> str:
    """One line for what is wrong; a table's unknown key, or a seed table's missing key,
    by name."""
    errors = exc.errors()
    for kind in ("extra_forbidden", "missing"):
        bad = [".".join(str(p) for p in e["loc"]) for e in errors if e["type"] == kind
               and len(e["loc"]) == 2
               and (e["loc"][0] in SEED_TABLES or kind == "extra_forbidden")]
        if not bad:
            continue
        table, key = bad[0].split(".", 1)
        also = f"; also {'unknown' if kind == 'extra_forbidden' else 'missing'}: " \
            + ", ".join(bad[1:]) if bad[1:] else ""
        if kind == "extra_forbidden":
            if f"{table}.{key}" in MOVED_KEYS:
                return (f"{table}.{key} moved: set {MOVED_KEYS[f'{table}.{key}']} instead "
                        f"(config/default.toml){also}")
            return (f"{table}.{key}: unknown key: config/default.toml has no [{table}] {key}, "
                    "so it would have no effect (keys marked 'not read yet' there are not "
                    f"used either){also}")
        return (f"{table}.{key}: missing; [{table}] must keep every key of "
                f"config/default.toml (set single keys instead){also}")
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)
    return f"invalid configuration: {problems}"


def _validate(settings: Settings) -> None:
    emb = settings.embedding
    if emb.native_provider not in EMBEDDING_PROVIDERS:
        raise ConfigError(
            f"unknown embedding provider {emb.native_provider!r}; "
            f"valid providers: {', '.join(EMBEDDING_PROVIDERS)}"
        )
    for dim_name in ("universal_dim", "native_dim"):
        dim = getattr(emb, dim_name)
        if not 1 <= dim <= 4000:
            raise ConfigError(f"embedding.{dim_name}={dim} must be between 1 and 4000")
    for ef_search in settings.recall["hnsw_ef_search"]:
        if not 1 <= ef_search <= 1000:  # pgvector's range; recall would otherwise skip it
            raise ConfigError(f"recall.hnsw_ef_search={ef_search} must be between 1 and 1000")
    sizes = settings.recall["hnsw_ef_search_sizes"]
    if any(b <= a for a, b in zip([0, *sizes], sizes, strict=False)):
        raise ConfigError(f"recall.hnsw_ef_search_sizes={sizes} must be increasing sizes "
                          "of at least 1 memory")
    if settings.recall["fusion"] not in ("learned", "rrf"):
        raise ConfigError(f"recall.fusion={settings.recall['fusion']!r} must be \"learned\" "
                          "or \"rrf\"")
    if settings.recall["adjacent_turns"] not in ("off", "next", "both"):
        raise ConfigError(f"recall.adjacent_turns={settings.recall['adjacent_turns']!r} must "
                          "be \"off\", \"next\" or \"both\"")
    if settings.recall["bm25_term_depth"] < 1:
        raise ConfigError("recall.bm25_term_depth must be at least 1 (postings read per term)")
    for start, end in zip(settings.recall["sweep_window_start_days"],  # seed 000 §4.6.1
                          settings.recall["sweep_window_end_days"], strict=True):
        if not 0 <= start < end:
            raise ConfigError(f"recall.sweep window {start}-{end} days: a window starts at "
                              "0 days or later and before it ends (sweep_window_start_days, "
                              "sweep_window_end_days)")
    for name, profile in settings.llm.profiles.items():
        if profile.provider not in LLM_PROVIDERS:
            raise ConfigError(
                f"LLM profile {name!r}: unknown provider {profile.provider!r}; "
                f"valid providers: {', '.join(LLM_PROVIDERS)}"
            )
    for role in settings.llm.roles:
        if role in RETIRED_ROLES:
            raise ConfigError(
                f"llm.roles: role {role!r} was removed, as nothing ever used it "
                f"({RETIRED_ROLES[role]}); delete it from your configuration")
        if role not in ROLES:
            raise ConfigError(f"llm.roles: unknown role {role!r}; valid roles: {', '.join(ROLES)}")
