"""The commands layer calls services and repositories: no SQL of its own (issue: one
shape for SQL). import-linter holds the import order; this holds the SQL's place."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = [ROOT / "agent" / "cli.py", *sorted((ROOT / "agent" / "commands").glob("*.py"))]


def test_commands_run_no_sql_of_their_own() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{n}"
                 for path in COMMANDS
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if re.search(r"\.execute\(|\bcursor\(", line)]
    assert offenders == [], offenders


def test_named_sql_files_load_and_every_query_is_used() -> None:
    from agent.db.queries import load

    names = set(load())
    code = "\n".join(p.read_text() for p in (ROOT / "agent").rglob("*.py"))
    code += "\n".join(p.read_text() for p in (ROOT / "night_cycle").rglob("*.py"))
    built = re.findall(r'query\(f"(\w+)\{', code)  # query(f"similarity_by_ids_{table}")
    unused = sorted(n for n in names if f'"{n}"' not in code
                    and not any(n.startswith(prefix) for prefix in built))
    assert unused == [], f"named queries no code reads: {unused}"
