"""Layer 0 (identity) and Layer 1 (goals) as rows; bootstrap from config.

Identity starts blank except for the hard safety boundaries in config
([identity] bootstrap_boundaries). Nothing here lets conversation content write
Layer 0: beyond the bootstrap, identity changes only through approved proposals
(issue #5). The database enforces it: a trigger refuses identity writes (revision 0006)
unless they run as the table's owner inside the SECURITY DEFINER functions of revision
0010 (the configured bootstrap, an owner's approval of one proposal).
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent.domain.prompt import Goal, Trait
from agent.errors import ConfigError


def bootstrap_boundaries(conn: psycopg.Connection[Any], boundaries: list[str]) -> int:
    """Insert the configured hard boundaries once; returns how many were added.

    Through `cogd_layer0_bootstrap` (revision 0010, SECURITY DEFINER): it inserts them only
    when they are the boundaries `cogd migrate` recorded from the config."""
    try:
        row = conn.execute("SELECT cogd_layer0_bootstrap(%s::text[])", (list(boundaries),)
                           ).fetchone()
    except psycopg.errors.InsufficientPrivilege as exc:
        why = exc.diag.message_primary or str(exc)
        if "bootstrap refused" in why:
            raise ConfigError(
                f"{why}: [identity] bootstrap_boundaries changed since the last `cogd "
                "migrate`; run it as the schema owner (it records the configured "
                "boundaries)") from None
        raise ConfigError(f"{why}: run `cogd migrate` as the schema owner (it grants "
                          "cogd_app the identity bootstrap)") from None
    return int(row[0]) if row else 0


def approve_layer0(conn: psycopg.Connection[Any], proposal_id: Any, decided_by: str) -> Any:
    """Approve one pending Layer 0 proposal and write its value into identity (with
    identity_history), through `cogd_layer0_approve` (revision 0010): owner-only, so no
    app role can approve its own proposal. Returns the trait_id."""
    row = conn.execute("SELECT cogd_layer0_approve(%s, %s)", (proposal_id, decided_by)
                       ).fetchone()
    assert row is not None
    return row[0]


def load_traits(conn: psycopg.Connection[Any]) -> list[Trait]:
    rows = conn.execute(
        "SELECT name, weight, description, is_boundary FROM identity "
        "ORDER BY is_boundary DESC, weight DESC, name"
    ).fetchall()
    return [Trait(name=r[0], weight=r[1], description=r[2], is_boundary=r[3]) for r in rows]


def load_goals(conn: psycopg.Connection[Any]) -> list[Goal]:
    rows = conn.execute(
        "SELECT name, weight, description FROM goals WHERE status = 'active' "
        "ORDER BY weight DESC, name"
    ).fetchall()
    return [Goal(name=r[0], weight=r[1], description=r[2]) for r in rows]
