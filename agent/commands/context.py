"""What the commands share: the Settings of this invocation, the database URL they work
with, and the in-process loop of `cogd chat` and `cogd serve`."""

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


def ready_url(settings: Any, *, owner: bool = False) -> str:
    """The URL a command works with, as the app role (the owner's with `owner`:
    approving a Layer 0 proposal), the schema migrated to head first (the embedded server
    is started if needed)."""
    from agent.db.connect import preflight, resolve
    from agent.db.migrate import upgrade

    target = resolve(settings)
    preflight(target.url)
    upgrade(target.url, settings)
    return target.url if owner else target.app_url


def start_local_loop(settings: Any, url: str, conn: Any, say: Any) -> Any:
    """A loop worker on a thread of this process when no loop process is alive (the REPL,
    `cogd serve`): (worker, thread), or None when one is. Stop it with worker.stop.set()
    and join the thread."""
    import threading

    from agent.db import catalog

    if catalog.running(conn, "loop"):
        return None
    from agent.workers.loop import LoopWorker

    say("no loop process is running: answering in-process (start `cogd up` to share one)")
    worker = LoopWorker(settings, url)
    thread = threading.Thread(target=worker.run, name="in-process-loop", daemon=True)
    thread.start()
    return worker, thread
