"""Every LLM role in config/default.toml [llm.roles] is built by some code, and every role
the code builds is configured (issue 42 item 7: nothing is listed that does not run).

The code's roles come from a static scan of agent/ and night_cycle/ for calls with a
string literal role: `<x>.llm("role")` (Runtime.llm), `<x>._llm_of("role", ...)`,
`<x>.role_profile("role")` and `build_llm(settings, "role", ...)`. Calls whose role is a
variable (`cogd ask --role`, `cogd models`' probe of every role) build whatever is
configured and prove nothing, so they are not counted."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from agent.config import RETIRED_ROLES, ROLES, default_config_path, load_settings
from agent.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("agent", "night_cycle")
ROLE_FIRST = {"llm", "_llm_of", "role_profile"}  # the role is the first argument
ROLE_SECOND = {"build_llm"}  # build_llm(settings, role, ...)


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def roles_in(source: str) -> set[str]:
    """The string-literal roles one module's calls ask for."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        index = 0 if name in ROLE_FIRST else 1 if name in ROLE_SECOND else None
        if index is None:
            continue
        arg: ast.expr | None = node.args[index] if len(node.args) > index else None
        if arg is None:
            arg = next((k.value for k in node.keywords if k.arg == "role"), None)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.add(arg.value)
    return found


def roles_built() -> dict[str, set[str]]:
    """role -> the files (relative to the repository) that ask for it."""
    out: dict[str, set[str]] = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            for role in roles_in(path.read_text(encoding="utf-8")):
                out.setdefault(role, set()).add(str(path.relative_to(ROOT)))
    return out


def configured_roles() -> set[str]:
    return set(tomllib.loads(default_config_path().read_text())["llm"]["roles"])


def test_the_scan_reads_each_call_form_and_skips_a_variable_role() -> None:
    source = (
        "rt.llm('a')\n"
        "self._llm_of('b', PROVIDERS)\n"
        "settings.role_profile('c')[1]\n"
        "factory.build_llm(self.settings, 'd', recorder)\n"
        "build_llm(settings, role='e')\n"
        "f = lambda: self.llm('f')\n"
        "factory.build_llm(settings, role)\n"  # a variable: not counted
        "self.llm(role)\n"
        "print('g')\n"
    )
    assert roles_in(source) == {"a", "b", "c", "d", "e", "f"}


def test_the_scan_finds_the_known_call_sites_on_the_real_tree() -> None:
    """The scan is not vacuous: each role is found where the code is known to ask for it
    (if a call site moves, update this map, not the scan)."""
    built = roles_built()
    expected = {
        "system1": "agent/runtime.py",
        "system2": "agent/runtime.py",
        "consolidation": "agent/runtime.py",
        "rewrite": "agent/runtime.py",
        "emotion": "agent/runtime.py",
        "night_cycle": "night_cycle/context.py",
    }
    for role, path in expected.items():
        assert path in built.get(role, set()), (role, built.get(role))


def test_configured_roles_are_exactly_the_roles_the_code_builds() -> None:
    built = set(roles_built())
    configured = configured_roles()
    assert configured - built == set(), "configured, but no code builds them"
    assert built - configured == set(), "built, but not in config/default.toml"
    assert set(ROLES) == configured  # agent/config.py's list accepts exactly these


def test_a_mismatch_would_be_caught() -> None:
    """The comparison fails when a role is configured that nothing builds (what `gate` and
    `dmn` were before issue 42)."""
    assert configured_roles() | {"gate"} != set(roles_built())
    assert not set(RETIRED_ROLES) & set(roles_built())


def test_the_docs_name_every_role_and_no_retired_one_as_a_role() -> None:
    ops = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    for role in ROLES:
        assert f"`{role}`" in ops, role
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for role in RETIRED_ROLES:
        assert f"{role} = " not in readme and f"`{role}` role" not in readme


@pytest.mark.parametrize("role", sorted(RETIRED_ROLES))
def test_a_user_config_that_names_a_retired_role_gets_one_clear_line(
        role: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "mine.toml"
    user.write_text(f'[llm.roles]\n{role} = "local"\n')
    monkeypatch.setenv("COGD_CONFIG", str(user))
    with pytest.raises(ConfigError, match=f"role '{role}' was removed") as err:
        load_settings(data_dir=tmp_path)
    assert "\n" not in str(err.value) and "delete it" in str(err.value)


def test_a_retired_role_is_not_a_role_any_more(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown role 'dmn'"):
        load_settings(data_dir=tmp_path).role_profile("dmn")
