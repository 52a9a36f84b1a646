"""Model commands: `cogd models`, `cogd embed`, `cogd ask`."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

import click

from agent.commands.context import json_option
from agent.config import ROLES


def _settings() -> Any:
    """This invocation's Settings (the root group's), else freshly loaded ones."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        for obj in (ctx.obj, ctx.find_root().obj):
            if isinstance(obj, dict) and "settings" in obj:
                return obj["settings"]
        if isinstance(ctx.find_root().obj, dict):
            from agent.commands.context import settings_from

            return settings_from(ctx)
    from agent.config import load_settings

    return load_settings()


def _read_text(text: str) -> str:
    """The argument, or stdin when it is "-" (bytes decoded with replacement)."""
    if text == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    return text



@click.command("models")
@json_option
def models(as_json: bool) -> None:
    """Each role's LLM profile, provider and model, and whether it is reachable now."""
    from agent.providers.probe import route_roles
    from agent.providers.rerank import reranker_status

    settings = _settings()
    routes = route_roles(settings)
    emb = settings.embedding
    embeddings = {
        "universal": {"provider": "local", "model": emb.universal_model, "dim": emb.universal_dim},
        "native": {"provider": emb.native_provider, "model": emb.native_model,
                   "dim": emb.native_dim},
    }
    rerank = reranker_status(settings)
    if as_json:
        click.echo(json.dumps({"roles": [r.as_dict() for r in routes],
                               "embeddings": embeddings, "reranker": rerank}, indent=2))
        return
    for r in routes:
        mark = "ok " if r.reachable else "NO "
        target = f"{r.provider}:{r.model}" if r.provider else "-"
        click.echo(f"{mark} {r.role:<13} {r.profile or '-':<12} {target:<40} {r.detail}")
    for name, e in embeddings.items():
        click.echo(f"    embed/{name:<7} {e['provider']}:{e['model']} ({e['dim']} dims)")
    click.echo(f"    reranker      {rerank}")


@click.command("embed")
@click.argument("text")
@click.option(
    "--native", is_flag=True, envvar="COGD_EMBED_NATIVE", show_envvar=True,
    help="Use the native (configured provider's) model instead of the universal local one.",
)
@click.option(
    "--memory-type", default=None, envvar="COGD_EMBED_MEMORY_TYPE", show_envvar=True,
    help="Add this memory type's prefix (preference, episodic, fact, instruction, ...).",
)
@json_option
def embed(text: str, native: bool, memory_type: str | None, as_json: bool) -> None:
    """Embed TEXT ("-" reads stdin) and print its dimension, model id and first values."""
    from agent.providers import factory
    from agent.providers.ports import ListRecorder

    settings = _settings()
    recorder = ListRecorder()
    embedder = (
        factory.build_native_embedder(settings, recorder)
        if native
        else factory.build_universal_embedder(settings, recorder)
    )
    vector = embedder.embed_documents([_read_text(text)], memory_type=memory_type)[0]
    if as_json:
        click.echo(json.dumps({
            "model_id": embedder.model_id, "dim": embedder.dim,
            "vector": [round(float(v), 7) for v in vector],
            "calls": [asdict(r) for r in recorder.records],
        }))
        return
    head = ", ".join(f"{float(v):+.4f}" for v in vector[:8])
    click.echo(f"{embedder.model_id}  dim={embedder.dim}  [{head}, ...]")


@click.command("ask")
@click.argument("question")
@click.option(
    "--role", default="system1", show_default=True, envvar="COGD_ASK_ROLE", show_envvar=True,
    help=f"Which role's LLM profile answers ({', '.join(ROLES)}).",
)
@click.option(
    "--stream/--no-stream", default=True, show_default=True, envvar="COGD_ASK_STREAM",
    show_envvar=True, help="Print the answer as it arrives (ignored with --json).",
)
@click.option(
    "--max-tokens", type=int, default=None, envvar="COGD_ASK_MAX_TOKENS", show_envvar=True,
    help="Answer length limit [default: the profile's max_tokens].",
)
@json_option
def ask(question: str, role: str, stream: bool, max_tokens: int | None, as_json: bool) -> None:
    """Ask QUESTION ("-" reads stdin) of the LLM a role routes to, without memory."""
    from agent.providers import factory
    from agent.providers.ports import ListRecorder

    settings = _settings()
    recorder = ListRecorder()
    llm = factory.build_llm(settings, role, recorder)
    messages = [{"role": "user", "content": _read_text(question)}]
    if stream and not as_json:
        wrote = False
        for chunk in llm.stream(messages, max_tokens=max_tokens):
            click.echo(chunk, nl=False)
            wrote = True
        click.echo("" if wrote else "(empty answer)")
        return
    result = llm.chat(messages, max_tokens=max_tokens, want_logprobs=as_json)
    if not as_json:
        click.echo(result.text or "(empty answer)")
        return
    out = asdict(result)
    out["role"] = role
    out["calls"] = [asdict(r) for r in recorder.records]
    click.echo(json.dumps(out))


COMMANDS = (models, embed, ask)

__all__ = ["COMMANDS", "ask", "embed", "models"]
