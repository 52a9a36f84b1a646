"""Reading a config table (a [section] of config/default.toml) into a config dataclass."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def scalar_fields(cls: Any, table: Mapping[str, Any],
                  aliases: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The fields of dataclass `cls` that `table` sets, cast to the field's type (bool,
    int, otherwise float); `aliases` maps a table key to the field it sets."""
    key_of = {field: key for key, field in (aliases or {}).items()}
    out: dict[str, Any] = {}
    for name, f in cls.__dataclass_fields__.items():
        key = key_of.get(name, name)
        if key in table:
            value = table[key]
            out[name] = (bool(value) if f.type == "bool" else
                         int(value) if f.type == "int" else float(value))
    return out
