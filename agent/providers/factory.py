"""The one place a provider name in config becomes an adapter."""

from __future__ import annotations

import importlib.util
import os
from typing import Any
from urllib.parse import urlparse

from agent.config import EMBEDDING_PROVIDERS, LLM_PROVIDERS, Settings
from agent.errors import ConfigError
from agent.providers.ports import (
    LLM,
    CallRecorder,
    Embedder,
    Endpoint,
    NullRecorder,
    Reranker,
)
from agent.providers.rerank import reranker_status
from agent.providers.retry import RetryPolicy

DEFAULT_KEY_ENV: dict[str, str] = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}

__all__ = [
    "build_llm",
    "build_native_embedder",
    "build_reranker",
    "build_universal_embedder",
    "endpoint_for",
    "reranker_status",
]


def endpoint_for(
    provider: str, key_env: str | None, base_url: str | None, timeout_s: float = 60.0
) -> Endpoint:
    """The Endpoint of a cloud provider, or ConfigError naming the missing key's env var."""
    env = key_env or DEFAULT_KEY_ENV[provider]
    key = os.environ.get(env, "").strip()
    if not key:
        host = urlparse(base_url).hostname if base_url else None
        if host in _LOOPBACK:
            key = "unused"  # local OpenAI-compatible servers (Ollama, llama.cpp) ignore the key
        else:
            where = f"base_url {base_url}" if base_url else "its default endpoint"
            raise ConfigError(
                f"provider {provider} ({where}) needs an API key: set the environment "
                f"variable {env} (or name another one with api_key_env)"
            )
    return Endpoint(provider, key, base_url, env, timeout_s)


def _local_embedder(settings: Settings, recorder: CallRecorder, role: str) -> Embedder:
    from agent.providers.local import LOCAL_EMBED_DIM, LOCAL_EMBED_NAME, LocalEmbedder

    emb = settings.embedding
    model = emb.universal_model if role == "universal" else emb.native_model
    dim = emb.universal_dim if role == "universal" else emb.native_dim
    if model != LOCAL_EMBED_NAME or dim != LOCAL_EMBED_DIM:
        raise ConfigError(
            f"the local embedding model is {LOCAL_EMBED_NAME} ({LOCAL_EMBED_DIM} dimensions); "
            f"the configuration asks for {model} ({dim}) for the {role} embedding"
        )
    return LocalEmbedder(
        batch_size=emb.batch_size, max_chars=emb.max_chars, recorder=recorder, role=role,
        query_threads=emb.local_query_threads or None,
        query_spin="within" if emb.local_query_spin else "never",
    )


def build_universal_embedder(settings: Settings, recorder: CallRecorder | None = None) -> Embedder:
    """The frozen local model used for navigation (never a cloud model)."""
    return _local_embedder(settings, recorder or NullRecorder(), "universal")


def build_native_embedder(settings: Settings, recorder: CallRecorder | None = None) -> Embedder:
    """The configured provider's embedding model (embedding.native_*)."""
    emb = settings.embedding
    recorder = recorder or NullRecorder()
    provider = emb.native_provider
    if provider == "local":
        return _local_embedder(settings, recorder, "native")
    if provider not in EMBEDDING_PROVIDERS:
        raise ConfigError(
            f"unknown embedding provider {provider!r}; "
            f"valid providers: {', '.join(EMBEDDING_PROVIDERS)}"
        )
    endpoint = endpoint_for(provider, emb.native_api_key_env, emb.native_base_url)
    policy = RetryPolicy.from_settings(settings.retry)
    kw: dict[str, Any] = {
        "batch_size": emb.batch_size, "max_chars": emb.max_chars, "policy": policy,
        "recorder": recorder, "role": "native",
    }
    if provider == "openai":
        from agent.providers.openai import OpenAIEmbedder

        return OpenAIEmbedder(endpoint, emb.native_model, emb.native_dim, **kw)
    from agent.providers.gemini import GeminiEmbedder

    return GeminiEmbedder(endpoint, emb.native_model, emb.native_dim, **kw)


def build_llm(settings: Settings, role: str, recorder: CallRecorder | None = None) -> LLM:
    """The LLM a role routes to (llm.roles → llm.profiles)."""
    name, profile = settings.role_profile(role)
    recorder = recorder or NullRecorder()
    provider = profile.provider
    common: dict[str, Any] = {"max_tokens": profile.max_tokens, "recorder": recorder, "role": role}
    if provider == "heuristic":
        from agent.providers.heuristic import HeuristicLLM

        return HeuristicLLM(**common)
    if provider == "local":
        if importlib.util.find_spec("xllamacpp") is None:
            raise ConfigError(
                f"LLM profile {name!r} uses the local model, but xllamacpp (llama.cpp) is not "
                "installed: install it, or route the role to a profile with "
                'provider = "heuristic" (the extractive fallback)'
            )
        from pathlib import Path

        from agent.providers.local import Decoding, LocalLLM

        decoding = Decoding(
            repeat_penalty=profile.repeat_penalty, frequency_penalty=profile.frequency_penalty,
            presence_penalty=profile.presence_penalty, repeat_last_n=profile.repeat_last_n,
            stop=tuple(profile.stop), guard=profile.repetition_guard)
        return LocalLLM(
            model_path=Path(profile.model_path).expanduser() if profile.model_path else None,
            temperature=profile.temperature, decoding=decoding, threads=profile.threads,
            poll=profile.poll, **common)
    if provider not in LLM_PROVIDERS:
        raise ConfigError(
            f"LLM profile {name!r}: unknown provider {provider!r}; "
            f"valid providers: {', '.join(LLM_PROVIDERS)}"
        )
    if not profile.model:
        raise ConfigError(f"LLM profile {name!r} ({provider}) needs a model name")
    endpoint = endpoint_for(provider, profile.api_key_env, profile.base_url, profile.timeout_s)
    policy = RetryPolicy.from_settings(settings.retry)
    if provider == "openai":
        from agent.providers.openai import OpenAILLM

        return OpenAILLM(
            endpoint, profile.model, temperature=profile.temperature, policy=policy, **common
        )
    from agent.providers.gemini import GeminiLLM

    return GeminiLLM(
        endpoint, profile.model, temperature=profile.temperature, policy=policy, **common
    )


def build_reranker(settings: Settings, recorder: CallRecorder | None = None) -> Reranker:
    """FlashRank when its model is in the cache dir; otherwise a disabled pass-through."""
    from agent.providers.rerank import DisabledReranker, FlashRankReranker, reranker_cache_dir

    status = reranker_status(settings)
    if not status.startswith("enabled"):
        return DisabledReranker(status)
    return FlashRankReranker(
        settings.reranker.model, reranker_cache_dir(settings), recorder or NullRecorder()
    )
