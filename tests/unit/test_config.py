"""Settings: defaults from config/default.toml, env overrides, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config import load_settings
from agent.errors import ConfigError


def test_defaults_come_from_default_toml(tmp_path: Path) -> None:
    s = load_settings(data_dir=tmp_path)
    assert s.embedding.universal_dim == 384
    assert s.embedding.native_provider == "local"
    assert s.data_dir == tmp_path


def test_env_overrides_nested_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGD_EMBEDDING__NATIVE_DIM", "1024")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@h/db")
    s = load_settings(data_dir=tmp_path)
    assert s.embedding.native_dim == 1024
    assert s.database_url == "postgresql://u@h/db"


def test_user_config_file_overrides_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "mine.toml"
    user.write_text("[retry]\nmax_retries = 7\n")
    monkeypatch.setenv("COGD_CONFIG", str(user))
    s = load_settings(data_dir=tmp_path)
    assert s.retry.max_retries == 7
    assert s.embedding.universal_dim == 384  # untouched keys keep their defaults


def test_missing_user_config_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGD_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match=r"nope\.toml does not exist"):
        load_settings(data_dir=tmp_path)


def test_malformed_user_config_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "bad.toml"
    user.write_text("[retry\nmax_retries = ")
    monkeypatch.setenv("COGD_CONFIG", str(user))
    with pytest.raises(ConfigError, match="could not read configuration"):
        load_settings(data_dir=tmp_path)


def test_wrong_type_names_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGD_RETRY__MAX_RETRIES", "many")
    with pytest.raises(ConfigError, match=r"retry\.max_retries"):
        load_settings(data_dir=tmp_path)


def test_unknown_embedding_provider_lists_valid_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGD_EMBEDDING__NATIVE_PROVIDER", "cohere")
    with pytest.raises(ConfigError, match="valid providers: local, openai, gemini"):
        load_settings(data_dir=tmp_path)


def test_dimension_out_of_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGD_EMBEDDING__UNIVERSAL_DIM", "0")
    with pytest.raises(ConfigError, match="universal_dim=0"):
        load_settings(data_dir=tmp_path)


def test_unknown_role_is_refused(tmp_path: Path) -> None:
    s = load_settings(data_dir=tmp_path)
    with pytest.raises(ConfigError, match="valid roles"):
        s.role_profile("poet")
