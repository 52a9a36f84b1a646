"""`cogd chat`: the REPL client. Writes inbox rows, waits on outbox through NOTIFY.

When no loop process is alive it runs the loop in-process (and says so). With a
non-TTY stdin it reads one message per line and prints one reply per message.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import sys
from datetime import UTC, datetime
from typing import Any

import click
import psycopg

from agent import inbox
from agent.commands.context import ready_url, settings_from, start_local_loop
from agent.config import Settings
from agent.errors import InputError

SLASH_HELP = """/identity            Layer 0 as the prompt renders it
/goals               Layer 1 goals and their weights
/recall <query>      what memory returns for a query, with verdicts
/why <text|id>       where a memory comes from: its chain down to the turns (cogd why)
/remember <text>     store a memory now (explicit)
/forget <id>         archive a memory (kept, audit-logged; `cogd forget` erases)
/status              processes and row counts
/handoff             this session's handoff: gap, last note, intentions, corrections, brief
/drop <id>           drop one of your open intentions (`cogd intentions` lists them)
/mood                the emotional state now: label, coordinates, when it last changed
/contradictions      your open contradictions: both statements, who flagged them, why
/resolve <id> keep-a|keep-b|merge [merged text]   resolve one (the loser is superseded)
/timeline [from [to]]  your episodes and milestones (dates YYYY-MM-DD), with sources
/profile             who you are, from your own words: one claim per slot, with sources
/quit                leave (Ctrl-D works too)"""


class ChatClient:
    """The REPL's side: a user and session, and the inbox client (agent/inbox.py
    `Client`, which `cogd serve` uses too) that sends each message and waits for its
    reply; the slash commands' helpers."""

    def __init__(self, settings: Settings, url: str, user: str, session: str | None) -> None:
        from agent.runtime import Runtime
        from agent.services.records.sessions import ensure_session, ensure_user

        self.settings = settings
        self.runtime = Runtime(settings)  # the slash commands' recaller, writer, handoff
        self.url, self.user = url, user
        self.inbox = inbox.Client(url, "cogd-chat", listen=True, say=_to_stderr)
        self.user_id = ensure_user(self.conn, user)
        self.session_id = ensure_session(self.conn, self.user_id, session)
        self.local_loop: Any = None
        self._recaller: Any = None
        self._writer: Any = None
        self._continuity: Any = None

    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The client's connection (a new one after a reconnect)."""
        return self.inbox.conn

    @property
    def recaller(self) -> Any:
        if self._recaller is None:
            self._recaller = self.runtime.recaller()
        return self._recaller

    @property
    def writer(self) -> Any:
        """A turn writer for /remember (same embedders and entry gate as the loop)."""
        if self._writer is None:
            from types import SimpleNamespace

            self._writer = SimpleNamespace(writer=self.runtime.turn_writer())
        return self._writer

    def handoff_text(self) -> str:
        """This session's handoff as the loop computes it (no turn written)."""
        if self._continuity is None:
            self._continuity = self.runtime.continuity()
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
        """Queue a message and wait for its reply (printing partial text if asked):
        inbox.Client.ask (acknowledged once queued; reconnects and keeps waiting until
        the deadline; a message is never queued twice)."""
        return self.inbox.ask(self.session_id, text, timeout_s, on_partial).as_dict()

    def close(self) -> None:
        if self.local_loop:
            worker, thread = self.local_loop
            worker.stop.set()
            thread.join(30)
        self.inbox.close()


def _to_stderr(message: str) -> None:
    sys.stderr.write(f"cogd: {message}\n")


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


def _slash(client: ChatClient, line: str, echo: Any) -> bool:
    """Handle a slash command; False means quit."""
    from agent.services.access import introspect

    cmd, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    if cmd in ("quit", "exit", "q"):
        return False
    if cmd == "help":
        echo(SLASH_HELP)
    elif cmd == "identity":
        echo(introspect.identity_text(client.conn, client.runtime.identity_config))
    elif cmd == "goals":
        echo(introspect.goals_text(client.conn))
    elif cmd == "status":
        echo(introspect.status_text(client.conn))
    elif cmd in ("recall", "why"):
        query = arg.replace("\x00", "").strip()  # Postgres text holds no NUL
        if not query:
            echo(f"usage: /{cmd} <text>")
        elif cmd == "why":  # `cogd why`'s answer, scoped to this user
            try:
                echo("\n".join(introspect.why_lines(introspect.why(
                    client.conn, client.runtime.decision_tracker(), client.recaller, query,
                    user_id=client.user_id, handle=client.user))))
            except InputError as exc:
                echo(str(exc))
        else:
            out = client.recaller.recall(client.conn, query, session_id=client.session_id)
            echo(introspect.format_recall(introspect.recall_payload(out)))
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
        from agent.services.conversation.emotion import mood_text

        echo(mood_text(client.conn, client.user_id, datetime.now(UTC),
                       EmotionConfig.from_table(client.settings.emotion)))
    elif cmd == "drop":
        from agent.services.reach.intentions import drop

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
    elif cmd in ("contradictions", "resolve", "timeline", "profile"):  # issue 42
        try:
            echo(_memory_views(client, cmd, arg))
        except InputError as exc:
            echo(str(exc))
    else:
        echo(f"unknown command /{cmd}; try /help")
    return True


def _memory_views(client: ChatClient, cmd: str, arg: str) -> str:
    """/contradictions, /resolve, /timeline and /profile: `cogd contradictions`,
    `cogd resolve`, `cogd timeline` and `cogd profile` for this REPL's user only."""
    from agent.commands.timeline import contradiction_lines, resolution_line
    from agent.services.memory import timeline

    if cmd == "contradictions":
        return "\n".join(contradiction_lines(client.runtime.contradictions().open(
            client.conn, client.user_id), resolve_with="/resolve ID"))
    if cmd == "profile":
        from agent.commands.profile import profile_lines

        if arg:
            return "usage: /profile  (your own profile; `cogd profile --json` for scripts)"
        return "\n".join(profile_lines(client.runtime.profile().show(
            client.conn, client.user_id), client.user, "`cogd profile --json`"))
    if cmd == "resolve":
        cid, action, text = [*arg.split(maxsplit=2), "", "", ""][:3]
        if not cid or not action:
            return "usage: /resolve <id> keep-a|keep-b|merge [merged text]"
        return resolution_line(client.runtime.contradictions().resolve(
            client.conn, cid, action, user_id=client.user_id, text=text or None,
            actor=f"repl:{client.user}"))
    bounds = arg.split()
    if len(bounds) > 2:
        return "usage: /timeline [from [to]]  (dates YYYY-MM-DD)"
    start = timeline.parse_day(bounds[0] if bounds else None, "from")
    end = timeline.parse_day(bounds[1] if len(bounds) > 1 else None, "to", end=True)
    items, truncated = timeline.page(client.conn, client.user_id, start, end)
    return "\n".join(timeline.lines(items, truncated)) if items else "no episodes yet"


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
    settings = settings_from()
    url = ready_url(settings)
    interactive = sys.stdin.isatty()
    err = sys.stderr

    def say(msg: str) -> None:
        click.echo(msg, err=not interactive)

    client = ChatClient(settings, url, user, session)
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
