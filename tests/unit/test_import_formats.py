"""The readers of real exports (agent/services/access/import_formats.py), on small files
shaped like ChatGPT's and Claude.ai's conversations.json and a Markdown chat log."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.errors import InputError
from agent.services.access.import_formats import detect_format, parse_file
from agent.services.access.importer import ImportLine

DATA = Path(__file__).parents[1] / "data" / "imports"
CHATGPT = DATA / "chatgpt_conversations.json"
CLAUDE = DATA / "claude_conversations.json"
TEXT = DATA / "chat_log.md"
CONV_A = "6630a1b2-0000-4000-8000-00000000000a"
CONV_B = "6630a1b2-0000-4000-8000-00000000000b"


def at(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def test_detect_format_from_the_first_characters(tmp_path: Path) -> None:
    assert detect_format(CHATGPT) == "chatgpt"
    assert detect_format(CLAUDE) == "claude"
    assert detect_format(TEXT) == "text"
    jsonl = tmp_path / "history.json"
    jsonl.write_text(json.dumps({"session": "s", "content": "hi"}) + "\n")
    assert detect_format(jsonl) == "cogd"
    # a .jsonl file is cogd's whatever it holds: its bad lines are reported one by one
    (tmp_path / "odd.jsonl").write_text("not json\n")
    assert detect_format(tmp_path / "odd.jsonl") == "cogd"


@pytest.mark.parametrize(("body", "fragment"), [
    ("", "the file is empty"),
    ("   \n\n", "the file is empty"),
    ('[{"id": 1, "messages": []}]', "neither a ChatGPT export (no 'mapping') nor a Claude"),
    ('{"role": "user"}\n', "line 1 is JSON but not a cogd JSONL line"),
    ("id,name,email\n1,ana,a@example.org\n", "line 1 is neither JSON nor a 'Name: message'"),
    ("# Title\n\nimport os\n", "line 3 is neither JSON nor"),
    ("a\x00b", "binary data"),
    ("# only a heading\n", "no messages"),
])
def test_detect_format_refuses_a_foreign_file_in_one_line(
        tmp_path: Path, body: str, fragment: str) -> None:
    path = tmp_path / "export.txt"
    path.write_text(body)
    with pytest.raises(InputError) as exc:
        detect_format(path)
    assert str(exc.value).startswith(f"{path}: ") and fragment in str(exc.value)
    assert "\n" not in str(exc.value)


def test_chatgpt_follows_the_current_branch_and_counts_what_it_skips() -> None:
    parsed = parse_file(CHATGPT, "chatgpt", "ana")
    assert parsed.format == "chatgpt"
    assert parsed.lines == [
        ImportLine(1, CONV_A, "ana", "user", "I want to plan a weekend in Lisbon.",
                   at(2024, 5, 1, 10, 0, 0), "chatgpt:u-1"),
        ImportLine(2, CONV_A, "ChatGPT", "assistant",
                   "Lisbon in May is warm: walk Alfama,\nthen take tram 28.",
                   at(2024, 5, 1, 10, 0, 12), "chatgpt:a-1", named="ChatGPT"),
        # the edited question (u-2b, the branch current_node is on), not the first one
        ImportLine(3, CONV_A, "ana", "user",
                   "What about Sintra? Here is a photo of the palace.",
                   at(2024, 5, 1, 10, 1, 30), "chatgpt:u-2b"),
        ImportLine(4, CONV_A, "ChatGPT", "assistant",
                   "Sintra is a day trip: 40 minutes by train from Rossio.",
                   at(2024, 5, 1, 10, 1, 35), "chatgpt:a-2b", named="ChatGPT"),
        ImportLine(5, CONV_B, "ana", "user", "Remind me: my locker code is 4512.",
                   datetime(2024, 5, 2, 10, 0, 0, 500000, tzinfo=UTC), "chatgpt:ub-1"),
        ImportLine(6, CONV_B, "ChatGPT", "assistant", "Noted: 4512.", None, "chatgpt:ab-1",
                   named="ChatGPT"),
    ]
    assert dict(parsed.skipped) == {"other branch": 2, "system": 1, "tool call": 1,
                                    "tool": 1, "non-text part": 1}


def test_chatgpt_without_current_node_takes_the_last_child(tmp_path: Path) -> None:
    data = json.loads(CHATGPT.read_text())
    del data[0]["current_node"]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    ids = [line.external_id for line in parse_file(path, "chatgpt", "ana").lines]
    assert ids[:4] == ["chatgpt:u-1", "chatgpt:a-1", "chatgpt:u-2b", "chatgpt:a-2b"]


def break_chatgpt(tmp_path: Path, how: str) -> Path:
    data = json.loads(CHATGPT.read_text())
    mapping = data[0]["mapping"]
    if how == "author":
        del mapping["a-1"]["message"]["author"]
    elif how == "current":
        data[0]["current_node"] = "gone"
    elif how == "parent":
        mapping["u-1"]["parent"] = "nowhere"
    elif how == "cycle":
        mapping["client-created-root"]["parent"] = "a-2b"
    elif how == "mapping":
        data[1]["mapping"] = []
    elif how == "time":
        mapping["u-1"]["message"]["create_time"] = "yesterday"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.mark.parametrize(("how", "fragment"), [
    ("author", f"conversation '{CONV_A}': node 'a-1': not a ChatGPT export: no "
               "message.author.role"),
    ("current", "current_node 'gone' is not in mapping"),
    ("parent", "node 'u-1' has parent 'nowhere', which is not in mapping"),
    ("cycle", "is its own ancestor"),
    ("mapping", "not a ChatGPT export: conversation 2 has no 'mapping' object"),
    ("time", "node 'u-1': create_time 'yesterday' is not a Unix time"),
])
def test_a_broken_chatgpt_export_names_the_node(tmp_path: Path, how: str,
                                                fragment: str) -> None:
    path = break_chatgpt(tmp_path, how)
    with pytest.raises(InputError) as exc:
        parse_file(path, "chatgpt", "ana")
    assert str(exc.value).startswith(f"{path}: ") and fragment in str(exc.value)


def test_a_truncated_export_names_where_it_ends(tmp_path: Path) -> None:
    text = CHATGPT.read_text()
    path = tmp_path / "conversations.json"
    path.write_text(text[: len(text) // 2])
    lines = text[: len(text) // 2].count("\n") + 1
    for fmt in ("chatgpt", "claude"):
        with pytest.raises(InputError) as exc:
            parse_file(path, fmt, "ana")
        assert str(exc.value).startswith(f"{path}: truncated JSON (it ends at line {lines} ")
    # wherever the file is cut (in a string, a number, a literal, between values)
    for fmt, source in (("chatgpt", CHATGPT), ("claude", CLAUDE)):
        whole = source.read_text()
        for cut in range(1, len(whole) - 2, 11):
            path.write_text(whole[:cut])
            with pytest.raises(InputError, match="truncated JSON"):
                parse_file(path, fmt, "ana")
    path.write_text('[{"mapping": {}} oops]')
    with pytest.raises(InputError, match=r"not valid JSON at line 1 column 18"):
        parse_file(path, "chatgpt", "ana")
    path.write_text(json.dumps({"conversations": []}))
    with pytest.raises(InputError, match="expected a list of conversations, got a JSON dict"):
        parse_file(path, "chatgpt", "ana")


def test_claude_export_reads_text_parts_and_counts_the_rest() -> None:
    conv1, conv2 = ("c0a1e9d2-1111-4aaa-9bbb-000000000001",
                    "c0a1e9d2-1111-4aaa-9bbb-000000000002")
    parsed = parse_file(CLAUDE, "claude", "ana")
    assert parsed.format == "claude"
    assert parsed.lines == [
        ImportLine(1, conv1, "ana", "user", "Which tomatoes grow well on a balcony?",
                   datetime(2024, 6, 1, 8, 0, 1, 123456, tzinfo=UTC), "claude:m-0001"),
        ImportLine(2, conv1, "Claude", "assistant",
                   "Cherry varieties such as Sungold do well in pots.",
                   at(2024, 6, 1, 8, 0, 9), "claude:m-0002", named="Claude"),
        ImportLine(3, conv1, "ana", "user", "Here is my seed list.", at(2024, 6, 1, 8, 4),
                   "claude:m-0003"),
        # an older export's message: `text` only, `content` empty
        ImportLine(4, conv2, "ana", "user", "I moved the project database to Postgres.",
                   at(2024, 6, 2, 19, 30), "claude:m-0004"),
        ImportLine(5, conv2, "Claude", "assistant",
                   "Good choice; pgvector covers the embeddings.", at(2024, 6, 2, 19, 30, 7),
                   "claude:m-0005", named="Claude"),
    ]
    assert dict(parsed.skipped) == {"tool_use part": 1, "attachment": 1}


def test_a_broken_claude_export_names_the_message(tmp_path: Path) -> None:
    data = json.loads(CLAUDE.read_text())
    data[1]["chat_messages"][1]["created_at"] = "June 2nd"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as exc:
        parse_file(path, "claude", "ana")
    assert str(exc.value) == (f"{path}: conversation 'c0a1e9d2-1111-4aaa-9bbb-000000000002': "
                              "message 'm-0005': created_at 'June 2nd' is not ISO 8601")
    data[1]["chat_messages"][1]["created_at"] = None
    data[1]["chat_messages"][1]["sender"] = "system"
    data[0]["chat_messages"][0].pop("uuid")
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="'c0a1e9d2-1111-4aaa-9bbb-000000000001': not a "
                                         "Claude export: message 1 has no 'uuid'"):
        parse_file(path, "claude", "ana")
    data[0]["chat_messages"][0]["uuid"] = "m-0001"
    path.write_text(json.dumps(data))
    parsed = parse_file(path, "claude", "ana")
    assert parsed.skipped["sender system"] == 1 and len(parsed.lines) == 4


def test_text_log_joins_continuations_and_dates_messages() -> None:
    parsed = parse_file(TEXT, "text", "user")
    assert parsed.format == "text"
    assert [(x.lineno, x.speaker, x.role, x.content, x.timestamp, x.named)
            for x in parsed.lines] == [
        (4, "Ana", "user", "I want to plan a weekend in Lisbon.\nIt should not cost much.",
         at(2024, 5, 1, 9, 30), "Ana"),
        (6, "Claude", "assistant",
         "Lisbon in May is lovely.\n\nWalk Alfama early, before the crowds.",
         at(2024, 5, 1, 9, 31), "Claude"),
        (10, "Ana", "user", "What about Sintra?", at(2024, 5, 1, 9, 31), "Ana"),
        (13, "Ana", "user", "Back again: I booked the train.", at(2024, 5, 2), "Ana"),
        (14, "Assistant", "assistant", "Good. Take the 09:11 from Rossio.", at(2024, 5, 2),
         "Assistant"),
        (15, "Ana", "user", "One more thing: the hotel is in Baixa.", at(2024, 5, 3, 8, 0),
         "Ana"),
    ]
    assert {x.session for x in parsed.lines} == {"chat_log"}
    ids = [x.external_id for x in parsed.lines]
    assert len(set(ids)) == 6 and all(i.startswith("text:chat_log:") for i in ids)
    assert ids == [x.external_id for x in parse_file(TEXT, "text", "user").lines]  # stable


def test_text_log_assistant_option(tmp_path: Path) -> None:
    path = tmp_path / "evening.txt"
    path.write_text("Ana: hello\nBruno: hi Ana\n  how are you?\nAna: fine\n")
    parsed = parse_file(path, "text", "user", assistant=["bruno"])
    assert [(x.speaker, x.role, x.content, x.timestamp) for x in parsed.lines] == [
        ("Ana", "user", "hello", None), ("Bruno", "assistant", "hi Ana\n  how are you?", None),
        ("Ana", "user", "fine", None)]
    assert {x.session for x in parsed.lines} == {"evening"}


@pytest.mark.parametrize(("body", "fragment"), [
    ("Some preamble.\nAna: hi\n", "line 1: expected 'Name: message'"),
    ("[10:00] Ana: hi\n", "line 1: time [10:00] without a date"),
    ("## 2024-13-01\nAna: hi\n", "line 1: '2024-13-01' is not a date"),
    ("## 2024-05-01\n[25:00] Ana: hi\n", "line 2: [25:00] is not a date or time"),
    ("Ana:\n", "no 'Name: message' lines"),
])
def test_a_bad_text_log_names_the_line(tmp_path: Path, body: str, fragment: str) -> None:
    path = tmp_path / "log.md"
    path.write_text(body)
    with pytest.raises(InputError) as exc:
        parse_file(path, "text", "user")
    assert str(exc.value).startswith(f"{path}: ") and fragment in str(exc.value)
