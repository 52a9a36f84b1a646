"""`cogd serve` (issue 16): the HTTP API on a real uvicorn on 127.0.0.1 and a real
Postgres, driven by httpx and by the `openai` SDK (chat completions, streaming too);
bearer tokens bound to users, and one user never sees another's memories."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from openai import OpenAI

from tests.acceptance.test_cli import COGD, run
from tests.acceptance.test_memory_cli import env_for
from tests.conftest import free_port


@pytest.fixture
def server(db_url: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    env = env_for(db_url, tmp_path, COGD_LLM__ROLES__CONSOLIDATION="heuristic")
    tokens = {}
    for user in ("alice", "bob"):
        made = run("token", "create", "--user", user, "--name", "test", "--create-user",
                   "--json", env=env)
        assert made.returncode == 0, made.stderr
        tokens[user] = json.loads(made.stdout)
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([COGD, "serve", "--port", str(port)], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "cogd serve did not start"
            time.sleep(0.2)
        opened: list[httpx.Client] = []
        yield {"base": base, "env": env, "tokens": tokens, "clients": opened}
    finally:
        for c in locals().get("opened", []):
            c.close()
        proc.terminate()
        proc.wait(60)
        log.close()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def client(server: dict[str, Any], user: str | None) -> httpx.Client:
    headers = {} if user is None else {
        "Authorization": f"Bearer {server['tokens'][user]['token']}"}
    made = httpx.Client(base_url=server["base"], headers=headers, timeout=120)
    server["clients"].append(made)  # closed by the fixture
    return made


def test_tokens_scope_every_route_to_their_user(server: dict[str, Any], db_url: str) -> None:
    alice, bob, anon = client(server, "alice"), client(server, "bob"), client(server, None)
    made = alice.post("/v1/memories", json={"text": "My locker code is 4512."})
    assert made.status_code == 201, made.text
    mid = made.json()["memory_id"]
    found = alice.post("/v1/recall", json={"query": "What is my locker code?"}).json()
    assert found["user"] == "alice" and "4512" in found["items"][0]["content"]
    assert found["verdict"] == "strong_match"
    theirs = bob.post("/v1/recall", json={"query": "What is my locker code?"}).json()
    assert theirs["user"] == "bob"
    assert not any("4512" in i["content"] for i in theirs["items"])
    assert [m["id"] for m in alice.get("/v1/memories").json()["memories"]] == [mid]
    assert bob.get("/v1/memories").json()["memories"] == []
    assert alice.get(f"/v1/memories/{mid}").json()["content"] == "My locker code is 4512."
    chain = alice.get(f"/v1/memories/{mid}/why").json()["chain"]
    assert "4512" in chain[0]["turn"]["content"]
    for path in (f"/v1/memories/{mid}", f"/v1/memories/{mid}/why"):
        got = bob.get(path)
        assert got.status_code == 404 and got.json()["error"]["type"] == "not_found_error"
    assert alice.get("/v1/status").json()["user"]["active_memories"] == 1
    assert bob.get("/v1/status").json()["user"]["active_memories"] == 0
    assert bob.delete(f"/v1/memories/{mid}").status_code == 404  # not bob's to forget
    assert alice.get(f"/v1/memories/{mid}").status_code == 200
    forgot = alice.delete(f"/v1/memories/{mid}")
    assert forgot.status_code == 200 and forgot.json()["removed"]["memories"] == 1
    assert "4512" not in forgot.text
    assert alice.get(f"/v1/memories/{mid}").status_code == 404
    assert not any("4512" in i["content"] for i in alice.post(
        "/v1/recall", json={"query": "What is my locker code?"}).json()["items"])
    # no token, a wrong one, a revoked one: 401 with a JSON error, on every /v1 route
    for path in ("/v1/status", "/v1/memories", "/v1/export"):
        assert anon.get(path).status_code == 401
    wrong = httpx.get(f"{server['base']}/v1/status", headers={"Authorization": "Bearer cogd_x"})
    assert wrong.status_code == 401 and "unknown or revoked" in wrong.json()["error"]["message"]
    revoked = run("token", "revoke", server["tokens"]["bob"]["prefix"], env=server["env"])
    assert revoked.returncode == 0, revoked.stderr
    assert bob.get("/v1/status").status_code == 401
    listed = json.loads(run("token", "list", "--json", env=server["env"]).stdout)
    assert {(t["user"], t["revoked_at"] is None) for t in listed} == {("alice", True),
                                                                       ("bob", False)}
    assert not any("token" in t for t in listed)  # never the token itself
    with psycopg.connect(db_url) as conn:
        stored = conn.execute("SELECT token_hash FROM api_tokens").fetchall()
        audit = conn.execute("SELECT action FROM audit_log WHERE action LIKE 'token_%' "
                             "ORDER BY id").fetchall()
    assert server["tokens"]["alice"]["token"] not in {r[0] for r in stored}
    assert audit == [("token_create",), ("token_create",), ("token_revoke",)]
    with psycopg.connect(db_url) as conn:
        forgets = conn.execute("SELECT actor, details::text FROM audit_log "
                               "WHERE action = 'forget'").fetchall()
    assert len(forgets) == 1 and forgets[0][0].endswith(":alice")
    assert "4512" not in forgets[0][1]


def test_import_and_export_are_the_callers_own(server: dict[str, Any]) -> None:
    alice, bob = client(server, "alice"), client(server, "bob")
    lines = [
        {"session": "trip", "role": "user", "content": "We land in Lisbon at 9:40.",
         "timestamp": "2026-10-01T08:00:00Z", "external_id": "t1"},
        {"session": "trip", "role": "assistant", "content": "Noted, 9:40 in Lisbon.",
         "timestamp": "2026-10-01T08:00:05Z", "external_id": "t2"},
        {"session": "trip", "role": "user", "content": "Bob's secret plan.", "user": "bob",
         "external_id": "t3"},
    ]
    body = "\n".join(json.dumps(line) for line in lines) + "\nnot json\n"
    got = alice.post("/v1/import", content=body).json()
    assert (got["inserted"], got["errors"]) == (2, 2), got
    assert any("is not the token's user" in e for e in got["error_lines"])
    again = alice.post("/v1/import", content=body).json()
    assert (again["inserted"], again["duplicates"]) == (0, 2)
    exported = alice.get("/v1/export")
    assert exported.status_code == 200
    rows = [json.loads(x) for x in exported.text.splitlines()]
    assert [r["content"] for r in rows] == ["We land in Lisbon at 9:40.", "Noted, 9:40 in Lisbon."]
    assert {r["user"] for r in rows} == {"alice"}
    assert "Lisbon" not in bob.get("/v1/export").text
    # keys are per user (issue 38): bob naming alice's session and line keys gets his own
    # session and turn; he learns nothing (no duplicate) and alice's stay hers
    own = bob.post("/v1/import", content=json.dumps(lines[0] | {"content": "Bob's own trip."}))
    assert own.status_code == 200
    assert (own.json()["inserted"], own.json()["duplicates"], own.json()["errors"]) == (1, 0, 0)
    assert "Lisbon" not in bob.get("/v1/export").text
    assert "Bob's own trip." not in alice.get("/v1/export").text


def test_bad_requests_get_a_4xx_json_error(server: dict[str, Any]) -> None:
    alice = client(server, "alice")
    cases = [
        (alice.post("/v1/recall", json={}), 422, "query"),
        (alice.post("/v1/recall", json={"query": "  "}), 400, "query is empty"),
        (alice.post("/v1/recall", json={"query": "x", "k": 0}), 400, "k must be"),
        (alice.post("/v1/recall", content="{not json",
                    headers={"Content-Type": "application/json"}), 422, ""),
        (alice.get("/v1/memories/not-a-uuid"), 400, "not a memory id"),
        (alice.get("/v1/memories", params={"limit": 0}), 400, "limit must be"),
        (alice.get("/v1/memories", params={"status": "gone"}), 400, "status must be"),
        (alice.post("/v1/memories", json={"text": "x" * 20_001}), 400, "at most 20000"),
        (alice.post("/v1/chat/completions", json={"model": "cogd", "messages": []}), 400,
         "no user message"),
        (alice.post("/v1/chat/completions", json={"messages": "hi"}), 422, "messages"),
    ]
    for response, status, fragment in cases:
        assert response.status_code == status, (response.status_code, response.text)
        assert fragment in response.json()["error"]["message"], response.text
    anon = client(server, None)
    early = anon.post("/v1/recall", content="{not json",
                      headers={"Content-Type": "application/json"})
    assert early.status_code == 401  # the token is checked before the body is read
    host, port = server["base"].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:  # a lying length
        raw.sendall(b"POST /v1/import HTTP/1.1\r\nHost: x\r\nContent-Length: 1099511627776"
                    b"\r\nConnection: close\r\n\r\nx")
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413") and b"is over" in answer
    nowhere = alice.get("/v1/nothing-here")
    assert nowhere.status_code == 404 and nowhere.json()["error"]["type"] == "not_found_error"
    odd = alice.post("/v1/recall", content=r'{"query": "what about \u0000 and \ud800?"}',
                     headers={"Content-Type": "application/json"})
    assert odd.status_code == 200, odd.text  # stored text is cleaned, not a 500
    far = alice.get("/v1/memories", params={"offset": 2**63})
    assert far.status_code in (400, 422), far.text
    docs = httpx.get(f"{server['base']}/openapi.json").json()
    assert {"/v1/chat/completions", "/v1/recall", "/v1/memories", "/v1/import",
            "/v1/export", "/v1/status", "/healthz"} <= set(docs["paths"])
    assert httpx.get(f"{server['base']}/docs").status_code == 200


def test_openai_sdk_chats_with_memory_streaming_and_not(server: dict[str, Any],
                                                         db_url: str) -> None:
    sdk = {u: OpenAI(base_url=f"{server['base']}/v1", api_key=server["tokens"][u]["token"],
                     max_retries=0, timeout=300) for u in ("alice", "bob")}
    said = sdk["alice"].chat.completions.create(model="cogd", messages=[
        {"role": "user", "content": "Remember this: my gym locker code is 7781."}])
    assert said.object == "chat.completion" and said.choices[0].message.content
    asked = sdk["alice"].chat.completions.create(model="cogd", messages=[
        {"role": "user", "content": "What was my gym locker code again?"}])
    assert "7781" in (asked.choices[0].message.content or "")
    stream = sdk["alice"].chat.completions.create(model="cogd", stream=True, messages=[
        {"role": "user", "content": [{"type": "text", "text": "Tell me my locker code."}]}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert "7781" in text
    other = sdk["bob"].chat.completions.create(model="cogd", messages=[
        {"role": "user", "content": "What was my gym locker code again?"}])
    for c in sdk.values():
        c.close()
    assert "7781" not in (other.choices[0].message.content or "")
    with psycopg.connect(db_url) as conn:
        sessions = conn.execute(
            "SELECT u.handle, s.channel, count(d.*) FROM sessions s JOIN users u USING (user_id)"
            " JOIN day_table d USING (session_id) WHERE s.external_id LIKE 'api:%%'"
            " GROUP BY 1, 2 ORDER BY 1").fetchall()
    assert sessions == [("alice", "api", 6), ("bob", "api", 2)]  # each turn and its reply
    # a session name is the caller's own: the same name from two users, two sessions
    body = {"model": "cogd", "messages": [{"role": "user", "content": "Hello there."}]}
    for user in ("alice", "bob"):
        got = client(server, user).post("/v1/chat/completions", json=body,
                                        headers={"X-Cogd-Session": "shared"})
        assert got.status_code == 200, got.text
    with psycopg.connect(db_url) as conn:
        named = conn.execute("SELECT u.handle FROM sessions s JOIN users u USING (user_id) "
                             "WHERE s.external_id LIKE '%%:shared' ORDER BY 1").fetchall()
    assert named == [("alice",), ("bob",)]


def test_token_commands_refuse_bad_input_cleanly(db_url: str, tmp_path: Path) -> None:
    from tests.acceptance.test_cli import assert_clean_error

    env = env_for(db_url, tmp_path)
    assert_clean_error(run("token", "revoke", "cogd_nothing", env=env), "no token")
    assert_clean_error(run("token", "create", "--user", "  ", "--create-user", env=env),
                       "cannot be empty")
    assert_clean_error(run("token", "create", "--user", "anaa", env=env), "no user 'anaa'")
    made = json.loads(run("token", "create", "--user", "ana", "--create-user", "--json",
                          env=env).stdout)
    assert run("token", "revoke", made["token_id"], env=env).returncode == 0
    again = run("token", "revoke", made["token_id"], "--json", env=env)
    assert json.loads(again.stdout)["revoked"] is False  # already revoked: said, not an error
    assert run("token", "list", env=env).stdout.count("revoked") == 1
