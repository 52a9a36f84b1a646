"""What every command shares: the Settings of this invocation."""

from __future__ import annotations

from typing import Any

import click


def settings_from(ctx: click.Context | None = None) -> Any:
    """The Settings for this invocation, built once from the root group's options."""
    from agent.config import load_settings

    ctx = ctx or click.get_current_context()
    root = ctx.find_root()
    root.ensure_object(dict)
    if "settings" not in root.obj:
        root.obj["settings"] = load_settings(**root.obj.get("overrides", {}))
    return root.obj["settings"]


def json_option(fn: Any) -> Any:
    """The shared `--json` flag (also COGD_JSON=1)."""
    return click.option(
        "--json", "as_json", is_flag=True, envvar="COGD_JSON", show_envvar=True,
        help="Machine-readable output.",
    )(fn)


def cogd_version() -> str:
    """The installed cogd's version (what the MCP server and the HTTP API announce)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cogd")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "0"
