"""The local model's decoding (issue 40): the request carries the configured sampling, and
the repetition guard cuts a looping reply, streamed or not. A scripted llama.cpp server
stands in for the model (the real one: tests/integration/test_providers_local.py)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.config import load_settings
from agent.domain.repetition import loops
from agent.providers import factory
from agent.providers.local import Decoding, LocalLLM, llm_threads

LOOP = "I'm sure she'll love her home. " * 8  # one sentence until max_tokens (issue 40)


class ScriptedServer:
    """handle_chat_completions as xllamacpp's, answering LOOP a few words per chunk."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.on_chunk: Any = None  # the reader's callback of the last streamed request

    def handle_chat_completions(self, request: dict[str, Any], on_chunk: Any = None) -> Any:
        self.requests.append(request)
        if on_chunk is None:
            return {"choices": [{"message": {"content": LOOP}, "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 80}}
        self.on_chunk = on_chunk
        words = LOOP.split(" ")
        for i in range(0, len(words), 3):
            if on_chunk({"choices": [{"delta": {"content": " ".join(words[i:i + 3]) + " "}}]}):
                break  # the reader asked to stop: the generation ends
        on_chunk({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 20}})
        return None


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> tuple[LocalLLM, ScriptedServer]:
    server = ScriptedServer()
    model = LocalLLM(decoding=Decoding(repeat_penalty=1.15, frequency_penalty=0.2,
                                       stop=("\n\n",)))
    monkeypatch.setattr(model, "load", lambda: server)
    return model, server


def test_a_looping_reply_is_cut(llm: tuple[LocalLLM, ScriptedServer]) -> None:
    model, server = llm
    result = model.chat([{"role": "user", "content": "Who is visiting?"}])
    assert not loops(result.text) and result.text.startswith("I'm sure she'll love her home.")
    assert result.finish_reason == "repetition_guard"
    sent = server.requests[-1]
    assert sent["repeat_penalty"] == 1.15 and sent["frequency_penalty"] == 0.2
    assert sent["stop"] == ["\n\n"] and sent["repeat_last_n"] == 64


def test_a_looping_stream_is_cut_and_the_generation_stopped(
        llm: tuple[LocalLLM, ScriptedServer]) -> None:
    model, server = llm
    text = "".join(model.stream([{"role": "user", "content": "Who is visiting?"}]))
    assert text.strip() and not loops(text)
    assert text.strip() == "I'm sure she'll love her home. I'm sure she'll love her home."
    # the callback now tells llama.cpp to end the generation (True: stop)
    assert server.on_chunk({"choices": [{"delta": {"content": "more "}}]}) is True


def test_the_guard_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ScriptedServer()
    model = LocalLLM(decoding=Decoding(guard=False))
    monkeypatch.setattr(model, "load", lambda: server)
    assert model.chat([{"role": "user", "content": "hi"}]).text == LOOP


def test_the_configured_profile_reaches_the_model() -> None:
    model = factory.build_llm(load_settings(), "system1")
    assert isinstance(model, LocalLLM) and model.bundled
    assert model.decoding.repeat_penalty > 1.0 and model.decoding.guard
    assert model.default_max_tokens <= 128 and model.default_temperature < 0.7
    assert model.poll == 0 and llm_threads(model.threads) >= 1


def test_threads_leave_a_core_to_the_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert llm_threads(0) == 1 and llm_threads(None) == 1 and llm_threads(3) == 3
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert llm_threads(0) == 8
