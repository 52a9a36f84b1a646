"""bench.ingest's generated history: the ChatGPT export holds the same messages as the cogd
JSONL (so the two imports are compared on the same turns), and its texts are distinct."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

from agent.services.access.import_formats import detect_format, parse_file
from agent.services.access.importer import ImportReport, read_lines
from bench.data.history import chatgpt_export, cogd_jsonl

END = datetime(2026, 11, 30, tzinfo=UTC)


def test_the_chatgpt_export_carries_the_jsonl_turns(tmp_path: Path) -> None:
    report = ImportReport()
    jsonl = list(read_lines(io.StringIO("\n".join(cogd_jsonl(400, 3, end=END)) + "\n"),
                            "sam", report, True))
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(400, 3, end=END)))
    assert detect_format(export) == "chatgpt"
    parsed = parse_file(export, "chatgpt", "sam")
    assert len(jsonl) == len(parsed.lines) == 400 and report.errors == []
    assert [(x.role, x.content, x.timestamp) for x in jsonl] == [
        (x.role, x.content, x.timestamp) for x in parsed.lines]
    # one session per conversation in both; the hidden system messages are skipped
    assert len({x.session for x in jsonl}) == len({x.session for x in parsed.lines})
    assert parsed.skipped["system"] == len({x.session for x in jsonl})
    assert len({x.content for x in jsonl}) > 0.95 * len(jsonl)
