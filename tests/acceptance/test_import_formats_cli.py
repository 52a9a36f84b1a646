"""`cogd import` of real exports (issue 43): ChatGPT's and Claude.ai's conversations.json
and a Markdown chat log, detected by --format auto, written through the live write path,
idempotently; a truncated or foreign file is refused in one line and writes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from tests.acceptance.test_cli import assert_clean_error, run
from tests.acceptance.test_memory_cli import env_for

DATA = Path(__file__).parents[1] / "data" / "imports"
TABLES = ("day_table", "sessions", "users", "gate_decisions")


def rows(db_url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT d.external_id, d.role, d.speaker, d.created_at, s.external_id, u.handle "
            "FROM day_table d JOIN sessions s USING (session_id) JOIN users u "
            "ON u.user_id = d.user_id ORDER BY d.external_id").fetchall()


def counts(db_url: str) -> dict[str, int]:
    with psycopg.connect(db_url) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
                for t in TABLES}


def at(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def test_chatgpt_and_claude_exports_import_once(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    before = counts(db_url)
    first = run("import", str(DATA / "chatgpt_conversations.json"), "--user", "ana", "--json",
                env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert (report["format"], report["inserted"], report["duplicates"], report["errors"]) == (
        "chatgpt", 6, 0, 0)
    assert report["skipped"] == {"non-text part": 1, "other branch": 2, "system": 1,
                                 "tool": 1, "tool call": 1}
    conv_a, conv_b = ("6630a1b2-0000-4000-8000-00000000000a",
                      "6630a1b2-0000-4000-8000-00000000000b")
    got = rows(db_url)
    assert [(r[0], r[1], r[2], r[4], r[5]) for r in got] == [
        ("chatgpt:a-1", "assistant", "ChatGPT", conv_a, "ana"),
        ("chatgpt:a-2b", "assistant", "ChatGPT", conv_a, "ana"),
        ("chatgpt:ab-1", "assistant", "ChatGPT", conv_b, "ana"),
        ("chatgpt:u-1", "user", None, conv_a, "ana"),
        ("chatgpt:u-2b", "user", None, conv_a, "ana"),
        ("chatgpt:ub-1", "user", None, conv_b, "ana"),
    ]
    stamps = {r[0]: r[3] for r in got}
    assert stamps["chatgpt:u-1"] == at(2024, 5, 1, 10, 0, 0)
    assert stamps["chatgpt:a-2b"] == at(2024, 5, 1, 10, 1, 35)
    assert stamps["chatgpt:ab-1"] is not None  # no create_time: the server's time

    claude = run("import", str(DATA / "claude_conversations.json"), "--user", "ana", env=env,
                 timeout=600)
    assert claude.returncode == 0, claude.stderr
    summary = claude.stdout.strip()
    assert summary.startswith("imported 5 turns from a claude export, 0 already present, "
                              "0 refused, "), summary
    assert summary.endswith(" flagged to scratch_buffer (5 messages read; skipped: "
                            "1 attachment, 1 tool_use part)"), summary
    claude_rows = [r for r in rows(db_url) if r[0].startswith("claude:")]
    assert [(r[0], r[1], r[2], r[3]) for r in claude_rows] == [
        ("claude:m-0001", "user", None, datetime(2024, 6, 1, 8, 0, 1, 123456, tzinfo=UTC)),
        ("claude:m-0002", "assistant", "Claude", at(2024, 6, 1, 8, 0, 9)),
        ("claude:m-0003", "user", None, at(2024, 6, 1, 8, 4)),
        ("claude:m-0004", "user", None, at(2024, 6, 2, 19, 30)),
        ("claude:m-0005", "assistant", "Claude", at(2024, 6, 2, 19, 30, 7)),
    ]
    assert {r[4] for r in claude_rows} == {"c0a1e9d2-1111-4aaa-9bbb-000000000001",
                                           "c0a1e9d2-1111-4aaa-9bbb-000000000002"}
    after = counts(db_url)
    assert after["day_table"] == before["day_table"] + 11
    assert after["sessions"] == before["sessions"] + 4

    # a second run of either adds nothing
    for name, fmt, n in (("chatgpt_conversations.json", "auto", 6),
                         ("claude_conversations.json", "claude", 5)):
        again = run("import", str(DATA / name), "--user", "ana", "--format", fmt, "--json",
                    env=env, timeout=600)
        assert again.returncode == 0, again.stderr
        assert (json.loads(again.stdout)["inserted"], json.loads(again.stdout)["duplicates"]
                ) == (0, n)
    assert counts(db_url) == after


def test_text_log_imports_with_its_speakers(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    proc = run("import", str(DATA / "chat_log.md"), "--json", env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["format"] == "text"
    assert json.loads(proc.stdout)["inserted"] == 6
    # in file order (the external id's third field); the whole file is one session, owned
    # by its first user speaker
    got = sorted(rows(db_url), key=lambda r: int(r[0].split(":")[2]))
    assert {(r[4], r[5]) for r in got} == {("chat_log", "Ana")}
    assert [r[3] for r in got] == [at(2024, 5, 1, 9, 30), at(2024, 5, 1, 9, 31),
                                   at(2024, 5, 1, 9, 31), at(2024, 5, 2), at(2024, 5, 2),
                                   at(2024, 5, 3, 8, 0)]
    assert [(r[1], r[2]) for r in got] == [
        ("user", "Ana"), ("assistant", "Claude"), ("user", "Ana"), ("user", "Ana"),
        ("assistant", "Assistant"), ("user", "Ana")]


def test_a_truncated_or_foreign_file_writes_nothing(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    before = counts(db_url)
    text = (DATA / "chatgpt_conversations.json").read_text()
    cut = tmp_path / "conversations.json"
    cut.write_text(text[: len(text) * 2 // 3])  # the first conversation whole, the second cut
    proc = run("import", str(cut), env=env, timeout=300)
    assert_clean_error(proc, f"{cut}: truncated JSON (it ends at line ")
    foreign = tmp_path / "contacts.csv"
    foreign.write_text("id,name\n1,ana\n")
    assert_clean_error(run("import", str(foreign), env=env, timeout=300),
                       f"{foreign}: line 1 is neither JSON nor a 'Name: message' line")
    data = json.loads(text)
    del data[1]["mapping"]["ab-1"]["message"]["author"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    assert_clean_error(run("import", str(broken), "--format", "chatgpt", env=env, timeout=300),
                       "node 'ab-1': not a ChatGPT export: no message.author.role")
    assert counts(db_url) == before
