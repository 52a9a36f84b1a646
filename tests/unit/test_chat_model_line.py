"""`cogd chat`'s first line names the model that answers (issue 40)."""

from __future__ import annotations

from agent.commands.chat import model_line
from agent.config import load_settings


def test_the_bundled_model_says_it_is_offline_and_small() -> None:
    line = model_line(load_settings())
    assert line.startswith("model: SmolLM2-135M-Instruct") and "offline, small" in line
    assert "grounded-reply heuristic" in line and "README" in line


def test_a_configured_model_is_named_with_its_server() -> None:
    settings = load_settings()
    settings.llm.roles["system1"] = "openai"
    settings.llm.profiles["openai"].base_url = "http://localhost:11434/v1"
    line = model_line(settings)
    assert line == "model: openai gpt-4o-mini at http://localhost:11434/v1 (profile openai)"
    settings.llm.roles["system1"] = "heuristic"
    assert "no LLM" in model_line(settings)
