"""`cogd watch` tails Claude Code transcripts into memory; `cogd hook` prints what memory
holds for a prompt (issue 16, seed 002). The real CLI on a real Postgres."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg

from tests.acceptance.test_cli import COGD, run
from tests.acceptance.test_memory_cli import env_for

OLD = "6b0f1c1e-0000-4000-8000-00000000aaaa"  # an earlier Claude Code session
NOW = "6b0f1c1e-0000-4000-8000-00000000bbbb"  # the session the prompt comes from


def line(n: int, session: str, role: str, content: Any, **extra: Any) -> str:
    return json.dumps({"type": role, "uuid": f"u-{session[-4:]}-{n}", "sessionId": session,
                       "timestamp": f"2026-11-0{1 + n % 9}T10:00:0{n % 10}Z",
                       "message": {"role": role, "content": content}, **extra}) + "\n"


EARLIER = [
    line(1, OLD, "user", "We decided the staging database runs on port 6543 from now on."),
    line(2, OLD, "assistant", [{"type": "text", "text": "Noted: staging Postgres on 6543."},
                               {"type": "tool_use", "id": "t1", "name": "Bash",
                                "input": {"command": "echo SECRET-TOOL-INPUT"}}]),
    line(3, OLD, "user", [{"type": "tool_result", "tool_use_id": "t1",
                           "content": "SECRET-TOOL-OUTPUT"}]),
    line(4, OLD, "user", "<command-name>/clear</command-name>", isMeta=True),
    json.dumps({"type": "summary", "summary": "Staging port", "leafUuid": "x"}) + "\n",
    line(5, OLD, "user", "My cat Miso is allergic to chicken."),
    line(7, OLD, "user", "Summary of the earlier conversation: COMPACTED", isCompactSummary=True),
    line(8, OLD, "user", "Subagent prompt: SIDECHAIN", isSidechain=True),
]


def turns(db_url: str) -> list[tuple[str, str, str]]:
    with psycopg.connect(db_url) as conn:
        return [(r[0], r[1], r[2]) for r in conn.execute(
            "SELECT s.external_id, d.role, d.content FROM day_table d JOIN sessions s "
            "USING (session_id) ORDER BY d.created_at, d.role DESC").fetchall()]


def test_watch_once_imports_messages_skips_tool_lines_and_is_idempotent(
        db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    project = tmp_path / "projects" / "-home-alice-app"
    project.mkdir(parents=True)
    transcript = project / f"{OLD}.jsonl"
    transcript.write_text("".join(EARLIER) + '{"type": "user", "uuid"')  # last one unfinished
    first = run("watch", str(tmp_path / "projects"), "--once", "--user", "alice", "--json",
                env=env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {
        "files": 1, "lines": 8, "skipped": 5, "inserted": 3, "duplicates": 0,
        "scratched": json.loads(first.stdout)["scratched"], "errors": 0, "error_lines": []}
    got = turns(db_url)
    assert [(s, r) for s, r, _ in got] == [(f"claude:{OLD}", "user"),
                                           (f"claude:{OLD}", "assistant"),
                                           (f"claude:{OLD}", "user")]
    assert got[1][2] == "Noted: staging Postgres on 6543."
    assert not any(w in c for w in ("SECRET", "/clear", "COMPACTED", "SIDECHAIN")
                   for _, _, c in got)
    # the unfinished line is completed (a user line without a message: not a turn), a
    # broken line is reported; a rerun reads only the new bytes
    # a message over Postgres's tsvector limit is refused by the database: reported,
    # and the lines around it are imported
    huge = " ".join(f"w{i}x{i * 7919 % 100003}" for i in range(150_000))
    with transcript.open("a") as f:
        f.write(': "x"}\n' + "not json\n" + line(9, OLD, "user", huge)
                + line(6, OLD, "assistant", "Poor Miso."))
    second = run("watch", str(transcript), "--once", "--user", "alice", "--json", env=env)
    assert second.returncode == 0, second.stderr
    data = json.loads(second.stdout)
    assert (data["lines"], data["skipped"], data["inserted"], data["duplicates"],
            data["errors"]) == (4, 1, 1, 0, 2), data
    assert any("not JSON" in e for e in data["error_lines"])
    assert any("refused by the database" in e for e in data["error_lines"]), data
    # a copy of the whole file elsewhere (another offset): every turn is already there
    copy = tmp_path / "copy.jsonl"
    copy.write_text(transcript.read_text())
    third = json.loads(run("watch", str(copy), "--once", "--user", "alice", "--json",
                           env=env).stdout)
    assert (third["inserted"], third["duplicates"]) == (0, 4)
    assert len(turns(db_url)) == 4
    with psycopg.connect(db_url) as conn:
        owners = conn.execute("SELECT DISTINCT u.handle FROM day_table d JOIN users u "
                              "USING (user_id)").fetchall()
    assert owners == [("alice",)]


def test_watch_follows_a_growing_transcript_until_stopped(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    transcript = tmp_path / f"{NOW}.jsonl"
    transcript.write_text("")
    log = (tmp_path / "watch.log").open("w")
    proc = subprocess.Popen([COGD, "watch", str(transcript), "--interval", "0.2",
                             "--user", "alice"], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        time.sleep(1.0)
        with transcript.open("a") as f:
            f.write(line(1, NOW, "user", "The quarterly report is due on the 14th."))
        deadline = time.monotonic() + 90
        while not turns(db_url):
            assert proc.poll() is None, (tmp_path / "watch.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the appended turn never arrived"
            time.sleep(0.2)
    finally:
        proc.terminate()
        rc = proc.wait(30)
        log.close()
    assert rc == 0, (tmp_path / "watch.log").read_text()[-2000:]
    assert turns(db_url) == [(f"claude:{NOW}", "user",
                              "The quarterly report is due on the 14th.")]
    found = run("recall", "When is the quarterly report due?", "--user", "alice", "--json",
                env=env)
    assert "14th" in json.loads(found.stdout)["items"][0]["content"]


def test_hook_prints_a_strong_match_once_and_nothing_for_what_was_never_said(
        db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    transcript = tmp_path / f"{OLD}.jsonl"
    transcript.write_text("".join(EARLIER))
    assert run("watch", str(transcript), "--once", "--user", "alice", env=env).returncode == 0

    def hook(prompt: str, session: str = NOW, user: str = "alice") -> Any:
        payload = {"session_id": session, "transcript_path": "/tmp/x.jsonl", "cwd": "/tmp",
                   "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        return subprocess.run([COGD, "hook", "--user", user], input=json.dumps(payload),
                              env=env, capture_output=True, text=True, timeout=120)

    asked = hook("Which port does the staging database run on?")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("[cogd memory: from earlier conversations]")
    assert "6543" in asked.stdout and asked.stdout.rstrip().endswith("[/cogd memory]")
    # the session's first prompt: the handoff (the last session's note) and what recall
    # matched, strongly (issue 42 item 5)
    carried, recalled = asked.stdout.split("\nRecalled:\n")
    assert "Carried over from the last session:" in carried
    assert "6543" in recalled and "chicken" not in recalled
    again = hook("Which port does the staging database run on?")
    assert again.returncode == 0 and again.stdout == ""  # cooldown: shown once in 10 minutes
    never = hook("What is the capital of Mongolia?")
    assert never.returncode == 0 and never.stdout == ""
    other_user = hook("Is my cat allergic to anything?", user="bob",
                      session="6b0f1c1e-0000-4000-8000-00000000cccc")
    assert other_user.returncode == 0 and other_user.stdout == ""  # alice's, not bob's
    # alice's session named by bob's hook: session keys are per user (issue 38), so it is
    # bob's own session of that key, never alice's (it would recall as alice)
    borrowed = hook("Is my cat allergic to anything?", user="bob")
    assert (borrowed.returncode, borrowed.stdout) == (0, ""), borrowed.stderr
    same_session = hook("Is Miso allergic to anything?", session=OLD)
    # already in it: not recalled; resumed 26 days later, the session starts again with
    # its handoff (the loop's rule: no user turn of it within [context] session_quiet_minutes)
    assert same_session.returncode == 0 and "Recalled:" not in same_session.stdout
    assert "Last session: 26 days ago" in same_session.stdout
    with psycopg.connect(db_url) as conn:
        thoughts = conn.execute("SELECT kind, theme, source_ids->-1->>'trigger_detector', "
                                "source_ids->-1->>'piece' FROM thoughts ORDER BY 4").fetchall()
    # what was printed, stored as shown (what the cooldown reads): the handoff of alice's
    # session, the recalled port; bob's first prompts had nothing to hand over
    assert thoughts == [("proactive_recall", "prompt_submit", "prompt_submit", "handoff")] * 2 + [
        ("proactive_recall", "prompt_submit", "prompt_submit", "recall")]


def test_hook_errors_never_block_the_prompt(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    bad = subprocess.run([COGD, "hook"], input="{not json", env=env, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.strip() == "cogd hook: the hook input starts with '{' but is not JSON"
    # exit 2 would block the prompt in Claude Code: a bad option or config gives 1
    broken = tmp_path / "broken.toml"
    broken.write_text("[recall]\nhnsw_ef_search = 0\n")
    for args, extra in ((["hook", "--bogus"], {}), (["hook", "--timeout", "0.1"], {}),
                        (["hook"], {"COGD_CONFIG": str(broken)}),
                        (["--data-dir", str(tmp_path), "hook", "--bogus"], {})):
        got = subprocess.run([COGD, *args], input="hello", env={**env, **extra},
                             capture_output=True, text=True, timeout=120)
        assert (got.returncode, got.stdout) == (1, ""), (args, got.stderr)
    assert run("recall", "--bogus", env=env).returncode == 2  # other commands keep 2
    missing = run("watch", str(tmp_path / "nope"), "--once", env=env)
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
