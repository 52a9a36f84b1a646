"""Issue 41 item 4: one `why` (agent/services/access/introspect.py) behind the CLI, the REPL,
the HTTP API and the MCP server: the same provenance for one memory from each, scoped
to the caller's user (another user's memory is refused); only `cogd why` without
--user sees every user's memories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent.config import Settings
from agent.services.access import introspect
from tests.acceptance.test_cli import run
from tests.conftest import cogd_env


@pytest.fixture
def api(settings: Settings, db_url: str) -> Any:
    from agent.runtime import Runtime

    made = Runtime(settings).memory_api(db_url, "alice", channel="api", app="cogd-test-why")
    yield made
    made.close()


def test_why_is_the_same_from_cli_repl_http_and_mcp_and_refuses_another_user(
        settings: Settings, db_url: str, tmp_path: Path, api: Any) -> None:
    from fastapi.testclient import TestClient

    from agent.commands.chat import ChatClient, _slash
    from agent.commands.mcp import build_server
    from agent.commands.serve import build_app
    from agent.db.connect import connect
    from agent.services.access.tokens import create

    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    mine = api.remember("Alice keeps her kayak in the boathouse by the lake.")["memory_id"]
    api.remember("Bob keeps his bike behind the bakery.", user="bob")
    with connect(db_url, autocommit=True) as conn:
        uids = dict(conn.execute("SELECT handle, user_id FROM users").fetchall())
        tokens = {h: create(conn, uids[h], h, "test", "tester", False)["token"]
                  for h in ("alice", "bob")}
    # HTTP, as alice and as bob
    with TestClient(build_app(settings, db_url, api)) as http:
        def get(who: str) -> Any:
            return http.get(f"/v1/memories/{mine}/why",
                            headers={"Authorization": f"Bearer {tokens[who]}"})
        by_http, refused_http = get("alice"), get("bob")
    assert by_http.status_code == 200, by_http.text
    assert refused_http.status_code == 404 and "kayak" not in refused_http.text
    found = by_http.json()
    assert found["user"] == "alice" and found["memory_id"] == mine
    assert "boathouse" in found["chain"][0]["content"] and found["chain"][0]["turn"]
    # MCP (stdio's server; the user argument names the caller)
    server = build_server(api)

    async def tool(args: dict[str, Any]) -> Any:
        try:
            return await server.call_tool("why", args)
        except Exception as exc:  # the SDK raises a tool's error in-process
            return exc

    by_mcp = anyio.run(tool, {"target": mine})
    assert by_mcp.structured_content == found
    refused_mcp = anyio.run(tool, {"target": mine, "user": "bob"})
    text = str(refused_mcp) if isinstance(refused_mcp, Exception) else (
        refused_mcp.content[0].text if refused_mcp.is_error else "not refused")
    assert "no memory" in text and "kayak" not in text
    # the REPL's /why
    out: dict[str, list[str]] = {"alice": [], "bob": []}
    for who in out:
        client = ChatClient(settings, db_url, who, None)
        try:
            assert _slash(client, f"/why {mine}", out[who].append) is True
        finally:
            client.close()
    assert out["alice"] == ["\n".join(introspect.why_lines(found))]
    assert out["bob"][0].startswith("no memory") and "kayak" not in out["bob"][0]
    # the operator's CLI: --user scopes it like the others; without it, every user's
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"))
    as_alice = run("why", mine, "--user", "alice", "--json", env=env)
    assert as_alice.returncode == 0, as_alice.stderr
    assert json.loads(as_alice.stdout) == found
    plain = run("why", mine, "--user", "alice", env=env)
    assert plain.stdout.splitlines() == introspect.why_lines(found)
    as_bob = run("why", mine, "--user", "bob", env=env)
    assert as_bob.returncode != 0 and "no memory" in as_bob.stderr
    assert "kayak" not in as_bob.stdout + as_bob.stderr
    operator = run("why", mine, "--json", env=env)
    assert operator.returncode == 0, operator.stderr
    assert json.loads(operator.stdout) == {**found, "user": None}
    assert "every user's memories" in run("why", "--help", env=env).stdout


def test_a_text_target_finds_only_the_callers_memory(settings: Settings, api: Any) -> None:
    api.remember("Alice keeps her kayak in the boathouse by the lake.")
    with pytest.raises(Exception, match="no memory or decision of 'bob' matches"):
        api.why("kayak boathouse", user="bob")
    assert "kayak" in api.why("kayak boathouse")["chain"][0]["content"]
