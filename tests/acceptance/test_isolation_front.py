"""Issue 38 at the front door, with two users' tokens: the morning brief and status give
a caller their own (findings 1 and 7), a chunked body over the limit is refused before
the server has read past it (finding 4), and a session name that is too long or
malformed is a 400, not a 500 (finding 10)."""

from __future__ import annotations

import json
import secrets
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from mcp.types import TextResourceContents

from agent.commands.serve import MAX_BODY_BYTES
from agent.config import Settings
from agent.runtime import Runtime
from bench.suites.body_limit import MIB, chunked_upload
from night_cycle.progress import NullProgress
from night_cycle.runner import NightCycle
from tests.acceptance.test_cli import COGD, assert_clean_error, run
from tests.acceptance.test_mcp import over_http, wait_listening
from tests.acceptance.test_memory_cli import env_for
from tests.acceptance.test_serve import client, server  # noqa: F401  (the fixture)
from tests.conftest import free_port
from tests.integration.test_night_cycle import _session, import_jsonl

ALICE = [("user", "I am secretly interviewing at Globex next Tuesday, do not tell anyone."),
         ("assistant", "Understood, the Globex interview stays between us."),
         ("user", "My vault code is 7-3-9-1 and I take sertraline every morning."),
         ("assistant", "Noted: the vault code and the morning sertraline.")]
BOB = [("user", "My tomato plants have yellow leaves, what should I do?"),
       ("assistant", "Yellow leaves often mean too much water."),
       ("user", "Should I add compost to the tomato bed?"),
       ("assistant", "A little compost helps the tomatoes.")]
ALICES = ("Globex", "7-3-9-1", "sertraline")
# a body sent past the limit that the server cannot have read: the kernel's socket
# buffers on loopback (tcp_wmem + tcp_rmem maxima, a few MiB) hold what it did not
SLACK = 16 * MIB
LONG = secrets.token_hex(1500)  # a session name of 3,000 characters that do not compress


def test_the_brief_and_status_over_mcp_are_the_callers_own(settings: Settings, db_url: str,
                                                           tmp_path: Path) -> None:
    settings.llm.roles["night_cycle"] = "heuristic"
    start = datetime.now(UTC) - timedelta(hours=6)
    import_jsonl(db_url, settings, _session("alice-s", "alice", start, ALICE)
                 + _session("bob-s", "bob", start + timedelta(minutes=30), BOB))
    result = NightCycle(settings, db_url, progress=NullProgress()).run()
    assert result["user_briefs"] == 2
    operators = Path(result["brief"]).read_text()  # the installation's, for the CLI
    assert "7-3-9-1" in operators and "tomato" in operators, operators
    api = Runtime(settings).memory_api(db_url, "bob")
    try:
        direct = {u: api.brief(user=u) for u in ("alice", "bob", "carol")}
    finally:
        api.close()
    assert "7-3-9-1" in direct["alice"]["text"] and "tomato" not in direct["alice"]["text"]
    assert "tomato" in direct["bob"]["text"]
    assert direct["carol"]["run_id"] is None and "no morning brief for carol" in (
        direct["carol"]["note"])
    for got in direct.values():
        assert "path" not in got and str(settings.data_dir) not in json.dumps(got)

    env = env_for(db_url, tmp_path)
    tokens = {name: json.loads(run("token", "create", "--user", user, "--json", *flag,
                                   env=env).stdout)["token"]
              for name, user, flag in (("alice", "alice", ()), ("bob", "bob", ()),
                                       ("operator", "bob", ("--operator",)))}
    port = free_port()
    log = (tmp_path / "mcp.log").open("w")
    proc = subprocess.Popen([COGD, "mcp", "--http", "--port", str(port)], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_listening(proc, port, tmp_path / "mcp.log")

        async def read(c: Any) -> dict[str, Any]:
            brief = (await c.read_resource("cogd://brief/latest")).contents[0]
            assert isinstance(brief, TextResourceContents)
            status = (await c.call_tool("status", {})).structured_content
            return {"brief": brief.text, "status": status}

        url = f"http://127.0.0.1:{port}/mcp"
        seen = {name: over_http(url, token, read) for name, token in tokens.items()}
        # a chunked body past the MCP SDK's own limit (4 MiB in mcp>=2.3, counted as the
        # chunks arrive) is refused before it is read, like `cogd serve`'s BodyLimit
        answer, sent = chunked_upload("127.0.0.1", port, "/mcp", tokens["alice"], 64 * MIB)
        assert answer.startswith(b"HTTP/1.1 413"), (answer[:300], sent)
        assert sent <= 4 * MIB + SLACK, sent
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    bobs = seen["bob"]["brief"]
    assert "tomato" in bobs, bobs
    assert not any(secret in bobs for secret in ALICES), bobs  # finding 1
    assert str(settings.data_dir) not in bobs and "brief.md" not in bobs
    assert "7-3-9-1" in seen["alice"]["brief"] and "tomato" not in seen["alice"]["brief"]
    assert seen["operator"]["brief"] == bobs  # an operator token's brief is its user's
    # finding 7: a user's status is their own counts; the operator's adds the installation's
    assert set(seen["bob"]["status"]) == {"user"}
    assert seen["bob"]["status"]["user"]["handle"] == "bob"
    assert seen["bob"]["status"]["user"]["turns"] == seen["operator"]["status"]["user"]["turns"]
    assert {"processes", "tables", "user"} <= set(seen["operator"]["status"])
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()


def test_status_over_http_shows_global_figures_to_an_operator_token_only(
        server: dict[str, Any]) -> None:  # noqa: F811
    made = run("token", "create", "--user", "alice", "--operator", "--json",
               env=server["env"])
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["operator"] is True
    server["tokens"]["root"] = json.loads(made.stdout)
    alice, bob, root = client(server, "alice"), client(server, "bob"), client(server, "root")
    assert alice.post("/v1/memories", json={"text": "The spare key is under the blue pot."}
                      ).status_code == 201
    for who in (alice, bob):
        got = who.get("/v1/status")
        assert got.status_code == 200 and set(got.json()) == {"user"}, got.text
        assert "pid" not in got.text and "tables" not in got.text
    assert bob.get("/v1/status").json()["user"]["active_memories"] == 0
    full = root.get("/v1/status").json()
    assert full["user"]["handle"] == "alice" and full["user"]["active_memories"] == 1
    assert full["tables"]["memories"] >= 1 and isinstance(full["processes"], list)
    listed = json.loads(run("token", "list", "--json", env=server["env"]).stdout)
    assert sorted((t["user"], t["operator"]) for t in listed) == [
        ("alice", False), ("alice", True), ("bob", False)]
    assert "operator" in run("token", "list", env=server["env"]).stdout


def test_a_chunked_body_over_the_limit_is_refused_before_it_is_read(
        server: dict[str, Any]) -> None:  # noqa: F811
    host, port = server["base"].removeprefix("http://").split(":")
    token = server["tokens"]["alice"]["token"]
    for route in ("/v1/recall", "/v1/import"):
        # 32 MiB past the limit: a server that reads the whole body takes all of it
        answer, sent = chunked_upload(host, int(port), route, token, MAX_BODY_BYTES + 32 * MIB)
        assert answer.startswith(b"HTTP/1.1 413"), (route, answer[:300], sent)
        assert b"connection: close" in answer.lower() and b"is over" in answer
        assert sent <= MAX_BODY_BYTES + SLACK, (route, sent)
    # under the limit, chunked is fine; and the server still answers afterwards
    alice = client(server, "alice")
    small = alice.post("/v1/recall", content=iter([b'{"query": ', b'"blue pot"}']),
                       headers={"Content-Type": "application/json"})
    assert small.status_code == 200, small.text
    assert alice.get("/v1/status").status_code == 200


def test_a_session_name_too_long_or_malformed_is_a_400(server: dict[str, Any]) -> None:  # noqa: F811
    alice = client(server, "alice")
    body = {"model": "cogd", "messages": [{"role": "user", "content": "Hello there."}]}
    # 3,000 random characters: a repeated one compresses under the index's row limit
    for name, fragment in ((LONG, "at most 200"), ("a\tb", "control characters"),
                           ("", "empty")):
        got = alice.post("/v1/chat/completions", json=body, headers={"X-Cogd-Session": name})
        assert got.status_code == 400, (len(name), got.status_code, got.text)
        assert fragment in got.json()["error"]["message"], got.text
    # any session key: `cogd chat --session` gets one clear line, not a database error
    assert_clean_error(run("chat", "--user", "alice", "--session", LONG,
                           env=server["env"]), "session key is 3000 characters")
    with psycopg.connect(server["env"]["COGD_DATABASE_URL"]) as conn:
        assert conn.execute("SELECT count(*) FROM sessions WHERE length(external_id) > 500"
                            ).fetchone() == (0,)
