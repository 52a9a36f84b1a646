"""Bearer tokens of the HTTP API (`cogd serve`): each bound to one user.

A token is `cogd_` + 43 URL-safe characters (256 random bits). Only its SHA-256 is
stored (api_tokens, revision 0013), with its first 12 characters to list and revoke it
by; the token itself is printed once, by `cogd token create`. Creating and revoking are
audit-logged (without the token). An operator token (`cogd token create --operator`,
revision 0021) works on its user's memories like any other, and also sees the
installation-wide figures of `/v1/status` and MCP `status` (processes, global counts).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

import psycopg

from agent.db import audit
from agent.db.queries import query
from agent.errors import InputError

PREFIX = "cogd_"
SHOWN = 12  # characters of the token kept in clear, to name it in lists


@dataclass(frozen=True)
class Caller:
    token_id: Any
    user_id: Any
    handle: str
    operator: bool = False


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", errors="replace")).hexdigest()


def create(conn: psycopg.Connection[Any], user_id: Any, handle: str, name: str,
           actor: str, operator: bool = False) -> dict[str, Any]:
    token = PREFIX + secrets.token_urlsafe(32)
    with conn.transaction():
        row = conn.execute(query("tokens_insert"), (user_id, name, token[:SHOWN],
                                                    digest(token), operator)).fetchone()
        assert row is not None
        audit.append(conn, actor, "token_create", f"api_tokens:{row[0]}",
                     {"user": handle, "name": name, "prefix": token[:SHOWN],
                      "operator": operator})
    return {"token_id": str(row[0]), "user": handle, "name": name, "token": token,
            "prefix": token[:SHOWN], "operator": operator,
            "created_at": row[1].isoformat()}


def authenticate(conn: psycopg.Connection[Any], token: str) -> Caller | None:
    """The caller a live token stands for; None for an unknown or revoked one."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    row = conn.execute(query("tokens_authenticate"), (digest(token),)).fetchone()
    return None if row is None else Caller(row[0], row[1], row[2], bool(row[3]))


def listing(conn: psycopg.Connection[Any], handle: str | None) -> list[dict[str, Any]]:
    return [{"token_id": str(r[0]), "user": r[1], "name": r[2], "prefix": r[3],
             "created_at": r[4].isoformat(),
             "last_used_at": None if r[5] is None else r[5].isoformat(),
             "revoked_at": None if r[6] is None else r[6].isoformat(),
             "operator": bool(r[7])}
            for r in conn.execute(query("tokens_list"), {"handle": handle})]


def revoke(conn: psycopg.Connection[Any], ref: str, actor: str) -> dict[str, Any]:
    """Revoke a token named by its id or its first characters (at least 12)."""
    ref = ref.strip()
    if not ref:
        raise InputError("name the token: its id or its first 12 characters (cogd token list)")
    with conn.transaction():
        rows = conn.execute(query("tokens_find"), {"ref": ref}).fetchall()
        if not rows:
            raise InputError(f"no token {ref!r} (cogd token list shows them)")
        if len(rows) > 1:
            raise InputError(f"{ref!r} names {len(rows)} tokens: give its id")
        token_id, handle, prefix, revoked_at = rows[0]
        if revoked_at is not None:
            return {"token_id": str(token_id), "user": handle, "revoked": False,
                    "note": f"already revoked at {revoked_at.isoformat()}"}
        conn.execute(query("tokens_revoke"), (token_id,))
        audit.append(conn, actor, "token_revoke", f"api_tokens:{token_id}",
                     {"user": handle, "prefix": prefix})
    return {"token_id": str(token_id), "user": handle, "revoked": True}
