"""Reading a config table (a [section] of config/default.toml) into a config dataclass.

config/default.toml is the one source of values: the domain's config dataclasses have no
defaults, and a key missing from the table is an error naming it (a user file is merged
over the defaults key by key, so only a broken install or a typo in a new key gets here).
tests/unit/test_config_drift.py checks that every dataclass is built from default.toml
alone and that every key there is read by something.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent.errors import ConfigError


def need(table: Mapping[str, Any], key: str) -> Any:
    """table[key], or ConfigError naming the key."""
    try:
        return table[key]
    except KeyError:
        raise ConfigError(
            f"config key {key!r} is missing from its table: config/default.toml defines "
            "every key (a COGD_CONFIG file or COGD_ env var only overrides)") from None


def scalar_fields(cls: Any, table: Mapping[str, Any],
                  aliases: Mapping[str, str] | None = None,
                  skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every field of dataclass `cls` (but `skip`) from `table`, cast to the field's type
    (bool, int, otherwise float); `aliases` maps a table key to the field it sets."""
    key_of = {field: key for key, field in (aliases or {}).items()}
    out: dict[str, Any] = {}
    for name, f in cls.__dataclass_fields__.items():
        if name in skip:
            continue
        value = need(table, key_of.get(name, name))
        out[name] = (bool(value) if f.type == "bool" else
                     int(value) if f.type == "int" else float(value))
    return out
