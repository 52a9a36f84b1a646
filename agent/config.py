"""Settings: config/default.toml, then an optional user TOML, then COGD_* env vars.

Nothing here runs at import time; `load_settings()` is called from `main()`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, ValidationError
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
ROLES: tuple[str, ...] = ("system1", "system2", "gate", "consolidation", "dmn", "night_cycle")


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


class DatabaseSettings(BaseModel):
    application_name_prefix: str = "cogd"
    connect_timeout_s: float = 5.0
    app_role: str = "cogd_app"
    # HNSW build parameters, read at migration time
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64


class EmbeddingSettings(BaseModel):
    universal_model: str = "all-MiniLM-L6-v2-int8"
    universal_dim: int = 384
    native_provider: str = "local"
    native_model: str = "all-MiniLM-L6-v2-int8"
    native_dim: int = 384
    native_base_url: str | None = None
    native_api_key_env: str | None = None
    batch_size: int = 64
    max_chars: int = 8000


class LLMProfile(BaseModel):
    provider: str = "heuristic"
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.7
    max_tokens: int = 256
    timeout_s: float = 60.0


class LLMSettings(BaseModel):
    profiles: dict[str, LLMProfile] = Field(default_factory=dict)
    roles: dict[str, str] = Field(default_factory=dict)


class RetrySettings(BaseModel):
    max_retries: int = 3
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.5


class RerankerSettings(BaseModel):
    enabled: bool = True
    model: str = "ms-marco-MiniLM-L-12-v2"
    cache_dir: str | None = None


class BusSettings(BaseModel):
    listen_timeout_s: float = 1.0
    keepalive_s: float = 30.0
    poll_interval_s: float = 5.0
    reconnect_delay_s: float = 1.0


class ProcessSettings(BaseModel):
    heartbeat_interval_s: float = 5.0
    stale_after_s: float = 30.0
    prune_after_s: float = 3600.0
    shutdown_grace_s: float = 10.0
    restart_backoff_initial_s: float = 1.0
    restart_backoff_max_s: float = 30.0
    restart_stable_after_s: float = 10.0


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
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    reranker: RerankerSettings = Field(default_factory=RerankerSettings)
    bus: BusSettings = Field(default_factory=BusSettings)
    process: ProcessSettings = Field(default_factory=ProcessSettings)
    # seed weights consumed by later subsystems; kept as plain tables until used
    entry_gate: dict[str, Any] = Field(default_factory=dict)
    exit_gate: dict[str, Any] = Field(default_factory=dict)
    context: dict[str, Any] = Field(default_factory=dict)
    recall: dict[str, Any] = Field(default_factory=dict)
    identity: dict[str, Any] = Field(default_factory=dict)
    goals: dict[str, Any] = Field(default_factory=dict)
    consolidation: dict[str, Any] = Field(default_factory=dict)
    compulsion_safety: dict[str, Any] = Field(default_factory=dict)
    intentions: dict[str, Any] = Field(default_factory=dict)
    idle: dict[str, Any] = Field(default_factory=dict)
    night_cycle: dict[str, Any] = Field(default_factory=dict)
    retention: dict[str, Any] = Field(default_factory=dict)
    monitors: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        files: list[Path] = [default_config_path()]
        user = os.environ.get("COGD_CONFIG")
        if user:
            if not Path(user).is_file():
                raise ConfigError(f"COGD_CONFIG={user} does not exist or is not a file")
            files.append(Path(user))
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, files))

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


def load_settings(**overrides: Any) -> Settings:
    """Build settings or raise ConfigError with a readable message."""
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from None
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML
        raise ConfigError(f"could not read configuration: {exc}") from None
    _validate(settings)
    return settings


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
    for name, profile in settings.llm.profiles.items():
        if profile.provider not in LLM_PROVIDERS:
            raise ConfigError(
                f"LLM profile {name!r}: unknown provider {profile.provider!r}; "
                f"valid providers: {', '.join(LLM_PROVIDERS)}"
            )
    for role in settings.llm.roles:
        if role not in ROLES:
            raise ConfigError(f"llm.roles: unknown role {role!r}; valid roles: {', '.join(ROLES)}")
