"""docker-compose.yml stays correct for users who have Docker (no engine here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from agent.cli import cli

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def _services() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def _cogd_invocations(service: dict[str, Any]) -> list[list[str]]:
    command = service.get("command")
    parts = command if isinstance(command, list) else shlex.split(command or "")
    text = " ".join(parts)
    return [m.split() for m in re.findall(r"\bcogd(?: [a-z][a-z-]*)+", text)]


def test_each_worker_and_the_night_cycle_have_a_service() -> None:
    assert {"db", "migrate", "loop", "consolidate", "idle", "night-cycle"} <= set(_services())


def test_every_service_command_is_a_real_cogd_subcommand() -> None:
    checked = 0
    for name, service in _services().items():
        if name == "db":
            continue
        invocations = _cogd_invocations(service)
        assert invocations, f"service {name} runs no cogd command"
        for argv in invocations:
            assert argv[1] in cli.commands, f"service {name}: `cogd {argv[1]}` does not exist"
            checked += 1
    assert checked >= 5


def test_the_http_api_is_published_on_loopback_with_a_healthcheck() -> None:
    api = _services()["api"]
    assert api["command"][:2] == ["cogd", "serve"]
    port = api["command"][api["command"].index("--port") + 1]
    assert api["ports"] == [f"127.0.0.1:{port}:{port}"]  # not on every host interface
    assert f"127.0.0.1:{port}/healthz" in " ".join(api["healthcheck"]["test"])


def test_db_is_pgvector_with_volume_and_healthcheck() -> None:
    db = _services()["db"]
    assert db["image"].startswith("pgvector/pgvector:pg17")
    assert db["volumes"] and "healthcheck" in db
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    # the server is given room for memories' HNSW index, as the embedded one is
    assert db["command"][:2] == ["postgres", "-c"]
    assert db["command"][2] == "shared_buffers=${COGD_PG_SHARED_BUFFERS:-1GB}"


def test_workers_wait_for_the_migration() -> None:
    services = _services()
    for name in ("loop", "consolidate", "idle", "night-cycle", "api"):
        dep = services[name]["depends_on"]["migrate"]["condition"]
        assert dep == "service_completed_successfully"
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"


def test_dockerfile_runs_as_non_root() -> None:
    text = (COMPOSE.parent / "Dockerfile").read_text()
    assert re.search(r"^USER (?!root)\w+", text, re.MULTILINE)


def test_cogd_services_run_under_an_init_that_reaps_orphans() -> None:
    cogd = {name: svc for name, svc in _services().items() if name != "db"}
    assert cogd and all(svc.get("init") is True for svc in cogd.values())


def _url_user(url: str) -> tuple[str, str]:
    """(user, password) of a compose URL, ${VAR:-default} taken at its default."""
    url = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", url)
    userinfo = url.split("://", 1)[1].rsplit("@", 1)[0]
    user, _, password = userinfo.partition(":")
    return user, password


def test_only_the_migration_logs_in_as_the_owner() -> None:
    services = _services()
    owner = services["db"]["environment"]["POSTGRES_USER"]
    migrate = services["migrate"]["environment"]
    assert _url_user(migrate["DATABASE_URL"])[0] == owner
    app_password = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", migrate["COGD_APP_PASSWORD"])
    for name, svc in services.items():
        if name in ("db", "migrate"):
            continue
        user, password = _url_user(svc["environment"]["DATABASE_URL"])
        assert (user, password) == ("cogd_app", app_password), name
