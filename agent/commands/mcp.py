"""`cogd mcp`: cogd's memory as a Model Context Protocol server (the official `mcp` SDK).

stdio by default (an assistant starts it as a subprocess): every tool works on one
user's memories, --user (COGD_USER, default: your login name) or the tool's `user`
argument. Streamable HTTP with --http (endpoint /mcp, on a loopback address): every
request needs a bearer token of `cogd token create`, and the token's user is the user of
every call. The tools call agent/services/access/memory_api.py.
"""

from __future__ import annotations

import getpass
import logging
from typing import Annotated, Any

import click
from pydantic import Field

from agent.commands.context import cogd_version, settings_from
from agent.errors import CogdError, InputError

log = logging.getLogger("agent.mcp")

INSTRUCTIONS = (
    "cogd is a long-term memory. Call `recall` before answering anything that may depend on "
    "what the user said in earlier conversations (people, plans, preferences, dates); each "
    "item has a verdict (strong_match / weak_match / no_match): rely on strong matches, "
    "say so when there is none. Call `remember` when the user asks you to remember "
    "something or states a lasting fact about themselves. `why` shows where a memory "
    "comes from. At the start of a session, call `handoff`: who the user is (their "
    "profile), the last session's note, open intentions, corrections to heed and the "
    "morning brief; `profile` lists what the user said about themself, with sources."
)
USER_ARG = ("Whose memories (a user handle); default: the user the server was started for "
            "(cogd mcp --user)")
OPERATOR_SCOPE = "cogd:operator"  # an operator token's scope (status's global figures)
# the tools' argument types live here, at module level: the SDK reads the (string)
# annotations against this module's globals to build each tool's JSON schema
User = Annotated[str | None, Field(description=USER_ARG)]


def build_server(api: Any, base_url: str | None = None) -> Any:
    """The MCP server over a MemoryAPI: tools and resources; cogd's own errors become
    tool errors the client sees (isError), never a traceback. With `base_url` (HTTP),
    every request needs a bearer token of `cogd token create`, and the token's user is
    the user of every call."""
    import psycopg
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    auth: dict[str, Any] = {}
    if base_url is not None:
        from mcp.server.auth.settings import AuthSettings

        auth = {"token_verifier": TokenCheck(api),
                "auth": AuthSettings.model_validate({
                    "issuer_url": base_url, "resource_server_url": f"{base_url}/mcp"})}
    server = MCPServer("cogd", instructions=INSTRUCTIONS, version=cogd_version(), **auth)

    def scoped(user: str | None) -> str | None:
        """The user of this call: the token's over HTTP (a `user` argument may only name
        it), else the argument or the server's --user."""
        token = get_access_token()
        if token is None:
            return user
        if user is not None and user != token.client_id:
            raise InputError(f"this token is bound to user {token.client_id!r}")
        return token.client_id

    def operator() -> bool:
        """Installation-wide figures: over stdio, the operator runs this server (with the
        database's credentials); over HTTP, only an operator token
        (`cogd token create --operator`)."""
        token = get_access_token()
        return base_url is None if token is None else OPERATOR_SCOPE in token.scopes

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            if "user" in kwargs:
                kwargs["user"] = scoped(kwargs["user"])
            return fn(*args, **kwargs)
        except CogdError as exc:
            raise ToolError(str(exc)) from None
        except psycopg.OperationalError:  # the next call reconnects (MemoryAPI._db)
            raise ToolError("the database connection was lost; call again") from None
        except Exception as exc:  # logged here; the client gets one line, no traceback
            log.exception("mcp tool %s failed", getattr(fn, "__name__", fn))
            raise ToolError(f"internal error: {exc.__class__.__name__}: {exc}") from None

    @server.tool()
    def recall(query: Annotated[str, Field(description="What to look for, in words")],
               user: User = None,
               k: Annotated[int | None, Field(description="How many items (1-50); "
                                               "default: config recall.top_k")] = None,
               verify: Annotated[bool, Field(description="The stricter threshold, for a "
                                             "claim a reply will rely on")] = False,
               ) -> dict[str, Any]:
        """What memory returns for a query: items with verdict (strong_match / weak_match
        / no_match), score, date, speaker and sources (turn ids and external ids), best
        first, and an overall verdict."""
        return call(api.recall, query, user=user, k=k, verify=verify)  # type: ignore[no-any-return]

    @server.tool()
    def remember(text: Annotated[str, Field(description="What to keep, as a sentence")],
                 user: User = None) -> dict[str, Any]:
        """Keep a fact or note as an explicit memory of the user (written as a turn
        first, then as a memory of importance 0.8). Returns its memory id."""
        return call(api.remember, text, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def why(target: Annotated[str, Field(description="A memory id, or text whose "
                                         "best-matching memory to explain")],
            user: User = None) -> dict[str, Any]:
        """Where a memory comes from: the memories it supersedes or summarises, down to
        the conversation turns it was made from."""
        return call(api.why, target, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def forget(memory_id: Annotated[str, Field(description="The memory's id (from recall "
                                                "or remember)")],
               user: User = None) -> dict[str, Any]:
        """Erase one of the user's memories and every verbatim copy of what it says (its
        turn, blocks, cortex, logs); what it removed comes back, never the text. Cannot
        be undone."""
        return call(api.forget, memory_id, user=user, actor="mcp")  # type: ignore[no-any-return]

    @server.tool()
    def status(user: User = None) -> dict[str, Any]:
        """How many turns, memories and open intentions the user has; for the operator
        (stdio, or an operator token over HTTP) also the daemon's processes (alive or
        stale) and the installation's table sizes."""
        return call(api.status, user=user,  # type: ignore[no-any-return]
                    operator=operator())

    @server.tool()
    def goals(user: User = None) -> dict[str, Any]:
        """The agent's active goals (Layer 1) in the user's prompt, and their weights:
        the installation-wide ones and the user's own."""
        return call(api.goals, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def identity(user: User = None) -> dict[str, Any]:
        """The agent's identity (Layer 0): the hash the user's prompt carries and the
        weighted traits and boundaries behind it."""
        return call(api.identity, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def handoff(user: User = None) -> dict[str, Any]:
        """Call at the start of a session: what cogd would hand a new session of the user
        now, as one block of text (`text`) and its items (kind, id, text, source ids):
        the user's profile first (`profile`), then the time since the last session, the
        last session's note, open intentions (overdue ones flagged), corrections that
        apply, landmarks and the temporal sweep, the user's morning brief (its TL;DR and
        blocks) and overnight thoughts. `text` is null when there is nothing to hand
        over."""
        return call(api.handoff, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def profile(user: User = None) -> dict[str, Any]:
        """Who the user is, from their own words: the current claims (name, where they
        live, work, people by relation, preferences, projects), each with its value, when
        it was said and the turn it came from (`source_ids`), and the superseded ones
        (kept, with the claim that replaced each). Read by consolidation."""
        return call(api.profile, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def mood(user: User = None) -> dict[str, Any]:
        """The agent's emotional state with the user now: valence (-1..1), energy and
        openness (0..1), the nearest emotion (`label`), the tendency line its prompt
        carries (a tone, not facts), and when and by what it last changed."""
        return call(api.mood, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def corrections(user: User = None) -> dict[str, Any]:
        """The user's active corrections (things the agent got wrong and was corrected
        on): each with its id, what was corrected, when the old answer fails
        (fails_when) and when it is fine (fine_when). Heed them when they apply."""
        return call(api.corrections, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def intentions(status: Annotated[str, Field(description="open (default), fulfilled, "
                                                "dropped, or all")] = "open",
                   user: User = None) -> dict[str, Any]:
        """The user's intentions (plans, promises, reminders, unfinished work) with their
        ids, kind, due date, urgency, how many sessions they were carried over, and
        status; open ones first."""
        return call(api.intentions, user=user, status=status)  # type: ignore[no-any-return]

    @server.tool()
    def contradictions(user: User = None) -> dict[str, Any]:
        """The user's open contradictions: two of their memories that disagree, each with
        its id, both statements (a: the older, b: the newer) with memory ids and dates,
        and who flagged it and why. Ask the user which holds, then call
        `resolve_contradiction`; never resolve a factual dispute on your own."""
        return call(api.contradictions, user=user)  # type: ignore[no-any-return]

    @server.tool()
    def resolve_contradiction(
            contradiction_id: Annotated[int, Field(description="The id `contradictions` "
                                                   "gave")],
            action: Annotated[str, Field(description="keep-a (the older statement), keep-b "
                                         "(the newer) or merge")],
            text: Annotated[str | None, Field(description="With merge: the merged "
                                              "statement (default: the model's, else the "
                                              "newer statement)")] = None,
            user: User = None) -> dict[str, Any]:
        """Resolve one of the user's contradictions as the user decided: the losing memory
        (both, for merge) is superseded by the one that stands, never deleted, and the
        resolution is audit-logged; `why` on the loser shows it. Resolved once."""
        return call(api.resolve_contradiction, contradiction_id,  # type: ignore[no-any-return]
                    action, user=user, text=text, actor="mcp")

    @server.tool()
    def timeline(start: Annotated[str | None, Field(description="From this date "
                                                    "(YYYY-MM-DD)")] = None,
                 end: Annotated[str | None, Field(description="Up to this date, included "
                                                  "(YYYY-MM-DD)")] = None,
                 user: User = None) -> dict[str, Any]:
        """What happened when: the user's episodes (a coherent span of a session or a day
        about one topic) with start and end dates, a title, milestones (first mentions,
        decisions, moves, important events) and sources (turn and block ids), oldest
        first; at most 200: with more, the newest 200 and `truncated` true. Use it for
        "what happened in October?"."""
        return call(api.timeline, user=user, start=start,  # type: ignore[no-any-return]
                    end=end)

    @server.resource("cogd://identity", mime_type="text/plain",
                     description="The identity hash the agent's prompt carries (Layer 0).")
    def identity_resource() -> str:
        return str(call(api.identity, user=None)["hash"])

    @server.resource("cogd://brief/latest", mime_type="text/markdown",
                     description="The user's own latest morning brief of the night cycle "
                                 "(markdown): their blocks and overnight thoughts only.")
    def brief_resource() -> str:
        got = call(api.brief, user=None)
        return str(got["text"] or got["note"])

    @server.resource("cogd://intentions", mime_type="application/json",
                     description="The default user's open intentions: plans, promises, "
                                 "reminders, unfinished work.")
    def intentions_resource() -> dict[str, Any]:
        return call(api.intentions, user=None)  # type: ignore[no-any-return]

    return server




class TokenCheck:
    """The MCP SDK's token verifier over cogd's API tokens: the token's user is the
    AccessToken's client_id."""

    def __init__(self, api: Any) -> None:
        self.api = api

    async def verify_token(self, token: str) -> Any:
        import anyio
        from mcp.server.auth.provider import AccessToken

        caller = await anyio.to_thread.run_sync(self.api.authenticate, token)
        if caller is None:
            return None
        return AccessToken(token=token, client_id=caller.handle,
                           scopes=[OPERATOR_SCOPE] if caller.operator else [],
                           subject=str(caller.user_id))


LOOPBACK = ("127.0.0.1", "localhost", "::1")  # the SDK's DNS-rebinding guard knows these


def _loopback(host: str) -> bool:
    return host in LOOPBACK


@click.command("mcp")
@click.option("--user", default=lambda: getpass.getuser(), envvar="COGD_USER",
              show_envvar=True, help="The user whose memories the tools use when a call "
              "names none [default: your login name].")
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio; each "
              "request needs Authorization: Bearer <token> (cogd token create), whose user "
              "it works on.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --http: the address to listen on (127.0.0.1, localhost or ::1: the "
              "SDK's DNS-rebinding guard knows these).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535),
              help="With --http: the port.")
def mcp(user: str, http: bool, host: str, port: int) -> int:
    """Serve cogd's memory over MCP (Model Context Protocol) for Claude Code, Cursor and
    other assistants: tools recall, remember, why, forget, status, goals, identity, handoff,
    profile, mood, corrections, intentions, contradictions,
    resolve_contradiction, timeline; resources
    cogd://identity, cogd://brief/latest, cogd://intentions.

    stdio by default: the assistant starts `cogd mcp` itself (README: the config lines).
    Logs go to stderr; stdout carries the protocol only.
    """
    from agent.commands.context import ready_url
    from agent.runtime import Runtime

    if http and not _loopback(host):
        raise InputError(f"--host {host}: the MCP endpoint listens on a loopback address "
                         "only (127.0.0.1, localhost, ::1); `cogd serve` is the API for "
                         "other hosts")
    settings = settings_from()
    url = ready_url(settings)
    api = Runtime(settings).memory_api(url, user)
    try:
        where = f"[{host}]" if ":" in host else host
        server = build_server(api, f"http://{where}:{port}" if http else None)
        if http:
            log.info("cogd mcp: streamable HTTP on http://%s:%d/mcp (bearer tokens: "
                     "cogd token create --user HANDLE)", host, port)
            server.run("streamable-http", host=host, port=port)
        else:
            server.run()
    finally:
        api.close()
    return 0


COMMANDS = (mcp,)
