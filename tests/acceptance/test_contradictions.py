"""Contradiction resolution (issue 42 item 3; seed 000 §4.5.3) from the CLI, over MCP (the
SDK's own client, stdio) and over HTTP (`cogd serve`), on a real Postgres: the losing
memory is superseded, never deleted; `why` on it names the resolution; the resolution is
audit-logged and happens once; each caller sees and resolves only their own.

The contradictions are flagged the way consolidation flags them: two memories of one
user and a `contradicts` link with the classifier's metadata (the consolidation pass's
own insert, agent/db/sql/consolidation.sql consolidation_link).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import psycopg

from agent.db.queries import query
from tests.acceptance.test_cli import COGD, assert_clean_error, run
from tests.acceptance.test_mcp import drive, stdio
from tests.acceptance.test_memory_cli import env_for
from tests.acceptance.test_session_views import _uid
from tests.acceptance.test_session_views import api as api

OLD, NEW = "I live in Berlin with my sister.", "I live in Lisbon now, near the river."
CLASSIFIER = "negation/value heuristic (no LLM configured)"


def flag(db_url: str, handle: str, old: str = OLD, new: str = NEW) -> dict[str, Any]:
    """Two memories of `handle` (old dated 2026-09-01, new 2026-10-05) and the link
    consolidation writes when its classifier finds they contradict. Their ids."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        uid = _uid(conn, handle)
        ids = []
        for text, at in ((old, "2026-09-01T10:00:00+00:00"), (new, "2026-10-05T10:00:00+00:00")):
            row = conn.execute("INSERT INTO memories (memory_type, content, user_id, created_at,"
                               " importance) VALUES ('fact', %s, %s, %s, 0.6) "
                               "RETURNING memory_id", (text, uid, at)).fetchone()
            assert row is not None
            ids.append(row[0])
        conn.execute(query("consolidation_link"), (ids[1], ids[0], "contradicts", 0.71,
                     json.dumps({"classifier": CLASSIFIER, "parsed_by": "no_llm",
                                 "resolved": False})))
        link = conn.execute("SELECT id FROM memory_links WHERE source_id = %s AND "
                            "link_type = 'contradicts'", (ids[1],)).fetchone()
        assert link is not None
    return {"id": link[0], "a": str(ids[0]), "b": str(ids[1])}


def state(db_url: str, c: dict[str, Any]) -> dict[str, Any]:
    """What the database holds after a resolution of contradiction `c`."""
    with psycopg.connect(db_url) as conn:
        status = dict(conn.execute("SELECT memory_id::text, status FROM memories WHERE "
                                   "memory_id = ANY(%s::uuid[])", ([c["a"], c["b"]],)))
        supersedes = conn.execute(
            "SELECT source_id::text, target_id::text FROM memory_links WHERE link_type = "
            "'supersedes' AND target_id = ANY(%s::uuid[]) ORDER BY target_id",
            ([c["a"], c["b"]],)).fetchall()
        res = conn.execute("SELECT action, kept_id::text, superseded::text[], how, actor "
                           "FROM contradiction_resolutions WHERE link_id = %s",
                           (c["id"],)).fetchall()
        audit = conn.execute("SELECT actor, details FROM audit_log WHERE action = "
                             "'resolve_contradiction' AND target = %s",
                             (f"contradiction:{c['id']}",)).fetchall()
    return {"status": status, "supersedes": supersedes, "resolutions": res, "audit": audit}


def test_cli_lists_resolves_once_and_why_shows_the_resolution(db_url: str,
                                                               tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    mine, theirs = flag(db_url, "alice"), flag(db_url, "bob", "I hate coffee.",
                                               "I drink coffee every morning.")
    listed = run("contradictions", "--user", "alice", "--json", env=env, timeout=300)
    assert listed.returncode == 0, listed.stderr
    items = json.loads(listed.stdout)["contradictions"]
    assert [(i["id"], i["a"]["memory_id"], i["a"]["content"], i["b"]["memory_id"],
             i["b"]["content"]) for i in items] == [(mine["id"], mine["a"], OLD, mine["b"],
                                                     NEW)]
    assert items[0]["a"]["created_at"].startswith("2026-09-01")
    assert items[0]["flagged"]["by"] == f"consolidation ({CLASSIFIER})"
    every = json.loads(run("contradictions", "--json", env=env).stdout)["contradictions"]
    assert {i["id"] for i in every} == {mine["id"], theirs["id"]}
    plain = run("contradictions", "--user", "alice", env=env)
    assert f"#{mine['id']}" in plain.stdout and OLD in plain.stdout and NEW in plain.stdout

    # bob's id, resolved as alice: not found, one line; an unknown action: click's usage
    assert_clean_error(run("resolve", str(theirs["id"]), "keep-a", "--user", "alice",
                           env=env), f"no contradiction {theirs['id']} of this user")
    assert run("resolve", str(mine["id"]), "keep-c", env=env).returncode == 2
    assert_clean_error(run("resolve", str(mine["id"]), "keep-a", "--text", "x", env=env),
                       "--text goes with merge only")
    assert state(db_url, theirs)["resolutions"] == []

    got = run("resolve", str(mine["id"]), "keep-b", "--user", "alice", "--json", env=env)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    assert (out["action"], out["kept"], out["superseded"]) == ("keep-b", mine["b"],
                                                                [mine["a"]])
    after = state(db_url, mine)
    assert after["status"] == {mine["a"]: "superseded", mine["b"]: "active"}  # kept, not deleted
    assert after["supersedes"] == [(mine["b"], mine["a"])]
    assert after["resolutions"] == [("keep_b", mine["b"], [mine["a"]], "the user's choice",
                                     "cli:alice")]
    assert len(after["audit"]) == 1 and after["audit"][0][1]["kept"] == mine["b"]

    # resolved once: the second resolve is refused, nothing changes
    assert_clean_error(run("resolve", str(mine["id"]), "keep-a", env=env),
                       f"contradiction {mine['id']} is already resolved")
    assert state(db_url, mine) == after
    assert json.loads(run("contradictions", "--user", "alice", "--json",
                          env=env).stdout)["contradictions"] == []

    why = run("why", mine["a"], "--user", "alice", "--json", env=env, timeout=300)
    assert why.returncode == 0, why.stderr
    node = json.loads(why.stdout)["chain"][0]
    assert node["status"] == "superseded"
    assert [(r["contradiction_id"], r["action"], r["kept"]) for r in node["resolved_by"]] == [
        (mine["id"], "keep-b", mine["b"])]
    text = run("why", mine["a"], "--user", "alice", env=env, timeout=300).stdout
    assert "superseded by contradiction resolution" in text and mine["b"] in text

    # merge with the user's text: a new memory stands, both sources superseded
    merged = json.loads(run("resolve", str(theirs["id"]), "merge", "--text",
                            "I used to hate coffee; now I drink it every morning.", "--json",
                            env=env).stdout)
    gone = state(db_url, theirs)
    assert gone["status"] == {theirs["a"]: "superseded", theirs["b"]: "superseded"}
    assert sorted(gone["supersedes"]) == sorted([(merged["kept"], theirs["a"]),
                                                 (merged["kept"], theirs["b"])])
    assert gone["resolutions"][0][3] == "merged text given by the user"
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT content, status, user_id = %s FROM memories WHERE "
                           "memory_id = %s", (_uid(conn, "bob"), merged["kept"])).fetchone()
    assert row == ("I used to hate coffee; now I drink it every morning.", "active", True)


def test_the_repl_lists_and_resolves_its_users_own(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    mine, theirs = flag(db_url, "cara"), flag(db_url, "erin")
    chat = subprocess.run(
        [COGD, "chat", "--user", "cara"], env=env, capture_output=True, text=True,
        timeout=600, input=f"/contradictions\n/resolve {theirs['id']} keep-a\n"
                          f"/resolve {mine['id']} keep-b\n/contradictions\n")
    assert chat.returncode == 0, chat.stderr
    out = chat.stderr  # piped: slash commands answer on stderr
    assert f"#{mine['id']}" in out and f"#{theirs['id']}" not in out
    assert "resolve: /resolve ID keep-a | keep-b | merge [merged text]" in out
    assert f"no contradiction {theirs['id']} of this user" in out
    assert f"contradiction {mine['id']} resolved (keep-b" in out
    after = out[out.index(f"contradiction {mine['id']} resolved"):]
    assert "no open contradictions" in after, after  # the second /contradictions
    assert state(db_url, mine)["resolutions"] == [("keep_b", mine["b"], [mine["a"]],
                                                   "the user's choice", "repl:cara")]
    assert state(db_url, theirs)["resolutions"] == []


def test_mcp_tools_resolve_the_callers_own(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    mine, theirs = flag(db_url, "carol"), flag(db_url, "dave")

    async def body(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await c.list_tools()).tools}}
        out["list"] = (await c.call_tool("contradictions", {})).structured_content
        other = await c.call_tool("resolve_contradiction",
                                  {"contradiction_id": theirs["id"], "action": "keep-a"})
        out["other"] = (other.is_error, " ".join(getattr(p, "text", "") for p in other.content))
        done = await c.call_tool("resolve_contradiction",
                                 {"contradiction_id": mine["id"], "action": "keep-a"})
        assert not done.is_error, [getattr(p, "text", "") for p in done.content]
        out["done"] = done.structured_content
        again = await c.call_tool("resolve_contradiction",
                                  {"contradiction_id": mine["id"], "action": "keep-b"})
        out["again"] = (again.is_error, " ".join(getattr(p, "text", "") for p in again.content))
        out["why"] = (await c.call_tool("why", {"target": mine["b"]})).structured_content
        out["after"] = (await c.call_tool("contradictions", {})).structured_content
        return out

    got = drive(stdio(env, "--user", "carol"), body)
    assert {"contradictions", "resolve_contradiction", "timeline"} <= got["tools"]
    assert [i["id"] for i in got["list"]["contradictions"]] == [mine["id"]]  # not dave's
    assert got["other"][0] and f"no contradiction {theirs['id']}" in got["other"][1]
    assert (got["done"]["action"], got["done"]["kept"], got["done"]["superseded"]) == (
        "keep-a", mine["a"], [mine["b"]])
    assert got["again"][0] and "already resolved" in got["again"][1]
    node = got["why"]["chain"][0]
    assert node["memory_id"] == mine["b"] and node["status"] == "superseded"
    assert node["resolved_by"][0]["kept"] == mine["a"]
    assert got["after"]["contradictions"] == []
    after = state(db_url, mine)
    assert after["status"] == {mine["a"]: "active", mine["b"]: "superseded"}
    assert after["resolutions"][0][4] == "mcp:carol" and len(after["audit"]) == 1
    assert state(db_url, theirs)["resolutions"] == []


def test_http_routes_resolve_the_callers_own(api: dict[str, httpx.Client],
                                            db_url: str) -> None:
    alice, bob = api["alice"], api["bob"]
    mine, theirs = flag(db_url, "alice"), flag(db_url, "bob")
    listed = alice.get("/v1/contradictions").json()
    assert [i["id"] for i in listed["contradictions"]] == [mine["id"]]
    assert bob.get("/v1/contradictions").json()["contradictions"][0]["id"] == theirs["id"]
    assert api["anon"].get("/v1/contradictions").status_code == 401
    # alice's contradiction, resolved by bob: 404, and nothing changes
    r = bob.post(f"/v1/contradictions/{mine['id']}/resolve", json={"action": "keep-a"})
    assert r.status_code == 404 and "no contradiction" in r.text
    assert alice.post(f"/v1/contradictions/{mine['id']}/resolve",
                      json={"action": "sideways"}).status_code == 400
    # merge with no text and no LLM: the named heuristic (the newer statement) stands in
    r = alice.post(f"/v1/contradictions/{mine['id']}/resolve", json={"action": "merge"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["how"].startswith("newer-statement heuristic")
    assert sorted(out["superseded"]) == sorted([mine["a"], mine["b"]])
    merged = alice.get(f"/v1/memories/{out['kept']}").json()
    assert merged["content"] == NEW and merged["status"] == "active"
    old = alice.get(f"/v1/memories/{mine['a']}").json()
    assert old["status"] == "superseded" and old["content"] == OLD  # the row is still there
    why = alice.get(f"/v1/memories/{mine['a']}/why").json()
    assert why["chain"][0]["resolved_by"][0]["kept"] == out["kept"]
    again = alice.post(f"/v1/contradictions/{mine['id']}/resolve", json={"action": "keep-a"})
    assert again.status_code == 400 and "already resolved" in again.text
    after = state(db_url, mine)
    assert len(after["resolutions"]) == 1 and after["resolutions"][0][4].startswith("api:")
    assert len(after["audit"]) == 1
    assert state(db_url, theirs)["resolutions"] == []
