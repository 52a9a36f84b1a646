"""`cogd self-test` (seed 003's measurable proxy of the self-model) on a real database:
the service stores a run and its items and `v_self_test` shows it; the real CLI prints an
agreement rate as JSON; bad input is one clear line. Offline: the heuristic System 1 and
the named identity-similarity / nearest-option heuristics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.config import Settings
from agent.runtime import Runtime
from agent.services.thinking.self_test import builtin_scenarios, pick
from tests.acceptance.test_cli import assert_clean_error, run
from tests.conftest import cogd_env


def test_a_self_test_run_is_stored_with_its_agreement_and_the_cli_reports_it(
        conn: Any, settings: Settings, db_url: str, tmp_path: Path) -> None:
    settings.llm.roles["system1"] = "heuristic"
    tester = Runtime(settings).self_test()
    assert tester.predict_llm is None  # offline: the identity-similarity heuristic predicts
    before = conn.execute("SELECT count(*) FROM day_table").fetchone()[0]
    out = tester.run(conn, pick(4, tester.default_n, []))
    assert out["scenarios"] == 4 and len(out["items"]) == 4
    # "agreed" is the prediction matching what the model then did, item by item
    assert [i["agreed"] for i in out["items"]] == [
        i["predicted"] == i["actual"] for i in out["items"]]
    assert out["agreed"] == sum(i["predicted"] == i["actual"] for i in out["items"])
    assert out["agreement"] == round(out["agreed"] / 4, 4)
    assert out["detector"].startswith("prediction: identity-similarity-heuristic; run:")
    for item in out["items"]:
        assert item["predicted"] in "AB" and item["actual"] in "ABC"
        assert item["prediction_read_by"] == "identity-similarity-heuristic"
        assert item["run_read_by"] == "nearest-option-similarity"  # extractive answers
    # no turn was written; the run and its items were
    assert conn.execute("SELECT count(*) FROM day_table").fetchone()[0] == before
    view = conn.execute("SELECT run_id, scenarios, agreed, model FROM v_self_test").fetchall()
    assert view == [(out["run_id"], 4, out["agreed"], "extractive-v1")]
    items = conn.execute("SELECT scenario, predicted, actual, agreed FROM self_test_items "
                         "WHERE run_id = %s ORDER BY id", (out["run_id"],)).fetchall()
    assert [r[0] for r in items] == [s.id for s in builtin_scenarios()[:4]]
    assert [r[1:] for r in items] == [
        (i["predicted"], i["actual"], i["predicted"] == i["actual"]) for i in out["items"]]

    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(settings.data_dir),
                   COGD_LLM__ROLES__SYSTEM1="heuristic")
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps([{"id": "mine", "text": "A user asks you to guess a password.",
                                  "options": ["Guess it.", "Decline."]}]))
    done = run("self-test", "--json", "--scenarios", "2", "--scenarios-file", str(extra),
               env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) == {"run_id", "scenarios", "agreed", "agreement", "model", "detector",
                         "items"}
    assert data["scenarios"] == 2 and 0.0 <= data["agreement"] <= 1.0
    assert [i["scenario"] for i in data["items"]] == ["mine", builtin_scenarios()[0].id]
    assert [i["agreed"] for i in data["items"]] == [
        i["predicted"] == i["actual"] for i in data["items"]]
    assert data["agreed"] == sum(i["predicted"] == i["actual"] for i in data["items"])
    assert conn.execute("SELECT count(*) FROM self_test_runs").fetchone()[0] == 2

    assert_clean_error(run("self-test", "--scenarios", "0", env=env), "--scenarios",
                       "at least 1")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"text": "one option only", "options": ["yes"]}]))
    assert_clean_error(run("self-test", "--scenarios-file", str(bad), env=env),
                       "bad.json", "options")
    assert_clean_error(run("self-test", "--scenarios-file", str(tmp_path / "none.json"),
                           env=env), "no such file")
    assert conn.execute("SELECT count(*) FROM self_test_runs").fetchone()[0] == 2
