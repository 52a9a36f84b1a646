"""Episodes and the timeline (issue 42 item 4; seed 000 §4.3, §4.6.3) on a real Postgres:
a multi-session history with dates across three months goes through `cogd import`, the
night cycle marks episodes and milestones, and `cogd timeline` returns them dated, in
order, with their sources; --from/--to filter; the REPL's /timeline shows them; and a
chat turn "what happened in October 2026?" carries October's episodes (the reply's
metadata, not the small model's words, is checked). Another user's episodes never show.
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from tests.acceptance.test_cli import COGD, assert_clean_error, run
from tests.acceptance.test_mcp import drive, stdio
from tests.acceptance.test_memory_cli import env_for

# (session, start, the user's lines): each session an hour of one topic
SESSIONS = [
    ("garden", "2026-09-06T09:00:00+00:00", [
        "I am planning the vegetable garden: tomatoes, beans and raised beds.",
        "The raised beds need cedar boards and good compost for the tomatoes.",
        "I decided to build three raised beds for the garden this weekend.",
    ]),
    ("job", "2026-10-03T18:00:00+00:00", [
        "Big news: I got the offer from Northwind for the data engineering job.",
        "The Northwind job means moving to Lisbon, which excites me.",
        "I decided to accept the Northwind offer and start in November.",
    ]),
    ("party", "2026-10-21T20:00:00+00:00", [
        "Marta's birthday party was lovely; we baked a chocolate cake.",
        "Marta loved the cake and the party lasted until midnight.",
    ]),
    ("alps", "2026-11-14T08:00:00+00:00", [
        "We moved to Lisbon last week and the apartment is full of boxes.",
        "The Lisbon apartment has a balcony where the tomatoes could grow.",
    ]),
]
OTHER = ("erin", "notes", "2026-10-10T10:00:00+00:00",
         "Erin's secret sailing plan for the regatta in October.")


def history() -> str:
    lines = []
    for session, start, said in SESSIONS:
        at = datetime.fromisoformat(start)
        for i, text in enumerate(said):
            for role, content in (("user", text), ("assistant", f"Noted: {text.lower()}")):
                lines.append({"session": session, "speaker": "maya", "role": role,
                              "content": content, "timestamp": at.isoformat(),
                              "external_id": f"{session}-{i}-{role}"})
                at += timedelta(minutes=4)
    who, session, start, text = OTHER
    lines.append({"session": session, "speaker": who, "role": "user", "content": text,
                  "timestamp": start, "external_id": "erin-1"})
    return "".join(json.dumps(line) + "\n" for line in lines)


def timeline(env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    proc = run("timeline", "--user", "maya", "--json", *args, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout)["episodes"])


def test_import_night_cycle_timeline_and_chat(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path, COGD_LLM__ROLES__NIGHT_CYCLE="heuristic")
    jsonl = tmp_path / "history.jsonl"
    jsonl.write_text(history())
    imported = run("import", str(jsonl), "--json", env=env, timeout=600)
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["inserted"] == 21
    # maya's turns before the night (its cleanup deletes the old ones a block holds)
    with psycopg.connect(db_url) as conn:
        turns = {str(r[0]): (r[1], r[2]) for r in conn.execute(
            "SELECT d.entry_id, s.external_id, d.created_at FROM day_table d "
            "JOIN sessions s USING (session_id) JOIN users u ON u.user_id = d.user_id "
            "WHERE u.handle = 'maya'")}
    night = run("night-cycle", "--json", env=env, timeout=900)
    assert night.returncode == 0, night.stderr
    stage = json.loads(night.stdout)["stages"]["11"]
    assert stage["episodes"] >= 4 and stage["detector"].endswith("heuristic"), stage

    got = timeline(env)
    starts = [e["start"] for e in got]
    assert starts == sorted(starts)  # oldest first
    by_session: dict[str, list[dict[str, Any]]] = {}
    for e in got:
        assert e["sources"]["turns"] and e["sources"]["blocks"], e
        assert set(e["sources"]["turns"]) <= set(turns), "a source that is not maya's turn"
        sessions = {turns[t][0] for t in e["sources"]["turns"]}
        assert len(sessions) == 1, e  # an episode never spans two sessions of other days
        by_session.setdefault(sessions.pop(), []).append(e)
        span = (datetime.fromisoformat(e["start"]), datetime.fromisoformat(e["end"]))
        assert all(span[0] <= turns[t][1] <= span[1] for t in e["sources"]["turns"]), e
        assert e["titled_by"] == "salient-terms title heuristic" and e["title"]
    assert set(by_session) == {"garden", "job", "party", "alps"}
    job = by_session["job"][0]
    assert job["start"].startswith("2026-10-03") and "Northwind" in job["title"]
    kinds = {(m["kind"], m["content"].split(":")[0]) for e in got for m in e["milestones"]}
    assert ("first_mention", "first mention of Northwind") in kinds
    assert any(k == "decision" for k, _ in kinds) and any(k == "move" for k, _ in kinds)
    assert "Erin" not in json.dumps(got) and "regatta" not in json.dumps(got)

    # range filters: October only, then from mid-October on
    october = timeline(env, "--from", "2026-10-01", "--to", "2026-10-31")
    assert {e["id"] for e in october} == {e["id"] for e in by_session["job"]
                                          + by_session["party"]}
    later = timeline(env, "--from", "2026-10-15")
    assert {e["id"] for e in later} == {e["id"] for e in by_session["party"]
                                        + by_session["alps"]}
    assert_clean_error(run("timeline", "--user", "maya", "--from", "October", env=env),
                       "--from must be a date")
    # past --limit the newest are kept (oldest first) and the output says it was cut
    cut = json.loads(run("timeline", "--user", "maya", "--json", "--limit", "2", env=env,
                         timeout=300).stdout)
    assert len(got) > 2 and cut["truncated"] is True
    assert [e["id"] for e in cut["episodes"]] == [e["id"] for e in got[-2:]]
    whole = json.loads(run("timeline", "--user", "maya", "--json", env=env,
                           timeout=300).stdout)
    assert whole["truncated"] is False
    cut_text = run("timeline", "--user", "maya", "--limit", "2", env=env).stdout
    assert cut_text.startswith("(the newest 2 episodes; older ones in the range left out")
    assert f"episode:{got[0]['id']}" not in cut_text and f"episode:{got[-1]['id']}" in cut_text
    # the MCP tool (the SDK's client, stdio): the same episodes, maya's only
    async def body(c: Any) -> Any:
        got = await c.call_tool("timeline", {"start": "2026-10-01", "end": "2026-10-31"})
        bad = await c.call_tool("timeline", {"start": "soon"})
        return got.structured_content, bad.is_error
    over_mcp, refused = drive(stdio(env, "--user", "maya"), body)
    assert over_mcp["user"] == "maya" and refused and over_mcp["truncated"] is False
    assert [e["id"] for e in over_mcp["episodes"]] == [e["id"] for e in october]
    plain = run("timeline", "--user", "maya", env=env).stdout
    assert "2026-10" in plain and f"episode:{job['id']}" in plain and "sources:" in plain

    # a chat turn asking what happened in October carries October's episodes (metadata)
    chat = subprocess.run([COGD, "chat", "--user", "maya", "--json"],
                          input="/timeline 2026-10-01 2026-10-31\n"
                                "what happened in October 2026?\n",
                          env=env, capture_output=True, text=True, timeout=600)
    assert chat.returncode == 0, chat.stderr
    assert f"episode:{job['id']}" in chat.stderr  # the REPL's /timeline (stderr when piped)
    reply = json.loads(chat.stdout.strip().splitlines()[-1])
    dated = reply["metadata"]["timeline"]
    assert dated["asked"] == "in October 2026"
    assert dated["from"].startswith("2026-10-01") and dated["to"].startswith("2026-11-01")
    assert [e["id"] for e in dated["episodes"]] == [e["id"] for e in october]
    assert all(e["sources"]["turns"] for e in dated["episodes"])
