"""Every kind of thought is read by something (issue 42 item 7): agent/domain/thought_kinds.py
names, per kind of the schema's THOUGHT_KINDS, the named queries that read it; each query
exists, reads the thoughts table, names the kind (or reads every kind), and some code
asks for it. The docs and README name no thought kind the schema lacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.db.queries import load
from agent.db.schema import THOUGHT_KINDS
from agent.domain.thought_kinds import READERS

ROOT = Path(__file__).resolve().parents[2]


def _code() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for top in ("agent", "night_cycle")
                     for p in sorted((ROOT / top).rglob("*.py")))


def test_every_schema_kind_has_a_reader_and_every_reader_a_kind() -> None:
    assert set(READERS) == set(THOUGHT_KINDS)


@pytest.mark.parametrize("kind", sorted(READERS))
def test_each_readers_query_exists_reads_thoughts_and_names_the_kind(kind: str) -> None:
    queries, where = READERS[kind]
    assert queries and where
    sql = load()
    code = _code()
    for name in queries:
        assert name in sql, f"{kind}: no named query {name}"
        text = sql[name]
        assert re.search(r"\bFROM thoughts\b", text), f"{name} does not read thoughts"
        names_it = f"'{kind}'" in text
        every_kind = re.search(r"\bkind\s*(=|IN\b)", text) is None
        assert names_it or every_kind, f"{name} reads neither '{kind}' nor every kind"
        assert re.search(rf"query\(\s*[\"']{name}[\"']", code), f"no code asks for {name}"


def test_a_kind_nothing_reads_would_be_caught() -> None:
    """The check is not vacuous: a query that reads another kind only does not count."""
    text = load()["turn_take_thoughts"]
    assert "'proactive_recall'" in text and "'creative_impulse'" not in text
    assert re.search(r"\bkind\s*(=|IN\b)", text) is not None


def test_the_docs_name_no_thought_kind_the_schema_lacks() -> None:
    named: set[str] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"thoughts? (?:of )?kinds? ((?:`[a-z_]+`(?:, | and | or )?)+)",
                             text):
            named |= set(re.findall(r"`([a-z_]+)`", m.group(1)))
    assert named, "the docs name thought kinds (the pattern must find them)"
    assert named <= set(THOUGHT_KINDS), named - set(THOUGHT_KINDS)
