"""Roles, grants and the Layer 0 guard of revision 0006 on a real Postgres (issue #8)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from agent.cli import cli
from agent.commands.ops import readonly_url
from agent.config import Settings, load_settings
from agent.db import migrate as mig
from agent.errors import DatabaseError
from agent.runtime import Runtime
from tests.conftest import (
    NoFloor,
    _with_db,
    allow_login,
    cogd_env,
    create_db,
    drop_db,
    heuristic_roles,
    make_session,
)

DENIED = psycopg.errors.InsufficientPrivilege
COGD = str(Path(sys.executable).with_name("cogd"))


def connect_as(url: str, role: str) -> psycopg.Connection[Any]:
    """A connection logged in as `role` (trust auth on the test server); where the server
    wants a password, the admin connection SETs ROLE instead."""
    try:
        conn = psycopg.connect(url, user=role, autocommit=True)
    except psycopg.OperationalError:
        conn = psycopg.connect(url, autocommit=True)
        conn.execute(f"SET ROLE {role}")
    assert conn.execute("SELECT current_user").fetchone() == (role,)
    return conn


@pytest.fixture
def app(db_url: str) -> Iterator[psycopg.Connection[Any]]:
    with connect_as(db_url, "cogd_app") as c:
        yield c


@pytest.fixture
def readonly(db_url: str) -> Iterator[psycopg.Connection[Any]]:
    with connect_as(db_url, "cogd_readonly") as c:
        yield c


def base_tables(conn: psycopg.Connection[Any]) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
        "AND table_type = 'BASE TABLE' ORDER BY 1")]


def scalar(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


# -- roles and grants ---------------------------------------------------------------


def test_roles_exist_once_without_privileges_of_their_own(conn: psycopg.Connection[Any]) -> None:
    rows = conn.execute(
        "SELECT rolname, rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolbypassrls "
        "FROM pg_roles WHERE rolname LIKE 'cogd\\_%%' ORDER BY 1").fetchall()
    assert rows == [("cogd_app", True, False, False, False, False),
                    ("cogd_readonly", True, False, False, False, False)]


def test_app_role_reads_and_writes_but_has_no_ddl(app: psycopg.Connection[Any]) -> None:
    sid = make_session(app)
    entry = app.execute("INSERT INTO day_table (session_id, role, content) VALUES "
                        "(%s, 'user', 'my locker code is 4512') RETURNING entry_id",
                        (sid,)).fetchone()
    assert entry is not None
    app.execute("UPDATE day_table SET token_count = 5 WHERE entry_id = %s", (entry[0],))
    mem = app.execute("INSERT INTO memories (session_id, source_entry_id, content) VALUES "
                      "(%s, %s, 'locker 4512') RETURNING memory_id", (sid, entry[0])).fetchone()
    assert mem is not None
    app.execute("UPDATE memories SET importance = 0.9 WHERE memory_id = %s", (mem[0],))
    assert app.execute("SELECT token_count FROM day_table").fetchone() == (5,)
    assert app.execute("SELECT content FROM v_memories").fetchone() == ("locker 4512",)
    app.execute("DELETE FROM memories WHERE memory_id = %s", (mem[0],))
    app.execute("INSERT INTO audit_log (actor, action) VALUES ('app', 'test')")
    assert app.execute("SELECT count(*) FROM audit_log").fetchone() == (1,)
    for statement, refusal in [
        ("UPDATE audit_log SET actor = 'x'", "permission denied for table audit_log"),
        ("DELETE FROM audit_log", "permission denied for table audit_log"),
        ("TRUNCATE audit_log", "permission denied for table audit_log"),
        ("TRUNCATE day_table", "permission denied for table day_table"),
        ("CREATE TABLE mine (id int)", "permission denied for schema public"),
        ("CREATE VIEW v_mine AS SELECT 1", "permission denied for schema public"),
        ("DROP TABLE day_table", "must be owner of table day_table"),
        ("ALTER TABLE memories ADD COLUMN x int", "must be owner of table memories"),
        ("ALTER TABLE audit_log DISABLE TRIGGER ALL", "must be owner of table audit_log"),
        ("CREATE INDEX ix_mine ON day_table (role)", "must be owner of table day_table"),
        ("UPDATE alembic_version SET version_num = 'x'", "permission denied"),
    ]:
        with pytest.raises(DENIED, match=refusal):
            app.execute(statement)
    assert app.execute("SELECT count(*) FROM audit_log").fetchone() == (1,)


def test_app_role_runs_a_turn_and_a_consolidation_pass(settings: Settings, db_url: str) -> None:
    """No hidden DDL on the hot paths: the loop and consolidation work as cogd_app."""
    heuristic_roles(settings)
    settings.context["window_tokens"] = 60  # turns roll out through the exit gate
    cog = Runtime(settings).cognition(rng=NoFloor())
    with connect_as(db_url, "cogd_app") as app:
        sid = make_session(app)
        for text in ("Remember this: my gym locker code is 4512.",
                     "I decided to move the project database from MySQL to Postgres.",
                     "I really prefer green tea over coffee in the morning.", "thanks"):
            assert cog.answer(app, sid, text).reply
        Runtime(settings).consolidator(rng=NoFloor()).run_pass(app)
        assert scalar(app, "SELECT count(*) FROM identity WHERE is_boundary") > 0
        assert scalar(app, "SELECT count(*) FROM memories") >= 2
        assert scalar(app, "SELECT count(*) FROM consolidation_log") >= 1


def test_workers_and_the_night_cycle_act_as_the_app_role(settings: Settings, db_url: str,
                                                          tmp_path: Path) -> None:
    """[database] app_role: every worker connection is SET ROLE; a real `cogd night-cycle`,
    held after its first stage, is seen in pg_stat_activity logged in as cogd_app (with
    COGD_APP_DATABASE_URL, as a deployment on its own Postgres sets it), on its main
    connection and its side pool alike."""
    from agent.workers.base import Worker

    conn = Worker(settings, db_url)._connect()
    with conn:
        assert scalar(conn, "SELECT current_user") == "cogd_app"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TABLE sneaky (id int)")

    flag = tmp_path / "paused"
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"),
                   COGD_APP_DATABASE_URL=db_url.replace("postgres:@", "cogd_app@", 1),
                   COGD_LLM__ROLES__NIGHT_CYCLE="heuristic",
                   COGD_TEST_HOOK=f"pause:night-1-after:{flag}")
    night = subprocess.Popen([COGD, "night-cycle", "--json"], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not flag.exists() and night.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists(), night.communicate(timeout=60)[1][-3000:]
        with psycopg.connect(db_url, autocommit=True) as admin:
            seen = admin.execute(
                "SELECT application_name, usename FROM pg_stat_activity "
                "WHERE application_name LIKE 'cogd-night-cycle%%' AND pid <> pg_backend_pid()"
            ).fetchall()
        names = {name.split("@")[0] for name, _ in seen}
        assert "cogd-night-cycle" in names, seen  # the run's own connection, held open
        assert {user for _, user in seen} == {"cogd_app"}, seen
        flag.unlink()
        _out, err = night.communicate(timeout=600)
        assert night.returncode == 0, err[-3000:]
    finally:
        if night.poll() is None:
            night.kill()
            night.communicate(timeout=60)  # reaped, its pipes closed


def test_a_missing_app_role_is_named_once_and_the_worker_goes_on(
    settings: Settings, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    from agent.db import connect as connect_mod
    from agent.workers.base import Worker

    settings.database.app_role = "cogd_no_such_role"
    connect_mod._ROLE_WARNED.discard("cogd_no_such_role")
    for _ in range(2):
        with Worker(settings, db_url)._connect() as conn:
            assert scalar(conn, "SELECT current_user") != "cogd_no_such_role"
            assert scalar(conn, "SELECT 1") == 1
    warned = [r for r in caplog.records if "cannot act as role cogd_no_such_role" in r.message]
    assert len(warned) == 1


def test_readonly_role_reads_every_view_and_no_table(
    conn: psycopg.Connection[Any], readonly: psycopg.Connection[Any]
) -> None:
    sid = make_session(conn)
    conn.execute("INSERT INTO memories (session_id, content) VALUES (%s, 'my cat is Miso')",
                 (sid,))
    views = [r[0] for r in conn.execute(
        "SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1")]
    assert len(views) >= 12 and all(v.startswith("v_") for v in views)
    for view in views:
        readonly.execute(f"SELECT * FROM {view} LIMIT 5").fetchall()
    assert readonly.execute("SELECT content FROM v_memories").fetchall() == [("my cat is Miso",)]
    tables = base_tables(conn)
    assert {"day_table", "memories", "identity", "audit_log", "alembic_version"} <= set(tables)
    for table in tables:
        with pytest.raises(DENIED, match=f"permission denied for table {table}"):
            readonly.execute(f"SELECT * FROM {table} LIMIT 1")
    for statement in ("INSERT INTO audit_log (actor, action) VALUES ('ro', 'x')",
                      "INSERT INTO day_table (session_id, role, content) "
                      f"VALUES ('{sid}', 'user', 'x')",
                      "UPDATE memories SET importance = 1",
                      "CREATE TABLE mine (id int)"):
        with pytest.raises(DENIED):
            readonly.execute(statement)
    assert conn.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


def test_later_tables_reach_the_app_and_later_views_the_readonly_role(
    conn: psycopg.Connection[Any], app: psycopg.Connection[Any],
    readonly: psycopg.Connection[Any],
) -> None:
    # what a later revision does: create a table (default privileges), then a view
    conn.execute("CREATE TABLE later_things (id bigint GENERATED BY DEFAULT AS IDENTITY, "
                 "note text)")
    app.execute("INSERT INTO later_things (note) VALUES ('reachable')")
    conn.execute("CREATE VIEW v_later AS SELECT note FROM later_things")
    with pytest.raises(DENIED):
        readonly.execute("SELECT * FROM v_later")
    assert conn.execute("SELECT cogd_apply_grants()").fetchone() == (True,)
    assert readonly.execute("SELECT note FROM v_later").fetchall() == [("reachable",)]
    with pytest.raises(DENIED):
        readonly.execute("SELECT * FROM later_things")
    app.execute("UPDATE later_things SET note = 'still reachable'")  # re-grant kept DML


def test_audit_log_is_append_only_for_every_role(
    conn: psycopg.Connection[Any], app: psycopg.Connection[Any]
) -> None:
    conn.execute("INSERT INTO audit_log (actor, action) VALUES ('owner', 'insert')")
    owner = conn.execute("SELECT pg_get_userbyid(relowner) = current_user FROM pg_class "
                         "WHERE relname = 'audit_log'").fetchone()
    assert owner == (True,)  # conn is the table's owner
    for statement in ("UPDATE audit_log SET actor = 'x'", "DELETE FROM audit_log",
                      "TRUNCATE audit_log", "DELETE FROM audit_log WHERE false"):
        with pytest.raises(DENIED, match="append-only"):
            conn.execute(statement)  # the owner (a superuser here): the trigger refuses
        with pytest.raises(DENIED, match="audit_log"):
            app.execute(statement)  # cogd_app: no privilege in the first place
    assert conn.execute("SELECT actor FROM audit_log").fetchall() == [("owner",)]


def test_upgrade_is_idempotent_across_databases_and_templates(
    pg_admin_url: str, template_db: str, test_settings_base: Settings
) -> None:
    """Roles are cluster-wide: many databases migrate on one server, copies of a template
    keep their grants, and a downgrade keeps roles another database still uses."""
    made = [create_db(pg_admin_url) for _ in range(2)]
    copy = create_db(pg_admin_url, template_db)
    try:
        for _, url in made:
            mig.upgrade(url, test_settings_base)  # the roles exist already: grants only
        mig.upgrade(made[0][1], test_settings_base)  # again: nothing to do, no error
        for _, url in [*made, copy]:
            with connect_as(url, "cogd_app") as app:
                app.execute("INSERT INTO audit_log (actor, action) VALUES ('app', 'x')")
            with connect_as(url, "cogd_readonly") as ro:
                ro.execute("SELECT * FROM v_memories").fetchall()
        # downgrade one database: its grants go, the roles stay for the others
        mig.downgrade(made[0][1], test_settings_base, "0005_consolidation_dmn")
        with psycopg.connect(made[0][1], autocommit=True) as c:
            assert c.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'cogd\\_%%'"
                             ).fetchone() == (2,)
            assert c.execute("SELECT has_table_privilege('cogd_app', 'day_table', 'INSERT')"
                             ).fetchone() == (False,)
            assert c.execute("SELECT count(*) FROM pg_indexes WHERE indexname = "
                             "'ix_gate_decisions_entry_id'").fetchone() == (0,)
        with connect_as(made[1][1], "cogd_app") as app:
            app.execute("INSERT INTO audit_log (actor, action) VALUES ('app', 'y')")
        mig.upgrade(made[0][1], test_settings_base)
        with connect_as(made[0][1], "cogd_app") as app:
            app.execute("INSERT INTO audit_log (actor, action) VALUES ('app', 'z')")
    finally:
        for name, _ in [*made, copy]:
            drop_db(pg_admin_url, name)  # DROP DATABASE of a grantee's database: no error


def test_entry_id_indexes_exist(conn: psycopg.Connection[Any]) -> None:
    rows = conn.execute("SELECT tablename, indexdef FROM pg_indexes WHERE indexname LIKE "
                        "'ix\\_%%\\_entry\\_id'").fetchall()
    assert {r[0] for r in rows} == {"gate_decisions", "scratch_buffer", "recall_log",
                                    "escalations"}
    assert all("btree (entry_id)" in r[1] for r in rows)


def test_a_user_who_may_not_create_roles(tmp_path: Path) -> None:
    """A managed Postgres: the migrating user owns its database but may not create roles.
    The migration succeeds without them; an administrator adds them later; a downgrade
    drops them once no database uses them. A server of its own: roles are cluster-wide."""
    from agent.db.embedded import ensure_server, stop_server

    server = ensure_server(tmp_path / "own-server")
    try:
        with psycopg.connect(server.admin_uri, autocommit=True) as su:
            su.execute("CREATE ROLE app_owner LOGIN CREATEDB")
            allow_login(server, "app_owner")  # peer authentication maps cogd's roles only
            su.execute("CREATE DATABASE managed OWNER app_owner")
            # pgvector is not a trusted extension: the provider installs it
            with psycopg.connect(_with_db(server.admin_uri, "managed"), autocommit=True) as m:
                m.execute("CREATE EXTENSION vector")
        managed = _with_db(server.admin_uri, "managed")
        owner_url = managed.replace("postgres:@", "app_owner:@", 1)
        assert "app_owner" in owner_url
        settings = load_settings(data_dir=tmp_path / "data", database_url=owner_url)
        env = {"COGD_DATABASE_URL": owner_url, "COGD_DATA_DIR": str(tmp_path / "data")}
        result = CliRunner().invoke(cli, ["migrate"], env=env)
        assert result.exit_code == 0, result.output
        assert "migrated" in result.output
        assert "role(s) cogd_app, cogd_readonly missing" in result.output  # stderr, mixed in
        with psycopg.connect(owner_url, autocommit=True) as c:
            assert mig.current_revision(c) == mig.head_revision()
            assert c.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'cogd\\_%%'"
                             ).fetchone() == (0,)
            assert c.execute("SELECT cogd_apply_grants()").fetchone() == (False,)
        readonly = CliRunner().invoke(cli, ["db-url", "--readonly"], env=env)
        assert isinstance(readonly.exception, DatabaseError)  # main() makes it exit 2
        assert "role cogd_readonly does not exist" in str(readonly.exception)
        # the administrator creates the roles; the owner applies the grants
        with psycopg.connect(server.admin_uri, autocommit=True) as su:
            su.execute("CREATE ROLE cogd_app LOGIN")
            su.execute("CREATE ROLE cogd_readonly LOGIN")
        with psycopg.connect(owner_url, autocommit=True) as c:
            assert c.execute("SELECT cogd_apply_grants()").fetchone() == (True,)
        with connect_as(managed, "cogd_app") as app:
            app.execute("INSERT INTO audit_log (actor, action) VALUES ('app', 'x')")
            with pytest.raises(DENIED):
                app.execute("DELETE FROM audit_log")
        readonly = CliRunner().invoke(cli, ["db-url", "--readonly"], env=env)
        assert readonly.exit_code == 0, readonly.output
        with psycopg.connect(readonly.output.strip()) as ro:
            assert ro.execute("SELECT current_user").fetchone() == ("cogd_readonly",)
        # the owner's downgrade revokes its grants but may not drop the roles: kept
        mig.downgrade(owner_url, settings, "0005_consolidation_dmn")
        with psycopg.connect(server.admin_uri, autocommit=True) as su:
            assert su.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'cogd\\_%%'"
                              ).fetchone() == (2,)
            # a superuser's downgrade, no other database using them: the roles go
            su.execute("CREATE DATABASE other")
        other = _with_db(server.admin_uri, "other")
        mig.upgrade(other, settings)
        mig.downgrade(other, settings, "0005_consolidation_dmn")
        with psycopg.connect(server.admin_uri, autocommit=True) as su:
            assert su.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'cogd\\_%%'"
                              ).fetchone() == (0,)
            for name in ("race_a", "race_b"):
                su.execute(f"CREATE DATABASE {name}")
        # two databases migrating at once, both creating the (missing) roles
        procs = [subprocess.Popen(
            [COGD, "migrate"], env=cogd_env(DATABASE_URL=_with_db(server.admin_uri, name),
                                            COGD_DATA_DIR=str(tmp_path / "data")),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name in ("race_a", "race_b")]
        for proc in procs:
            _out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
            assert "missing" not in err
        with psycopg.connect(server.admin_uri, autocommit=True) as su:
            assert su.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'cogd\\_%%'"
                              ).fetchone() == (2,)
    finally:
        stop_server(tmp_path / "own-server")


@pytest.mark.parametrize(
    ("url", "password", "expected"),
    [
        ("postgresql://postgres:@/cogd?host=/tmp/x/pg", None,
         "postgresql://cogd_readonly@/cogd?host=/tmp/x/pg"),
        ("postgresql://me:s3cret@db.example:5432/cogd?sslmode=require", "p@ss/w:rd",
         "postgresql://cogd_readonly:p%40ss%2Fw%3Ard@db.example:5432/cogd?sslmode=require"),
        ("postgresql://db.example/cogd?user=me&password=x&sslmode=verify-full", None,
         "postgresql://cogd_readonly@db.example/cogd?sslmode=verify-full"),
    ],
)
def test_readonly_url_replaces_only_the_user(url: str, password: str | None,
                                             expected: str) -> None:
    assert readonly_url(url, password) == expected


# -- the embedded server's logins (peer authentication) ----------------------------------


@pytest.fixture
def own_embedded(tmp_path: Path) -> Iterator[Any]:
    from agent.db.embedded import ensure_server, stop_server

    server = ensure_server(tmp_path / "own")
    try:
        yield server
    finally:
        stop_server(tmp_path / "own")


def _login_error(url: str) -> str:
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        return str(exc)
    return ""


def test_the_embedded_server_logs_in_cogd_roles_only_by_peer(own_embedded: Any) -> None:
    """No trust: a role outside cogd's three is refused even by the OS user that runs
    cogd, and a session logged in as cogd_app stays cogd_app after RESET ROLE (no owner
    rights to fall back to)."""
    server = own_embedded
    with psycopg.connect(server.admin_uri, autocommit=True) as su:
        assert su.execute("SELECT system_user").fetchone()[0].startswith("peer:")
        su.execute("CREATE ROLE intruder LOGIN SUPERUSER")
        su.execute("CREATE ROLE cogd_app LOGIN")
    assert "Peer authentication failed for user \"intruder\"" in _login_error(
        server.uri.replace("postgres@", "intruder@", 1))
    assert (server.pgdata / "pg_hba.conf").read_text().count("trust") == 0
    with psycopg.connect(server.app_uri, autocommit=True) as app:
        app.execute("RESET ROLE")
        assert app.execute("SELECT session_user, current_user").fetchone() == (
            "cogd_app", "cogd_app")
        with pytest.raises(DENIED):
            app.execute("SET ROLE postgres")
        with pytest.raises(DENIED):
            app.execute("CREATE DATABASE stolen")


def test_a_data_dir_that_trusted_every_login_is_locked_down_on_start(tmp_path: Path) -> None:
    """A data dir from an earlier cogd (initdb's trust rules): the next start writes the
    peer rules and reloads them."""
    from agent.db.embedded import ensure_server, stop_server

    data = tmp_path / "old"
    server = ensure_server(data)
    try:
        (server.pgdata / "pg_hba.conf").write_text("local all all trust\n")
        with psycopg.connect(server.admin_uri, autocommit=True) as su:
            su.execute("SELECT pg_reload_conf()")
            su.execute("CREATE ROLE intruder LOGIN")
        intruder = server.uri.replace("postgres@", "intruder@", 1)
        for _ in range(100):  # the reload lands a moment later
            if not _login_error(intruder):
                break
            time.sleep(0.05)
        assert _login_error(intruder) == ""  # trust: anyone, as any role
        ensure_server(data)
        assert "Peer authentication failed" in _login_error(intruder)
    finally:
        stop_server(data)


def test_compose_logins_the_owner_migrates_and_sets_the_app_password(
    db_url: str, empty_db_url: str, pg_admin_url: str, tmp_path: Path,
) -> None:
    """docker-compose's shape: `cogd migrate` with the owner's URL and COGD_APP_PASSWORD
    gives cogd_app that password; a worker with a cogd_app DATABASE_URL runs; a command
    with a cogd_app URL on an unmigrated database is told to migrate as the owner."""
    app_url = db_url.replace("postgres:@", "cogd_app@", 1)
    assert "cogd_app@" in app_url
    data = str(tmp_path / "data")
    try:
        migrated = subprocess.run(
            [COGD, "migrate"], capture_output=True, text=True, timeout=120,
            env=cogd_env(DATABASE_URL=db_url, COGD_APP_PASSWORD="s3cret", COGD_DATA_DIR=data))
        assert migrated.returncode == 0, migrated.stderr
        with psycopg.connect(pg_admin_url, autocommit=True) as su:
            stored = su.execute("SELECT rolpassword FROM pg_authid WHERE rolname = 'cogd_app'"
                                ).fetchone()
        assert stored is not None and str(stored[0]).startswith("SCRAM-SHA-256$")
        worker = subprocess.run(
            [COGD, "consolidate", "--once", "--json"], capture_output=True, text=True,
            timeout=180, env=cogd_env(DATABASE_URL=app_url, COGD_DATA_DIR=data,
                                      COGD_LLM__ROLES__CONSOLIDATION="heuristic"))
        assert worker.returncode == 0, worker.stderr
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as su:
            su.execute("ALTER ROLE cogd_app PASSWORD NULL")
    unmigrated = subprocess.run(
        [COGD, "recall", "anything"], capture_output=True, text=True, timeout=120,
        env=cogd_env(DATABASE_URL=empty_db_url.replace("postgres:@", "cogd_app@", 1),
                     COGD_DATA_DIR=data))
    assert unmigrated.returncode != 0
    assert "Traceback" not in unmigrated.stderr
    assert "run `cogd migrate` with the owner's DATABASE_URL" in unmigrated.stderr, \
        unmigrated.stderr
