"""Settings: defaults from config/default.toml, env overrides, clear errors."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from agent.config import default_config_path, load_settings
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


def test_a_user_file_that_sets_one_key_of_a_table_keeps_the_rest_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Merged key by key: [recall] top_k = 5 leaves the calibrated thresholds and every
    other recall default in place (the files used to replace each other's tables whole,
    which left the domain's uncalibrated dataclass defaults)."""
    import tomllib

    from agent.config import default_config_path

    defaults = tomllib.loads(default_config_path().read_text())
    user = tmp_path / "mine.toml"
    user.write_text('[recall]\ntop_k = 5\n[llm.roles]\nsystem1 = "heuristic"\n')
    monkeypatch.setenv("COGD_CONFIG", str(user))
    s = load_settings(data_dir=tmp_path)
    assert s.recall == {**defaults["recall"], "top_k": 5}
    assert s.llm.roles == {**defaults["llm"]["roles"], "system1": "heuristic"}


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
    with pytest.raises(ConfigError, match="could not read the configuration file") as err:
        load_settings(data_dir=tmp_path)
    assert str(user) in str(err.value)


@pytest.mark.parametrize(("env", "value", "message"), [
    ("COGD_RECALL__RRF_K", "abc", "recall.rrf_k: expected a number, got 'abc'"),
    ("COGD_RECALL__TOP_K", "-5", "recall.top_k: expected a number >= 0"),
    ("COGD_RECALL__TOP_K", "2.5", "recall.top_k: expected a whole number"),
    ("COGD_EXIT_GATE__CONTRADICTION_BAND", "[0.5]", "a list of 2 numbers like [0.5, 0.85]"),
    ("COGD_MONITORS__STAKES_ALWAYS_ESCALATE", "maybe", "expected true or false"),
    ("COGD_RETRY__MAX_RETRIES", "-1", "retry.max_retries"),
    ("COGD_RETRY__JITTER", "2", "retry.jitter"),
])
def test_seed_table_values_of_the_wrong_type_or_sign_are_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str, value: str, message: str,
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings(data_dir=tmp_path)


def test_seed_table_values_from_env_take_their_default_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGD_RECALL__RRF_K", "61")
    monkeypatch.setenv("COGD_RECALL__STRONG_MATCH_MIN_SCORE", "0.6")
    monkeypatch.setenv("COGD_EXIT_GATE__CONTRADICTION_BAND", "[0.4, 0.9]")
    s = load_settings(data_dir=tmp_path)
    assert s.recall["rrf_k"] == 61 and isinstance(s.recall["rrf_k"], int)
    assert s.recall["strong_match_min_score"] == 0.6
    assert s.exit_gate["contradiction_band"] == [0.4, 0.9]


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


def test_an_unknown_key_in_a_seed_table_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo would otherwise have no effect and say nothing."""
    user = tmp_path / "mine.toml"
    user.write_text("[recall]\ntop_kk = 5\n")
    monkeypatch.setenv("COGD_CONFIG", str(user))
    with pytest.raises(ConfigError, match=r"recall\.top_kk: unknown key"):
        load_settings(data_dir=tmp_path)
    monkeypatch.delenv("COGD_CONFIG")
    monkeypatch.setenv("COGD_ENTRY_GATE__EXPLICIT_MARKR", "0.4")
    with pytest.raises(ConfigError, match=r"entry_gate\.explicit_markr: unknown key"):
        load_settings(data_dir=tmp_path)


def test_an_unknown_database_key_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[database] too: a misspelt embedded_shared_buffers, or the retired hnsw_m (the
    index parameters live in the migrations), would otherwise be dropped silently."""
    user = tmp_path / "mine.toml"
    monkeypatch.setenv("COGD_CONFIG", str(user))
    for key in ("embedded_shared_bufers", "hnsw_m"):
        user.write_text(f"[database]\n{key} = 16\n")
        with pytest.raises(ConfigError, match=rf"database\.{key}: unknown key"):
            load_settings(data_dir=tmp_path)
    user.write_text('[database]\nembedded_shared_buffers = "1GB"\n')
    assert load_settings(data_dir=tmp_path).database.embedded_shared_buffers == "1GB"


def test_each_seed_table_is_a_typed_section_made_from_default_toml(tmp_path: Path) -> None:
    """Settings.recall is a pydantic model whose fields are [recall]'s keys, typed as
    their values in default.toml, all required; assignment is checked the same way."""
    from pydantic import BaseModel

    from agent.config import SECTIONS, SEED_TABLES

    defaults = tomllib.loads(default_config_path().read_text())
    s = load_settings(data_dir=tmp_path)
    for table in SEED_TABLES:
        section = getattr(s, table)
        assert isinstance(section, SECTIONS[table]) and isinstance(section, BaseModel)
        fields = type(section).model_fields
        assert set(fields) == set(defaults[table])
        assert all(f.is_required() for f in fields.values())
        assert dict(section) == defaults[table]
    assert type(s.recall).__name__ == "RecallSection"
    s.recall["rrf_k"] = "61"  # validated on assignment: text becomes the default's type
    assert s.recall.rrf_k == 61 and isinstance(s.recall["rrf_k"], int)
    with pytest.raises(ConfigError, match=r"recall\.rrf_k: expected a number >= 0"):
        s.recall["rrf_k"] = -1
    with pytest.raises(KeyError):
        s.recall["rrf_kk"] = 1


@pytest.mark.parametrize(("env", "value", "message"), [
    ("COGD_RECALL__HNSW_EF_SEARCH", "[0, 600, 800]",
     r"recall\.hnsw_ef_search=0 must be between 1 and 1000"),
    ("COGD_RECALL__HNSW_EF_SEARCH", "[200, 600, 5000]",
     r"recall\.hnsw_ef_search=5000 must be between 1 and 1000"),
    ("COGD_RECALL__HNSW_EF_SEARCH", "400",
     r"recall\.hnsw_ef_search: expected a list of 3 numbers like \[200, 400, 400\], got 400"),
    ("COGD_RECALL__HNSW_EF_SEARCH_SIZES", "[300000, 100000]",
     r"recall\.hnsw_ef_search_sizes=\[300000, 100000\] must be increasing sizes"),
    ("COGD_RECALL__HNSW_EF_SEARCH_SIZES", "[0, 100000]",
     r"recall\.hnsw_ef_search_sizes=\[0, 100000\] must be increasing sizes"),
    ("COGD_RECALL__BM25_TERM_DEPTH", "0", r"recall\.bm25_term_depth must be at least 1"),
    ("COGD_RECALL__LINK_SEED_RANK", "-1", r"recall\.link_seed_rank: expected a number >= 0"),
    ("COGD_RECALL__ADJACENT_TURNS", "pairs",
     r"recall\.adjacent_turns='pairs' must be \"off\", \"next\" or \"both\""),
    ("COGD_RECALL__SWEEP_WINDOW_END_DAYS", "[14, 10, 90, 36500]",
     r"recall\.sweep window 14\.?0?-10\.?0? days: a window starts"),
    ("COGD_RECALL__SWEEP_ITEMS_PER_WINDOW", "[2, 2]",
     r"recall\.sweep_items_per_window: expected a list of 4 numbers"),
])
def test_recall_index_settings_out_of_range_are_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str, value: str, message: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError, match=message):
        load_settings(data_dir=tmp_path)


@pytest.mark.parametrize("name,value", [("COGD_LLM", "null"), ("COGD_LLM", "off"),
                                        ("COGD_RECALL", "[1, 2]")])
def test_a_whole_section_set_from_the_environment_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    """COGD_LLM=null was silently ignored (pydantic-settings drops a value that is not a
    JSON object): the user believed the LLM was off. Now it names the way to set a key."""
    monkeypatch.setenv("COGD_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=rf"{name}=.*{name}__<KEY>=<value>"):
        load_settings()


def test_a_section_given_as_a_json_object_still_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGD_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COGD_LLM", '{"roles": {"system1": "heuristic"}}')
    assert load_settings().llm.roles["system1"] == "heuristic"
