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
    built = re.findall(r'query\(f"(\w+)\{', code)  # query(f"name_{table}")
    unused = sorted(n for n in names if f'"{n}"' not in code
                    and not any(n.startswith(prefix) for prefix in built))
    assert unused == [], f"named queries no code reads: {unused}"


def test_services_the_night_cycle_and_the_cortex_keep_their_sql_in_named_files() -> None:
    """agent/db/sql/*.sql holds every query of the services, the inbox, the cortex adapter
    and the night cycle; a string that starts like SQL in their code is a query that
    slipped back inline."""
    import ast

    sql = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s", re.I)
    paths = [*(ROOT / "agent" / "services").glob("*.py"), ROOT / "agent" / "inbox.py",
             *(ROOT / "agent" / "cortex").glob("*.py"), *(ROOT / "night_cycle").rglob("*.py")]
    found = []
    for path in paths:
        tree = ast.parse(path.read_text())
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and id(node) not in docstrings
                    and isinstance(node.value, str) and sql.match(node.value)
                    and len(node.value.split()) > 3):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == [], found
