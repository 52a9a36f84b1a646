"""`cogd recall --queries FILE` returns what `Recaller.recall` returns in-process: the same
ranked ids and verdicts, query by query (issue 43 item 3: the CLI's start-up work was made
lazier; nothing it skips may change a result)."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path

from agent.config import Settings
from agent.db.connect import connect
from agent.runtime import Runtime
from tests.acceptance.test_cli import COGD
from tests.acceptance.test_memory_cli import env_for

FACTS = [
    "My sister Lena lives in Porto and works as a nurse.",
    "I keep the spare house key under the blue flower pot.",
    "We moved the team's database from MySQL to Postgres in May.",
    "My gym locker code is 4512.",
    "I prefer green tea over coffee in the morning.",
    "The dentist appointment is on the 14th at nine.",
    "Our cat Miso hates the vacuum cleaner.",
    "I started learning the cello last winter.",
    "The project deadline moved to the end of March.",
    "Ana recommended the book about the history of maps.",
]
QUERIES = ["Where does my sister live?", "what is my locker code",
           "which database did we move to?", "", "tea or coffee?", "what does Miso hate",
           "when is the dentist?"]
AS_OF = "2026-06-01T12:00:00+00:00"


def test_cli_queries_match_in_process_recall(db_url: str, settings: Settings,
                                             tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    history = tmp_path / "history.jsonl"
    history.write_text("".join(json.dumps({
        "session": f"s{i // 4}", "speaker": "kim", "role": "user", "content": text,
        "timestamp": f"2026-05-{i + 1:02d}T10:00:00+00:00", "external_id": f"f{i}"}) + "\n"
        for i, text in enumerate(FACTS)))
    imported = subprocess.run([COGD, "import", str(history), "--json"], env=env,
                              capture_output=True, text=True, timeout=300)
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["inserted"] == len(FACTS)
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(QUERIES) + "\n")
    proc = subprocess.run([COGD, "recall", "--queries", str(queries), "--no-log", "--as-of",
                           AS_OF], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    cli = [json.loads(line) for line in proc.stdout.splitlines()]
    asked = [q for q in QUERIES if q]
    assert [c["query"] for c in cli] == asked
    assert [c["line"] for c in cli] == [n for n, q in enumerate(QUERIES, 1) if q]

    recaller = Runtime(settings).recaller()
    now = datetime.fromisoformat(AS_OF)
    with connect(db_url, app="test", autocommit=True) as conn:
        for got, text in zip(cli, asked, strict=True):
            out = recaller.recall(conn, text, log=False, now=now)
            assert [i["id"] for i in got["items"]] == [i.id for i in out.result.items], text
            assert got["verdict"] == out.result.verdict
    # what the queries were about came back first
    assert "Porto" in cli[0]["items"][0]["content"]
    assert "4512" in cli[1]["items"][0]["content"]
