"""v_processes: a process that marked itself 'stopped' is not alive.

`alive` was "beat within the liveness window" alone, so a worker that had just stopped
(its last act is a beat that writes state = 'stopped') showed as `stopped, alive: yes`
in `cogd status` for up to 30 seconds. Now `alive` also needs a state other than
'stopped'; the window is unchanged (process.stale_after_s in config/default.toml).

Revision ID: 0023_process_alive
Revises: 0022_claim_slots
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0023_process_alive"
down_revision: str | None = "0022_claim_slots"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STALE = "interval '30 seconds'"  # as in revision 0002


def _view(alive: str) -> str:
    return f"""
        CREATE OR REPLACE VIEW v_processes AS
        SELECT name, pid, host, state, started_at, last_beat,
               round(extract(epoch FROM now() - last_beat)::numeric, 1) AS seconds_since_beat,
               {alive} AS alive,
               info
        FROM process_heartbeats
        ORDER BY alive DESC, name, started_at DESC"""


def upgrade() -> None:
    op.execute(_view(f"(state <> 'stopped' AND last_beat > now() - {STALE})"))


def downgrade() -> None:
    op.execute(_view(f"last_beat > now() - {STALE}"))
