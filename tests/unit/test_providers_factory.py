"""The factory: config names → adapters, and the errors a user can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config import Settings, load_settings
from agent.errors import ConfigError
from agent.providers import factory
from agent.providers.heuristic import HeuristicLLM
from agent.providers.ports import LLM, Embedder, Endpoint, Reranker


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for var in ("OPENAI_API_KEY", "GEMINI_API_KEY", "MY_KEY", "COGD_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return load_settings(data_dir=tmp_path)


def test_universal_embedder_is_the_frozen_local_model(settings: Settings) -> None:
    emb = factory.build_universal_embedder(settings)
    assert isinstance(emb, Embedder)
    assert emb.model_id == "local:all-MiniLM-L6-v2-int8" and emb.dim == 384


def test_local_embedder_refuses_a_model_it_does_not_have(settings: Settings) -> None:
    settings.embedding.native_model = "bge-large"
    with pytest.raises(ConfigError, match="local embedding model is all-MiniLM-L6-v2-int8"):
        factory.build_native_embedder(settings)


def test_unknown_embedding_provider_lists_the_valid_ones(settings: Settings) -> None:
    settings.embedding.native_provider = "cohere"
    with pytest.raises(ConfigError, match="valid providers: local, openai, gemini"):
        factory.build_native_embedder(settings)


def test_unknown_llm_provider_lists_the_valid_ones(settings: Settings) -> None:
    settings.llm.profiles["local"].provider = "anthropic"
    settings.llm.roles["system1"] = "local"
    with pytest.raises(ConfigError, match="valid providers: local, openai, gemini, heuristic"):
        factory.build_llm(settings, "system1")


@pytest.mark.parametrize(("provider", "env"), [("openai", "OPENAI_API_KEY"),
                                               ("gemini", "GEMINI_API_KEY")])
def test_cloud_llm_without_its_key_names_the_env_var(
    settings: Settings, provider: str, env: str
) -> None:
    settings.llm.profiles[provider].api_key_env = None
    settings.llm.roles["system2"] = provider
    with pytest.raises(ConfigError, match=f"set the environment variable {env}"):
        factory.build_llm(settings, "system2")


def test_cloud_embedder_without_its_key_names_the_env_var(settings: Settings) -> None:
    settings.embedding.native_provider = "gemini"
    settings.embedding.native_api_key_env = "MY_KEY"
    with pytest.raises(ConfigError, match="MY_KEY"):
        factory.build_native_embedder(settings)


def test_key_present_builds_and_never_shows_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    settings.llm.roles["consolidation"] = "openai"
    llm = factory.build_llm(settings, "consolidation")
    assert isinstance(llm, LLM) and llm.provider == "openai" and llm.model == "gpt-4o-mini"
    assert "sk-very-secret" not in repr(Endpoint("openai", "sk-very-secret", None, "X"))


def test_loopback_openai_compatible_server_needs_no_key(settings: Settings) -> None:
    endpoint = factory.endpoint_for("openai", None, "http://127.0.0.1:11434/v1")
    assert endpoint.api_key == "unused" and endpoint.key_env == "OPENAI_API_KEY"


def test_roles_route_to_their_profiles(settings: Settings) -> None:
    settings.llm.roles["night_cycle"] = "heuristic"
    llm = factory.build_llm(settings, "night_cycle")
    assert isinstance(llm, HeuristicLLM) and llm.role == "night_cycle"
    local = factory.build_llm(settings, "system1")
    assert local.provider == "local"
    with pytest.raises(ConfigError, match="valid roles"):
        factory.build_llm(settings, "poet")


def test_local_llm_without_its_runtime_suggests_the_heuristic(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = factory.importlib.util.find_spec
    monkeypatch.setattr(
        factory.importlib.util, "find_spec",
        lambda name, *a: None if name == "xllamacpp" else real(name, *a),
    )
    with pytest.raises(ConfigError, match='provider = "heuristic"'):
        factory.build_llm(settings, "system1")


def test_reranker_is_disabled_and_says_why(settings: Settings) -> None:
    rr = factory.build_reranker(settings)
    assert isinstance(rr, Reranker) and not rr.enabled
    expected = f"disabled: model ms-marco-MiniLM-L-12-v2 not in {settings.data_dir / 'flashrank'}"
    assert rr.status.startswith(expected)
    assert factory.reranker_status(settings) == rr.status
    settings.reranker.enabled = False
    assert factory.reranker_status(settings) == "disabled: reranker.enabled = false"
    settings.reranker.enabled = True
    settings.reranker.model = "rank_zephyr_7b_v1_full"
    assert "not a FlashRank cross-encoder" in factory.reranker_status(settings)
