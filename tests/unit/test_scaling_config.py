"""The keys for running past one machine (issue 43 item 4): [cortex] uri and
storage_options, [database] recall_url; the cortex's old key is refused with its new place."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config import load_settings
from agent.cortex.lance import cortex_uri
from agent.errors import ConfigError


def test_cortex_and_replica_keys_from_files_and_env(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings(data_dir=tmp_path)
    assert cortex_uri(settings) == str(tmp_path / "cortex")  # "" = DATA_DIR/cortex
    assert settings.cortex.storage_options == {} and settings.database.recall_url == ""

    user = tmp_path / "user.toml"
    user.write_text('[cortex]\nuri = "s3://b/p"\n'
                    'storage_options = { allow_http = true, region = "r1", timeout = 30 }\n')
    monkeypatch.setenv("COGD_CONFIG", str(user))
    monkeypatch.setenv("COGD_CORTEX__STORAGE_OPTIONS__ENDPOINT", "http://127.0.0.1:9000")
    monkeypatch.setenv("COGD_DATABASE__RECALL_URL", "postgresql://replica/cogd")
    settings = load_settings(data_dir=tmp_path)
    assert cortex_uri(settings) == "s3://b/p"
    # LanceDB takes text: a TOML boolean or number is written as it would be in an env var
    assert settings.cortex.storage_options == {
        "allow_http": "true", "region": "r1", "timeout": "30",
        "endpoint": "http://127.0.0.1:9000"}
    assert settings.database.recall_url == "postgresql://replica/cogd"

    monkeypatch.delenv("COGD_CORTEX__STORAGE_OPTIONS__ENDPOINT")  # the env var wins
    user.write_text("[cortex]\nstorage_options = { endpoint = [1] }\n")
    with pytest.raises(ConfigError, match=r"cortex\.storage_options\.endpoint: .*not a storage"):
        load_settings(data_dir=tmp_path)


def test_the_night_cycles_cortex_uri_moved_to_cortex_uri(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGD_NIGHT_CYCLE__CORTEX_URI", "/srv/cortex")
    with pytest.raises(ConfigError, match=r"night_cycle\.cortex_uri moved: set \[cortex\] uri"):
        load_settings(data_dir=tmp_path)
