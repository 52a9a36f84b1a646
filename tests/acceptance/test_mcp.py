"""`cogd mcp` driven by the MCP SDK's own client (issue 16): over stdio, as Claude Code
or Cursor start it, and over streamable HTTP; a real Postgres behind it."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import psycopg
from mcp import Client, StdioServerParameters

from tests.acceptance.test_cli import COGD, assert_clean_error, run
from tests.acceptance.test_memory_cli import env_for
from tests.conftest import free_port

TOOLS = {"recall", "remember", "why", "forget", "status", "goals", "identity", "handoff", "mood",
         "corrections", "intentions", "profile",
         "contradictions", "resolve_contradiction", "timeline"}  # issue 42 items 3-4


def stdio(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=COGD, args=["mcp", *args], env=env)


def drive(target: Any, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(target) as client:
            return await body(client)
    return anyio.run(main)


def test_tools_over_stdio_remember_recall_why_and_resources(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)

    async def body(c: Client) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await c.list_tools()).tools},
                               "instructions": c.instructions}
        got = await c.call_tool("remember", {"text": "My bike lock code is 7391."})
        out["remember"] = got.structured_content
        other = await c.call_tool("remember", {"text": "The dentist moved to Elm Street."})
        out["other"] = other.structured_content
        out["recall"] = (await c.call_tool("recall", {"query": "What is my bike lock code?",
                                                      "k": 3})).structured_content
        out["why"] = (await c.call_tool(
            "why", {"target": out["remember"]["memory_id"]})).structured_content
        out["status"] = (await c.call_tool("status", {})).structured_content
        out["identity"] = (await c.call_tool("identity", {})).structured_content
        out["goals"] = (await c.call_tool("goals", {})).structured_content
        out["resources"] = {str(r.uri) for r in (await c.list_resources()).resources}
        out["intentions"] = (await c.read_resource("cogd://intentions")).contents[0]
        out["brief"] = (await c.read_resource("cogd://brief/latest")).contents[0]
        out["identity_res"] = (await c.read_resource("cogd://identity")).contents[0]
        return out

    out = drive(stdio(env, "--user", "bob"), body)
    assert out["tools"] == TOOLS
    assert "recall" in (out["instructions"] or "")
    mid = out["remember"]["memory_id"]
    assert out["remember"]["user"] == "bob"
    rec = out["recall"]
    assert rec["user"] == "bob" and rec["verdict"] == "strong_match"
    top = rec["items"][0]
    assert "7391" in top["content"] and top["verdict"] == "strong_match"
    assert top["created_at"] and top["sources"]["day_table"]  # date and source turn
    assert len(rec["items"]) <= 3
    chain = out["why"]["chain"]
    assert chain[0]["memory_id"] == mid and "7391" in chain[0]["turn"]["content"]
    assert out["status"]["user"] == {"handle": "bob", "turns": 2, "active_memories": 2,
                                     "other_memories": 0, "open_intentions": 0}
    assert out["status"]["tables"]["memories"] == 2
    assert out["goals"] == {"goals": []}
    assert set(out["identity"]) == {"hash", "traits"}
    assert out["resources"] == {"cogd://identity", "cogd://brief/latest", "cogd://intentions"}
    assert json.loads(out["intentions"].text) == {"user": "bob", "intentions": []}
    assert "no morning brief for bob yet" in out["brief"].text
    assert out["identity_res"].text == out["identity"]["hash"]
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT m.content, u.handle, s.channel FROM memories m JOIN users u USING (user_id)"
            " JOIN sessions s USING (session_id) ORDER BY m.created_at").fetchall()
    assert rows == [("My bike lock code is 7391.", "bob", "mcp"),
                    ("The dentist moved to Elm Street.", "bob", "mcp")]


def test_one_users_memories_are_not_another_users(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)

    async def body(c: Client) -> dict[str, Any]:
        mine = (await c.call_tool("remember", {"text": "My safe combination is 4-8-15."})
                ).structured_content
        bob = await c.call_tool("recall", {"query": "What is my safe combination?"})
        carol = await c.call_tool("recall", {"query": "What is my safe combination?",
                                             "user": "carol"})
        why_carol = await c.call_tool("why", {"target": mine["memory_id"], "user": "carol"})
        why_text = await c.call_tool("why", {"target": "safe combination", "user": "carol"})
        status = await c.call_tool("status", {"user": "carol"})
        forget_carol = await c.call_tool("forget", {"memory_id": mine["memory_id"],
                                                    "user": "carol"})
        kept = await c.call_tool("recall", {"query": "What is my safe combination?"})
        forgot = await c.call_tool("forget", {"memory_id": mine["memory_id"]})
        gone = await c.call_tool("recall", {"query": "What is my safe combination?"})
        return {"bob": bob.structured_content, "carol": carol.structured_content,
                "why_carol": why_carol, "why_text": why_text,
                "status": status.structured_content, "forget_carol": forget_carol,
                "kept": kept.structured_content, "forgot": forgot.structured_content,
                "gone": gone.structured_content}

    out = drive(stdio(env, "--user", "bob"), body)
    assert any("4-8-15" in i["content"] for i in out["bob"]["items"])
    assert out["carol"]["user"] == "carol"
    assert not any("4-8-15" in i["content"] for i in out["carol"]["items"])
    assert out["carol"]["verdict"] == "no_match"
    assert out["why_carol"].is_error and "no memory" in out["why_carol"].content[0].text
    assert out["why_text"].is_error and "carol" in out["why_text"].content[0].text
    assert out["status"]["user"]["turns"] == 0
    # carol cannot forget bob's memory; bob can, and then it is not recalled
    assert out["forget_carol"].is_error and "no memory" in out["forget_carol"].content[0].text
    assert any("4-8-15" in i["content"] for i in out["kept"]["items"])
    assert out["forgot"]["removed"]["memories"] == 1 and out["forgot"]["user"] == "bob"
    assert "4-8-15" not in json.dumps(out["forgot"])  # what was removed, not the text
    assert not any("4-8-15" in i["content"] for i in out["gone"]["items"])


def test_bad_arguments_are_tool_errors_with_a_reason(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)

    async def body(c: Client) -> list[Any]:
        return [await c.call_tool("recall", {"query": "   "}),
                await c.call_tool("recall", {"query": "bike", "k": 0}),
                await c.call_tool("remember", {"text": "x" * 20_001}),
                await c.call_tool("why", {"target": "7c1e9a52-0000-4000-8000-000000000000"}),
                await c.call_tool("recall", {"query": "bike", "user": ""}),
                await c.call_tool("recall", {}),
                await c.call_tool("status", {})]

    *bad, ok = drive(stdio(env, "--user", "bob"), body)
    texts = [r.content[0].text for r in bad]
    assert all(r.is_error for r in bad), texts
    assert "query is empty" in texts[0]
    assert "k must be between 1 and 50" in texts[1]
    assert "at most 20000" in texts[2]
    assert "no memory 7c1e9a52" in texts[3]
    assert "user handle is empty" in texts[4]
    assert "query" in texts[5]  # the SDK's own validation names the missing argument
    assert not any("Traceback" in t for t in texts)
    assert not ok.is_error  # the server is still serving after the errors



def over_http(url: str, token: str | None, body: Callable[[Any], Awaitable[Any]]) -> Any:
    """The SDK's session over streamable HTTP, with a bearer token."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> Any:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
                streamable_http_client(url, http_client=http) as streams, \
                ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await body(session)
    return anyio.run(main)


def wait_listening(proc: subprocess.Popen[Any], port: int, log: Path,
                   name: str = "cogd mcp --http") -> None:
    """Until the server `name` accepts connections on 127.0.0.1:`port` (its log on failure)."""
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, log.read_text()[-2000:]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"{name} did not start"
            time.sleep(0.2)


def test_streamable_http_serves_the_same_tools_to_a_tokens_user(db_url: str,
                                                                 tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    tokens = {u: json.loads(run("token", "create", "--user", u, "--create-user", "--json",
                                env=env).stdout)["token"] for u in ("dana", "erin")}
    port = free_port()
    log = (tmp_path / "mcp.log").open("w")
    proc = subprocess.Popen([COGD, "mcp", "--http", "--port", str(port), "--user", "frank"],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_listening(proc, port, tmp_path / "mcp.log")
        url = f"http://127.0.0.1:{port}/mcp"

        async def dana(c: Any) -> dict[str, Any]:
            await c.call_tool("remember", {"text": "Dana's flight to Oslo leaves at 6:40."})
            tools = {t.name for t in (await c.list_tools()).tools}
            got = await c.call_tool("recall", {"query": "When does the flight to Oslo leave?"})
            other = await c.call_tool("recall", {"query": "Oslo flight", "user": "erin"})
            return {"tools": tools, "recall": got.structured_content, "other": other}

        async def erin(c: Any) -> Any:
            return (await c.call_tool("recall", {"query": "When does the flight to Oslo "
                                                          "leave?"})).structured_content

        out = over_http(url, tokens["dana"], dana)
        theirs = over_http(url, tokens["erin"], erin)
        unauthorized = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                  headers={"Accept": "application/json, text/event-stream"})
        wrong = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                           headers={"Authorization": "Bearer cogd_nope",
                                    "Accept": "application/json, text/event-stream"})
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    assert out["tools"] == TOOLS
    assert out["recall"]["user"] == "dana"  # the token's user, not --user
    assert "6:40" in out["recall"]["items"][0]["content"]
    assert out["other"].is_error and "bound to user 'dana'" in out["other"].content[0].text
    assert theirs["user"] == "erin"
    assert not any("6:40" in i["content"] for i in theirs["items"])
    assert (unauthorized.status_code, wrong.status_code) == (401, 401)


def test_http_refuses_a_non_loopback_address(db_url: str, tmp_path: Path) -> None:
    proc = run("mcp", "--http", "--host", "0.0.0.0", env=env_for(db_url, tmp_path))
    assert_clean_error(proc, "loopback address only")


def test_the_server_reconnects_after_its_connection_is_cut(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)

    async def body(c: Client) -> list[Any]:
        before = await c.call_tool("status", {})
        with psycopg.connect(db_url, autocommit=True) as conn:  # e.g. a Postgres restart
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE application_name LIKE 'cogd-mcp%'")
        cut = await c.call_tool("status", {})
        after = await c.call_tool("remember", {"text": "The boiler was serviced in May."})
        return [before, cut, after]

    before, cut, after = drive(stdio(env, "--user", "bob"), body)
    assert not before.is_error
    assert cut.is_error and "connection was lost" in cut.content[0].text
    assert not after.is_error and after.structured_content["user"] == "bob"


def test_why_does_not_show_another_users_memory_in_a_chain(db_url: str, tmp_path: Path) -> None:
    from agent.config import load_settings
    from agent.runtime import Runtime

    api = Runtime(load_settings(data_dir=tmp_path / "data", database_url=db_url)).memory_api(
        db_url, "alice")
    try:
        mine = api.remember("Alice keeps her bike in the blue shed.")["memory_id"]
        theirs = api.remember("Bob's bank PIN is 9911.", user="bob")["memory_id"]
        with psycopg.connect(db_url, autocommit=True) as conn:  # an insight merged across users
            conn.execute("INSERT INTO memory_links (source_id, target_id, link_type) "
                         "VALUES (%s, %s, 'supersedes')", (mine, theirs))
        chain = api.why(mine)["chain"]
    finally:
        api.close()
    assert "9911" not in json.dumps(chain)
    hidden = [n for n in chain if n.get("hidden")]
    assert [n["memory_id"] for n in hidden] == [theirs] and hidden[0]["content"] is None
