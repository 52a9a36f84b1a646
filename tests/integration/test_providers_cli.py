"""`cogd models`, `cogd embed`, `cogd ask` through click, against the stub server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent.cli import cli
from agent.errors import ConfigError, InputError
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for var in ("OPENAI_API_KEY", "GEMINI_API_KEY", "COGD_CONFIG", "DATABASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return {"COGD_DATA_DIR": str(tmp_path)}


def invoke(args: list[str], env: dict[str, str]) -> tuple[int, str, BaseException | None]:
    result = CliRunner().invoke(cli, args, env=env)
    return result.exit_code, result.output, result.exception


def test_ask_heuristic_json_says_fallback(env: dict[str, str]) -> None:
    env["COGD_LLM__ROLES__CONSOLIDATION"] = "heuristic"
    code, out, exc = invoke(["ask", "--role", "consolidation", "--json", "anything at all?"], env)
    assert code == 0, (out, exc)
    data = json.loads(out)
    assert data["fallback"] is True and data["text"].startswith("[heuristic fallback] ")
    assert data["provider"] == "heuristic" and data["calls"][0]["role"] == "consolidation"


def test_ask_streams_from_an_openai_compatible_server(
    env: dict[str, str], stub_server: StubServer
) -> None:
    env.update({"OPENAI_API_KEY": "sk-cli", "COGD_LLM__ROLES__SYSTEM1": "openai",
                "COGD_LLM__PROFILES__OPENAI__BASE_URL": stub_server.openai_base_url,
                "COGD_LLM__PROFILES__OPENAI__MODEL": "stub-chat"})
    code, out, exc = invoke(["ask", "where are my keys"], env)
    assert code == 0, (out, exc)
    assert out.strip() == "The stub heard you say where are my keys. That is all it knows."
    assert stub_server.requests[-1].body["stream"] is True
    code, out, _ = invoke(["ask", "--no-stream", "--json", "where are my keys"], env)
    data = json.loads(out)
    assert data["logprobs"] and data["calls"][0]["kind"] == "chat"
    assert data["usage"]["tokens_in"] > 0 and "sk-cli" not in out


def test_embed_universal_and_native(env: dict[str, str], stub_server: StubServer) -> None:
    code, out, exc = invoke(["embed", "--json", "hello world"], env)
    assert code == 0, (out, exc)
    data = json.loads(out)
    assert data["model_id"] == "local:all-MiniLM-L6-v2-int8" and len(data["vector"]) == 384
    code, out, _ = invoke(["embed", "hello world"], env)
    assert out.startswith("local:all-MiniLM-L6-v2-int8  dim=384  [")
    env.update({"OPENAI_API_KEY": "sk-cli", "COGD_EMBEDDING__NATIVE_PROVIDER": "openai",
                "COGD_EMBEDDING__NATIVE_MODEL": "stub-embed", "COGD_EMBEDDING__NATIVE_DIM": "8",
                "COGD_EMBEDDING__NATIVE_BASE_URL": stub_server.openai_base_url})
    code, out, exc = invoke(["embed", "--native", "--json", "hello world"], env)
    assert code == 0, (out, exc)
    data = json.loads(out)
    assert data["model_id"] == "openai:stub-embed" and data["dim"] == 8
    assert data["calls"][0]["provider"] == "openai"


def test_models_reports_each_role(env: dict[str, str], stub_server: StubServer) -> None:
    env.update({"OPENAI_API_KEY": "sk-cli", "COGD_LLM__ROLES__SYSTEM1": "openai",
                "COGD_LLM__PROFILES__OPENAI__BASE_URL": stub_server.openai_base_url,
                "COGD_LLM__PROFILES__OPENAI__MODEL": "stub-chat",
                "COGD_LLM__ROLES__NIGHT_CYCLE": "heuristic",
                "COGD_LLM__ROLES__CONSOLIDATION": "gemini",
                "GEMINI_API_KEY": "g", "COGD_LLM__PROFILES__GEMINI__BASE_URL": "http://127.0.0.1:9"})
    code, out, exc = invoke(["models", "--json"], env)
    assert code == 0, (out, exc)
    roles = {r["role"]: r for r in json.loads(out)["roles"]}
    assert roles["system1"]["reachable"] and roles["system1"]["detail"] == "2 models listed"
    assert roles["night_cycle"]["reachable"] and roles["night_cycle"]["provider"] == "heuristic"
    assert roles["system2"]["provider"] == "local" and roles["system2"]["reachable"]
    assert (not roles["consolidation"]["reachable"]
            and roles["consolidation"]["provider"] == "gemini")
    assert json.loads(out)["reranker"].startswith("disabled: model ms-marco-MiniLM-L-12-v2")
    code, out, _ = invoke(["models"], env)
    assert "system1" in out and "reranker      disabled" in out


def test_errors_are_cogd_errors(env: dict[str, str]) -> None:
    _, _, exc = invoke(["embed", "  \x00 "], env)
    assert isinstance(exc, InputError)
    env.update({"COGD_LLM__ROLES__SYSTEM1": "openai"})
    _, _, exc = invoke(["ask", "hi"], env)
    assert isinstance(exc, ConfigError) and "OPENAI_API_KEY" in str(exc)


def test_every_option_shows_its_env_var(env: dict[str, str]) -> None:
    for command, var in (("ask", "COGD_ASK_ROLE"), ("embed", "COGD_EMBED_NATIVE"),
                         ("models", "COGD_JSON")):
        _, out, _ = invoke([command, "--help"], env)
        assert f"env var: {var}" in " ".join(out.split())
