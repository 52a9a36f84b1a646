"""Operations: migrate, status, db-url, psql, up, down."""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
from typing import Any

import click

from agent.commands.context import json_option, settings_from
from agent.config import Settings
from agent.errors import DatabaseError

WORKERS = ("loop", "consolidate", "idle")
DB_ROLES = ("cogd_app", "cogd_readonly")  # created by revision 0006
MAIN_TABLES = (
    "users",
    "sessions",
    "day_table",
    "scratch_buffer",
    "memories",
    "memory_links",
    "identity",
    "goals",
    "proposals",
    "intentions",
    "holographic_blocks",
    "gate_decisions",
    "recall_log",
    "thoughts",
    "inbox",
    "outbox",
    "night_cycle_runs",
    "llm_calls",
    "audit_log",
)



def _target(start: bool = True) -> Any:
    from agent.db.connect import resolve

    return resolve(settings_from(), start=start)


@click.command()
@click.option("--revision", default="head", show_default=True, help="Alembic revision to reach.")
@json_option
def migrate(revision: str, as_json: bool) -> None:
    """Create or upgrade the hippocampus schema (Alembic)."""
    from agent.db import catalog
    from agent.db import migrate as mig
    from agent.db.connect import connect, preflight, redact

    settings = settings_from()
    target = _target()
    vector = preflight(target.url)
    mig.upgrade(target.url, settings, revision)
    with connect(target.url) as conn:
        current = mig.current_revision(conn)
        found = catalog.roles_present(conn, DB_ROLES)
    roles = {r: r in found for r in DB_ROLES}
    out = {"database": redact(target.url), "revision": current, "pgvector": vector,
           "roles": roles}
    click.echo(json.dumps(out) if as_json else f"migrated {out['database']} to {current}")
    if not all(roles.values()) and not as_json:
        # revision 0006 skips them (with a NOTICE nobody sees) when we may not create roles
        click.echo(
            f"warning: role(s) {', '.join(r for r, ok in roles.items() if not ok)} missing: "
            "this user may not create roles; an administrator can CREATE ROLE ... LOGIN and "
            "then run SELECT cogd_apply_grants() in this database", err=True)


def collect_status(settings: Settings, start: bool = True) -> dict[str, Any]:
    from agent.db import catalog
    from agent.db import migrate as mig
    from agent.db.connect import connect, pgvector_version, redact, resolve

    status: dict[str, Any] = {"head_revision": mig.head_revision()}
    try:
        target = resolve(settings, start=start)
    except DatabaseError as exc:
        return {**status, "database": {"reachable": False, "error": str(exc)}}
    status["database"] = {"url": redact(target.url), "embedded": target.embedded}
    if target.embedded:
        status["database"]["data_dir"] = str(settings.data_dir)
    try:
        conn = connect(target.url, app="cogd-status", autocommit=True)
    except DatabaseError as exc:
        status["database"].update(reachable=False, error=str(exc))
        return status
    with conn:
        status["database"]["reachable"] = True
        status["database"]["server_version"] = catalog.server_version(conn)
        status["pgvector"] = pgvector_version(conn)
        current = mig.current_revision(conn)
        status["revision"] = current
        status["migrated"] = current == status["head_revision"]
        if current is None:
            return status
        status["processes"] = catalog.processes(conn)
        status["rows"] = catalog.row_counts(conn, MAIN_TABLES)
    status["reranker"] = _reranker_status(settings)
    return status


def _reranker_status(settings: Settings) -> str:
    try:
        from agent.providers.factory import reranker_status
    except ImportError:
        return "unknown (providers not installed)"
    return str(reranker_status(settings))


@click.command()
@json_option
def status(as_json: bool) -> int:
    """Database, migration head, pgvector, process heartbeats and row counts."""
    data = collect_status(settings_from())
    reachable = bool(data["database"].get("reachable"))
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
        return 0 if reachable else 2
    if not reachable:
        raise DatabaseError(data["database"]["error"])
    _print_status(data)
    return 0


def _print_status(data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    db = data["database"]
    kind = f"embedded, data dir {db['data_dir']}" if db.get("embedded") else "external"
    console.print(f"database  {db['url']} ({kind}), PostgreSQL {db['server_version']}")
    console.print(f"pgvector  {data.get('pgvector') or '[red]not installed[/red]'}")
    rev = data.get("revision")
    mark = (
        "[green]up to date[/green]"
        if data.get("migrated")
        else "[yellow]run cogd migrate[/yellow]"
    )
    console.print(f"schema    {rev or 'none'} (head {data['head_revision']}) {mark}")
    if "reranker" in data:
        console.print(f"reranker  {data['reranker']}")
    if data.get("processes") is not None:
        table = Table("process", "pid", "host", "state", "last beat", "alive", title="processes")
        for p in data["processes"]:
            table.add_row(
                p["name"], str(p["pid"]), p["host"], p["state"], p["last_beat"][11:19],
                "[green]yes[/green]" if p["alive"] else "[red]no[/red]",
            )
        if not data["processes"]:
            table.add_row("(none)", "", "", "", "", "")
        console.print(table)
    if data.get("rows"):
        rows = Table("table", "rows", title="rows")
        for name, count in data["rows"].items():
            rows.add_row(name, str(count))
        console.print(rows)


READONLY_ROLE = "cogd_readonly"  # revision 0006: SELECT on the v_* views only
READONLY_PASSWORD_ENV = "COGD_READONLY_PASSWORD"


def readonly_url(url: str, password: str | None = None) -> str:
    """`url` with its user replaced by cogd_readonly (same host, socket, database and
    options); `password` only when given."""
    from urllib.parse import quote, urlsplit, urlunsplit

    parts = urlsplit(url)
    hostport = parts.netloc.rpartition("@")[2]
    user = READONLY_ROLE + (f":{quote(password, safe='')}" if password else "")
    # a user or password in the query string would override the ones in the netloc
    query = "&".join(p for p in parts.query.split("&")
                     if p and p.split("=", 1)[0] not in ("user", "password"))
    return urlunsplit((parts.scheme, f"{user}@{hostport}", parts.path, query, parts.fragment))


def _check_readonly_role(url: str) -> None:
    from agent.db import catalog
    from agent.db.connect import connect

    with connect(url, app="cogd-db-url", autocommit=True) as conn:
        role, migrated, granted = catalog.readonly_role(conn, READONLY_ROLE)
        if not role:
            raise DatabaseError(
                f"role {READONLY_ROLE} does not exist on this server: run `cogd migrate` as "
                "a user allowed to create roles, or have an administrator run CREATE ROLE "
                f"{READONLY_ROLE} LOGIN PASSWORD '...' and then SELECT cogd_apply_grants()")
        if not migrated:
            raise DatabaseError("the schema is not migrated yet: run `cogd migrate` first")
        if not granted:
            raise DatabaseError(
                f"{READONLY_ROLE} may not read this database's views: run `cogd migrate`, or "
                "SELECT cogd_apply_grants() as the schema owner")


@click.command("db-url")
@click.option(
    "--readonly", is_flag=True, envvar="COGD_DB_URL_READONLY", show_envvar=True,
    help=f"A URL that logs in as {READONLY_ROLE} (SELECT on the v_* views, no table access). "
    f"With DATABASE_URL, its password comes from ${READONLY_PASSWORD_ENV} (set it with "
    f"ALTER ROLE {READONLY_ROLE} PASSWORD '...'); the embedded server needs none.",
)
def db_url(readonly: bool) -> None:
    """Print a URI psql accepts: psql "$(cogd db-url)". Starts the embedded server if needed."""
    target = _target()
    if not readonly:
        click.echo(target.url)
        return
    _check_readonly_role(target.url)
    # the embedded server trusts local socket connections: no password there
    password = None if target.embedded else os.environ.get(READONLY_PASSWORD_ENV) or None
    click.echo(readonly_url(target.url, password))


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
def psql(psql_args: tuple[str, ...]) -> None:
    """Open psql on the hippocampus (extra arguments go to psql)."""
    target = _target()
    exe = shutil.which("psql")
    if target.embedded or exe is None:
        from agent.db.embedded import psql_path

        exe = str(psql_path())
    os.execv(exe, [exe, target.url, *psql_args])


@click.command()
@click.option(
    "--workers",
    default=",".join(WORKERS),
    show_default=True,
    envvar="COGD_WORKERS",
    show_envvar=True,
    help="Comma-separated worker processes to supervise.",
)
@click.option(
    "--migrate/--no-migrate", default=True, show_default=True, envvar="COGD_MIGRATE",
    show_envvar=True, help="Upgrade the schema before starting workers.",
)
def up(workers: str, migrate: bool) -> int:
    """Start the daemon: migrate, then run and supervise the worker processes.

    Restarts a crashed worker with backoff; Ctrl-C (SIGINT) or SIGTERM stops all.
    """
    from agent.db import migrate as mig
    from agent.db.connect import preflight, redact
    from agent.supervisor import Supervisor

    names = [w.strip() for w in workers.split(",") if w.strip()]
    unknown = sorted(set(names) - set(WORKERS))
    if unknown:
        raise click.BadParameter(
            f"unknown worker(s) {', '.join(unknown)}; choose from {', '.join(WORKERS)}",
            param_hint="--workers",
        )
    settings = settings_from()
    target = _target()
    preflight(target.url)
    if migrate:
        mig.upgrade(target.url, settings)
    from agent.db.embedded import restart_after_crash

    # the embedded server is cogd's to start again after a crash (not after `cogd down`);
    # a DATABASE_URL's server is not
    restart_db = (functools.partial(restart_after_crash, settings.data_dir)
                  if target.embedded else None)
    sup = Supervisor(settings, target.app_url, names,
                     on_event=lambda m: click.echo(f"cogd up: {m}"), restart_db=restart_db)
    sup.install_signal_handlers()
    click.echo(
        f"cogd up: database {redact(target.url)} on {socket.gethostname()}; "
        f"workers: {', '.join(names)}; Ctrl-C stops"
    )
    return sup.run()


@click.command()
def down() -> None:
    """Stop the embedded Postgres server (running workers lose their database)."""
    from agent.db.embedded import stop_server

    settings = settings_from()
    if settings.database_url:
        raise DatabaseError(
            "DATABASE_URL is set: cogd does not manage that server; stop it where it runs"
        )
    stopped = stop_server(settings.data_dir)
    click.echo(
        f"stopped the embedded Postgres in {settings.data_dir}"
        if stopped
        else f"no embedded Postgres running in {settings.data_dir}"
    )


@click.group()
def audit() -> None:
    """The audit log's integrity (a hash chain over its rows, revision 0009)."""


@audit.command("verify")
@json_option
def audit_verify(as_json: bool) -> int:
    """Recompute audit_log's hash chain. Exit 1 when a row was changed, removed or
    inserted; prints the head hash: keep a copy elsewhere, and a rewrite of the whole
    chain (which the owner can do) shows as a different head."""
    from agent.db import audit as audit_log
    from agent.db.connect import connect
    from agent.db.migrate import upgrade

    settings = settings_from()
    target = _target()
    upgrade(target.url, settings)
    with connect(target.url, app="cogd-audit", autocommit=True) as conn:
        result = audit_log.verify_chain(conn)
    if as_json:
        click.echo(json.dumps(result))
    elif result["ok"]:
        click.echo(f"audit_log intact: {result['rows']} rows; head {result['head']}")
    else:
        click.echo(f"audit_log TAMPERED at row {result['broken_at']}: {result['reason']} "
                   f"({result['rows']} rows; head {result['head']})")
    return 0 if result["ok"] else 1


COMMANDS = (migrate, status, db_url, psql, up, down, audit)
