"""The schema head that every command checks is read from migrations/versions without
importing alembic (agent/db/migrate.py head_revision): it must be alembic's own answer."""

from __future__ import annotations

import subprocess
import sys

from agent.db import migrate


def test_the_scanned_head_is_alembics_head() -> None:
    assert migrate.head_revision() == migrate.alembic_head_revision()
    assert migrate.head_revision().startswith("00")


def test_checking_the_head_does_not_import_alembic() -> None:
    code = ("import sys; from agent.db import migrate; migrate.head_revision(); "
            "print('alembic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
