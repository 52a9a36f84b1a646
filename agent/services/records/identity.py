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

from agent.db import audit
from agent.db.queries import query
from agent.domain.prompt import Goal, Trait
from agent.errors import ConfigError, InputError


def bootstrap_boundaries(conn: psycopg.Connection[Any], boundaries: list[str]) -> int:
    """Insert the configured hard boundaries once; returns how many were added.

    Through `cogd_layer0_bootstrap` (revision 0010, SECURITY DEFINER): it inserts them only
    when they are the boundaries `cogd migrate` recorded from the config."""
    try:
        row = conn.execute(query("identity_layer0_bootstrap"), (list(boundaries),)
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
    row = conn.execute(query("identity_layer0_approve"), (proposal_id, decided_by)
                       ).fetchone()
    assert row is not None
    return row[0]


def load_traits(conn: psycopg.Connection[Any]) -> list[Trait]:
    rows = conn.execute(
        query("identity_traits")
    ).fetchall()
    return [Trait(name=r[0], weight=r[1], description=r[2], is_boundary=r[3]) for r in rows]


def load_goals(conn: psycopg.Connection[Any], user_id: Any = None) -> list[Goal]:
    """The active goals one user's prompt may carry: installation-wide ones and that
    user's own (a goal promoted from a user's words is theirs alone); `user_id` None:
    the installation-wide ones only."""
    rows = conn.execute(
        query("identity_active_goals"), {"user_id": user_id}
    ).fetchall()
    return [Goal(name=r[0], weight=r[1], description=r[2]) for r in rows]


# -- the operator's changes: proposals decided, goals reset (named SQL: identity.sql) --

def list_proposals(conn: psycopg.Connection[Any], *, include_decided: bool = False
                   ) -> list[dict[str, Any]]:
    rows = conn.execute(query("proposals_list"), {"all": include_decided}).fetchall()
    return [{"id": str(r[0]), "layer": r[1], "kind": r[2], "payload": r[3], "evidence": r[4],
             "status": r[5], "created_at": r[6]} for r in rows]


def decide_proposal(conn: psycopg.Connection[Any], proposal_id: Any, approve: bool,
                    who: str) -> str:
    """Approve or reject one pending proposal, audit-logged; returns the new status.
    A Layer 0 approval writes identity, which only the schema owner may (revision 0010)."""
    with conn.transaction():
        row = conn.execute(query("proposal_lock"), {"id": proposal_id}).fetchone()
        if row is None:
            raise InputError(f"no proposal {proposal_id}")
        if row[0] != "pending":
            raise InputError(f"proposal {proposal_id} is already {row[0]}")
        status = "approved" if approve else "rejected"
        if approve and row[1] == 0:
            try:  # marks it approved and writes its value: owner-only (revision 0010)
                approve_layer0(conn, proposal_id, who)
            except psycopg.errors.InsufficientPrivilege:
                raise InputError(
                    "approving a Layer 0 proposal needs the schema owner's connection "
                    "(the database user that ran `cogd migrate`), not an app role"
                ) from None
        else:
            conn.execute(query("proposal_decide"),
                         {"status": status, "who": who, "id": proposal_id})
        audit.append(conn, who, f"proposal_{status}", str(proposal_id), row[2])
    return status


def reset_goals(conn: psycopg.Connection[Any], name: str | None, weight: float,
                who: str) -> int:
    """Set the active goals' weights (all, or the one named) to `weight`, in
    goals_history and audit_log; returns how many. InputError for an unknown name."""
    with conn.transaction():
        rows = conn.execute(query("goals_active_named"), {"name": name}).fetchall()
        if name and not rows:
            raise InputError(f"no active goal named {name!r} (see `cogd goals`)")
        for gid, _gname, old in rows:
            conn.execute(query("goal_set_weight"), {"weight": weight, "id": gid})
            conn.execute(query("goal_history"), {"id": gid, "old": old, "new": weight,
                                                 "reason": "manual reset"})
        audit.append(conn, who, "goals_reset", name or "*",
                     {"weight": weight, "goals": len(rows)})
    return len(rows)
