"""Who the user is, at the start (issue 42 items 1 and 6), end to end on a real Postgres:
alice tells facts across three `cogd chat` sessions, `cogd consolidate --once` reads them,
and the fourth session's first reply carries the profile (with the turns it came from)
and the handoff in its `--json` metadata. The same profile is shown by `cogd profile`,
over MCP (the SDK's client against `cogd mcp`, stdio) and over HTTP (`GET /v1/profile`
with alice's token); bob's token and bob's MCP server see none of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.acceptance.test_cli import assert_clean_error, run
from tests.acceptance.test_mcp import drive, stdio
from tests.acceptance.test_memory_cli import env_for
from tests.acceptance.test_session_views import api  # noqa: F401  (the cogd serve fixture)

SESSIONS = (
    "Hi, I'm Alice. I live in Lisbon.",
    "I work as a nurse at Santa Maria hospital.\nMy sister Maria is visiting next week.",
    "I moved to Porto last month.",
)
FACTS = {"name": "Alice", "residence": "Porto", "person:sister": "Maria"}


def _chat(env: dict[str, str], text: str) -> list[dict[str, Any]]:
    import subprocess

    from tests.acceptance.test_cli import COGD

    done = subprocess.run([COGD, "chat", "--user", "alice", "--json"], input=text + "\n",
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _values(claims: list[dict[str, Any]]) -> dict[str, str]:
    return {c["slot"]: c["value"] for c in claims}


def test_the_profile_reaches_the_fourth_session_mcp_and_http(
        api: dict[str, httpx.Client], db_url: str, tmp_path: Path) -> None:  # noqa: F811
    env = env_for(db_url, tmp_path)
    for text in SESSIONS:  # each `cogd chat` is a new session
        _chat(env, text)
    consolidated = run("consolidate", "--once", env=env, timeout=600)
    assert consolidated.returncode == 0, consolidated.stderr

    first = _chat(env, "Good morning!")[0]  # the fourth session's first turn
    meta = first["metadata"]
    assert "handoff" in meta and "profile" in meta, sorted(meta)
    shown = {i["slot"]: i for i in meta["profile"]["items"]}
    assert {k: shown[k]["value"] for k in FACTS} == FACTS
    assert shown["residence"]["replaced"] == "Lisbon"
    assert all(i["source_ids"][0].startswith("day_table:") for i in shown.values())
    assert any(i["kind"] == "note" for i in meta["handoff"]["items"])

    # bad input: one line, exit 2
    no_user = dict(env)
    no_user.pop("COGD_USER", None)
    assert_clean_error(run("profile", env=no_user), "give --user HANDLE (whose profile)")
    assert_clean_error(run("profile", "--user", "nobody-here", env=env), "no user 'nobody-here'")
    plain = run("profile", "--user", "alice", env=env)
    assert plain.returncode == 0 and "sister: Maria" in plain.stdout, plain.stdout
    assert "1 superseded claim(s) kept" in plain.stdout
    # the REPL's /profile: the same lines, the REPL's own user's only
    import subprocess

    from tests.acceptance.test_cli import COGD

    for who in ("alice", "bob"):
        repl = subprocess.run([COGD, "chat", "--user", who], input="/profile\n/profile x\n",
                              env=env, capture_output=True, text=True, timeout=600)
        assert repl.returncode == 0, repl.stderr
        said = repl.stderr  # piped: slash commands answer on stderr
        assert "usage: /profile" in said, said
        if who == "alice":
            assert "sister: Maria" in said and "Porto" in said, said
            assert "1 superseded claim(s) kept (`cogd profile --json` lists them)" in said
        else:
            assert "nothing known about bob yet" in said, said
            assert "Maria" not in said and "Porto" not in said, said
    cli = run("profile", "--user", "alice", "--json", env=env)
    assert cli.returncode == 0, cli.stderr
    profile = json.loads(cli.stdout)
    assert {k: _values(profile["claims"])[k] for k in FACTS} == FACTS
    assert [s["value"] for s in profile["superseded"]] == ["Lisbon"]
    sources = {c["slot"]: c["source_ids"] for c in profile["claims"]}
    assert sources["name"] == shown["name"]["source_ids"]

    async def read(c: Any) -> dict[str, Any]:
        out = {}
        for name in ("profile", "handoff"):
            res = await c.call_tool(name, {})
            assert not res.is_error, [getattr(p, "text", "") for p in res.content]
            out[name] = res.structured_content
        return out

    over_mcp = drive(stdio(env, "--user", "alice"), read)
    assert over_mcp["profile"]["claims"] == profile["claims"]
    assert "sister: Maria" in over_mcp["handoff"]["text"]
    assert over_mcp["handoff"]["profile"]["items"][0]["slot"] == "name"
    bobs_mcp = drive(stdio(env, "--user", "bob"), read)
    assert bobs_mcp["profile"]["claims"] == [] and "Maria" not in json.dumps(bobs_mcp)

    over_http = api["alice"].get("/v1/profile")
    assert over_http.status_code == 200, over_http.text
    assert over_http.json()["claims"] == profile["claims"]
    assert over_http.json()["user"] == "alice"
    bobs = api["bob"].get("/v1/profile")
    assert bobs.status_code == 200 and bobs.json() == {"user": "bob", "claims": [],
                                                       "superseded": []}
    assert "Maria" not in api["bob"].get("/v1/handoff").text
    assert api["anon"].get("/v1/profile").status_code == 401
