"""`cogd chat`: the REPL client. Writes inbox rows, waits on outbox through NOTIFY.

When no loop process is alive it runs the loop in-process (and says so). With a
non-TTY stdin it reads one message per line and prints one reply per message.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import click
import psycopg

from agent import inbox
from agent.bus import Channel, Listener
from agent.commands.context import settings_from
from agent.config import Settings
from agent.errors import CogdError, InputError

SLASH_HELP = """/identity            Layer 0 as the prompt renders it
/goals               Layer 1 goals and their weights
/recall <query>      what memory returns for a query, with verdicts
/why <text>          where a belief comes from: matching memories and their turns
/remember <text>     store a memory now (explicit)
/forget <id>         archive a memory (kept, audit-logged; `cogd forget` erases)
/status              processes and row counts
/handoff             this session's handoff: gap, last note, intentions, corrections, brief
/drop <id>           drop one of your open intentions (`cogd intentions` lists them)
/mood                the emotional state now: label, coordinates, when it last changed
/quit                leave (Ctrl-D works too)"""


class ChatClient:
    def __init__(self, settings: Settings, url: str, user: str, session: str | None) -> None:
        from agent.db.connect import connect
        from agent.services.sessions import ensure_session, ensure_user

        self.settings = settings
        self.url = url
        self.conn = connect(url, app="cogd-chat", autocommit=True)
        self.user_id = ensure_user(self.conn, user)
        self.session_id = ensure_session(self.conn, self.user_id, session)
        self.listener = Listener(
            lambda: connect(url, app="cogd-chat-listen", autocommit=True), [Channel.OUTBOX]
        )
        self.listener.start()
        self.local_loop: Any = None
        self._recaller: Any = None
        self._writer: Any = None
        self._continuity: Any = None

    @property
    def recaller(self) -> Any:
        if self._recaller is None:
            from agent.services.recall import build_recaller

            self._recaller = build_recaller(self.settings)
        return self._recaller

    @property
    def writer(self) -> Any:
        """A turn writer for /remember (same embedders and entry gate as the loop)."""
        if self._writer is None:
            from types import SimpleNamespace

            from agent.services.turns import TurnWriter

            self._writer = SimpleNamespace(writer=TurnWriter.from_settings(self.settings))
        return self._writer

    def handoff_text(self) -> str:
        """This session's handoff as the loop computes it (no turn written)."""
        if self._continuity is None:
            from agent.providers import factory
            from agent.services.handoff import Continuity

            universal = factory.build_universal_embedder(self.settings)
            counter = factory.build_llm(self.settings, "system1").count_tokens
            self._continuity = Continuity(self.settings, universal.embed_query, counter)
        made = self._continuity.for_session(self.conn, self.session_id, self.user_id)
        if made is None:
            return "no handoff: no earlier session, no open intention, no morning brief"
        text, meta = made
        sources = [f"  {i['kind']} {i['id']} <- {', '.join(i['source_ids']) or '-'}"
                   for i in meta["items"]]
        return "\n".join([text, "sources:", *sources] if sources else [text])

    def ensure_loop(self, say: Any) -> None:
        """Run the loop in this process when no loop worker is alive."""
        self.local_loop = start_local_loop(self.settings, self.url, self.conn, say)

    def send(
        self, text: str, timeout_s: float = 600.0, on_partial: Any = None
    ) -> dict[str, Any]:
        """Queue a message and wait for its reply row (printing partial text if asked).

        The message is acknowledged once its inbox row commits; the loop answers it
        whenever a loop runs. If Postgres goes away meanwhile, this reconnects and keeps
        waiting until the deadline (a message whose commit was cut off is looked up
        before it is queued again, so it is never queued twice).
        """
        if not text.strip():
            raise InputError("empty message: nothing sent")
        from agent.domain.text import clean_content

        content, _ = clean_content(text)  # NUL and undecodable stdin bytes (surrogates) replaced
        deadline = time.monotonic() + timeout_s
        inbox_id: int | None = None
        key = uuid.uuid4().hex  # this send's idempotency key: a resend is the same message
        while time.monotonic() < deadline:
            try:
                if inbox_id is None:
                    inbox_id = inbox.enqueue(self.conn, self.session_id, content,
                                             stream=on_partial is not None, key=key)
                reply = inbox.reply_for(self.conn, inbox_id, on_partial)
                if reply is not None:
                    return reply.as_dict()
                self.listener.wait(0.25 if on_partial else 1.0)  # a wake-up; the query is the truth
            except psycopg.OperationalError as exc:
                self._reconnect(exc, deadline)
                if inbox_id is None:
                    inbox_id = inbox.queued(self.conn, key)
        where = (f"inbox id {inbox_id} is kept and will be answered when a loop runs"
                 if inbox_id is not None else "the message was not queued: send it again")
        raise CogdError(f"no reply within {timeout_s:.0f}s ({where})")

    def _reconnect(self, exc: Exception, deadline: float) -> None:
        from agent.db.connect import connect

        sys.stderr.write(f"cogd: database connection lost ({' '.join(str(exc).split())[:160]});"
                         " reconnecting\n")
        while time.monotonic() < deadline:
            try:
                if not self.conn.closed:
                    self.conn.close()
                self.conn = connect(self.url, app="cogd-chat", autocommit=True)
                return
            except CogdError:
                time.sleep(1.0)

    def close(self) -> None:
        if self.local_loop:
            worker, thread = self.local_loop
            worker.stop.set()
            thread.join(30)
        self.listener.close()
        self.conn.close()


def model_line(settings: Settings) -> str:
    """One line naming the model that answers (System 1), and how to get a better one
    when it is the bundled small model (issue 40)."""
    from agent.providers.local import LOCAL_LLM_NAME

    name, profile = settings.role_profile("system1")
    grounded = ("; fact questions answered from memory (grounded-reply heuristic)"
                if profile.grounded_replies else "")
    if profile.provider == "local" and not profile.model_path:
        return (f"model: {LOCAL_LLM_NAME} (bundled; offline, small){grounded}. For better "
                "replies point a profile at a bigger model: README, Models")
    if profile.provider == "local":
        return f"model: {profile.model_path} (local GGUF, offline){grounded}"
    if profile.provider == "heuristic":
        return "model: none (the extractive heuristic fallback, no LLM)"
    where = f" at {profile.base_url}" if profile.base_url else ""
    return f"model: {profile.provider} {profile.model}{where} (profile {name}){grounded}"


def start_local_loop(settings: Settings, url: str, conn: psycopg.Connection[Any],
                     say: Any) -> tuple[Any, threading.Thread] | None:
    """A loop worker on a thread of this process when no loop process is alive (the REPL,
    `cogd serve`); None when one is. Stop it with worker.stop.set() and join the thread."""
    from agent.db import catalog

    if catalog.running(conn, "loop"):
        return None
    from agent.workers.loop import LoopWorker

    say("no loop process is running: answering in-process (start `cogd up` to share one)")
    worker = LoopWorker(settings, url)
    thread = threading.Thread(target=worker.run, name="in-process-loop", daemon=True)
    thread.start()
    return worker, thread


def _slash(client: ChatClient, line: str, echo: Any) -> bool:
    """Handle a slash command; False means quit."""
    from agent.services import introspect

    cmd, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    if cmd in ("quit", "exit", "q"):
        return False
    if cmd == "help":
        echo(SLASH_HELP)
    elif cmd == "identity":
        echo(introspect.identity_text(client.conn, client.settings))
    elif cmd == "goals":
        echo(introspect.goals_text(client.conn))
    elif cmd == "status":
        echo(introspect.status_text(client.conn))
    elif cmd in ("recall", "why"):
        query = arg.replace("\x00", "").strip()  # Postgres text holds no NUL
        if not query:
            echo(f"usage: /{cmd} <text>")
        else:
            out = client.recaller.recall(client.conn, query, session_id=client.session_id)
            payload = introspect.recall_payload(out)
            echo(introspect.why_text(client.conn, payload, client.user_id) if cmd == "why"
                 else introspect.format_recall(payload))
    elif cmd == "remember":
        if not arg:
            echo("usage: /remember <text>")
        else:
            mid = introspect.remember(client.conn, client.writer, client.session_id,
                                      client.user_id, arg)
            echo(f"remembered as memory {mid}")
    elif cmd == "handoff":
        echo(client.handoff_text())
    elif cmd == "mood":
        from agent.domain.emotion import EmotionConfig
        from agent.services.emotion import mood_text

        echo(mood_text(client.conn, client.user_id, datetime.now(UTC),
                       EmotionConfig.from_table(client.settings.emotion)))
    elif cmd == "drop":
        from agent.services.intentions import drop

        try:
            echo(drop(client.conn, client.user_id, arg, via="repl") if arg
                 else "usage: /drop <intention id>")
        except InputError as exc:
            echo(str(exc))
    elif cmd == "forget":
        try:
            echo(introspect.forget(client.conn, arg))
        except InputError as exc:
            echo(str(exc))
    else:
        echo(f"unknown command /{cmd}; try /help")
    return True


@click.command()
@click.option("--user", default=lambda: getpass.getuser(), envvar="COGD_USER", show_envvar=True,
              help="Who is talking (a user handle) [default: your login name].")
@click.option("--session", envvar="COGD_SESSION", show_envvar=True,
              help="Continue a session (its uuid or any key); default: a new session.")
@click.option("--json", "as_json", is_flag=True, help="With piped input: one JSON line per reply.")
@click.option("--timeout", "timeout_s", default=600.0, show_default=True,
              help="Seconds to wait for each reply.")
def chat(user: str, session: str | None, as_json: bool, timeout_s: float) -> int:
    """Talk to the agent. Type /help for slash commands; Ctrl-D or /quit to leave.

    With piped stdin: one message per line in, one reply per line out.
    """
    from agent.db.connect import preflight, resolve
    from agent.db.migrate import upgrade

    settings = settings_from()
    target = resolve(settings)
    preflight(target.url)
    upgrade(target.url, settings)
    interactive = sys.stdin.isatty()
    err = sys.stderr

    def say(msg: str) -> None:
        click.echo(msg, err=not interactive)

    client = ChatClient(settings, target.app_url, user, session)
    click.echo(f"cogd: {model_line(settings)}", file=err)  # stdout: replies only
    client.ensure_loop(lambda m: click.echo(f"cogd: {m}", file=err))
    try:
        if interactive:
            return _interactive(client, timeout_s)
        for raw in sys.stdin:
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("/"):
                if not _slash(client, line, say):
                    break
                continue
            try:
                result = client.send(line, timeout_s)
            except InputError as exc:
                click.echo(f"cogd: {exc}", file=err)
                continue
            if as_json:
                click.echo(json.dumps(result, default=str))
            else:
                click.echo(" ".join(result["reply"].split("\n")))
        return 0
    finally:
        client.close()


def _interactive(client: ChatClient, timeout_s: float) -> int:
    from rich.console import Console

    console = Console()
    history = _load_history(client.settings.data_dir / "chat_history")
    console.print(f"[dim]session {client.session_id} — /help for commands, Ctrl-D to quit[/dim]")
    try:
        return _repl(client, console, timeout_s)
    finally:
        if history is not None:
            with contextlib.suppress(OSError):
                history()


def _load_history(path: Any) -> Any:
    """Line editing and a history kept across sessions (readline); returns its saver."""
    try:
        import readline
    except ImportError:  # pragma: no cover - platforms without readline
        return None
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)

    def save() -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(path)

    return save


def _repl(client: ChatClient, console: Any, timeout_s: float) -> int:
    while True:
        try:
            line = input("you> ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return 0
        if not line.strip():
            continue
        if line.startswith("/"):
            if not _slash(client, line, console.print):
                return 0
            continue
        shown = {"n": 0}

        def partial(text: str, shown: dict[str, int] = shown) -> None:
            if shown["n"] == 0:
                console.print("[bold]cogd>[/bold] ", end="")
            console.print(text[shown["n"]:], end="", markup=False, highlight=False)
            shown["n"] = len(text)

        try:
            result = client.send(line, timeout_s, on_partial=partial)
        except InputError as exc:
            console.print(f"[yellow]{exc}[/yellow]")
            continue
        reply = result["reply"]
        if shown["n"] and reply.startswith(_streamed_prefix(reply, shown["n"])):
            console.print(reply[shown["n"]:], markup=False, highlight=False)
        elif shown["n"]:
            console.print()
            console.print(f"[bold]cogd> (revised after reflection)[/bold] {reply}")
        else:
            console.print(f"[bold]cogd>[/bold] {reply}", markup=False)


def _streamed_prefix(reply: str, n: int) -> str:
    return reply[:n]


COMMANDS = (chat,)
