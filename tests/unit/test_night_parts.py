"""Night-cycle parts without a database: reconsolidation events, prose texts, the run
directory's artifacts and brief, the extractive fallback summary, the fault hook."""

from __future__ import annotations

import gzip
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from agent.domain.night_reconsolidation import (
    cosine_distance,
    reconsolidation_event,
    shift_description,
)
from agent.providers.heuristic import FALLBACK_PREFIX
from night_cycle.artifacts import RunDir
from night_cycle.prose import cortex_text, full_text, live_text
from night_cycle.summarize import extractive, strip_fallback
from night_cycle.vectors import decode, encode, parse_vector

NOW = datetime(2026, 11, 23, 3, tzinfo=UTC)


def test_the_delta_decides_between_reconsolidation_and_epiphany() -> None:
    old = np.array([1, 0, 0], np.float32)
    same = reconsolidation_event(old, old.copy(), model_version="m2", epiphany_delta=0.35,
                                 when=NOW)
    assert same["event"] == "reconsolidation" and same["delta_magnitude"] == pytest.approx(0)
    moved = reconsolidation_event(old, np.array([0, 1, 0], np.float32), model_version="m2",
                                  epiphany_delta=0.35, when=NOW)
    assert moved == {"date": NOW.isoformat(), "model_version": "m2", "event": "epiphany",
                     "delta_magnitude": 1.0}
    assert cosine_distance(old, np.array([1, 1, 0], np.float32)) == pytest.approx(
        1 - np.sqrt(0.5))
    assert "m1" in shift_description(0.42, "m1", "m2") and "0.42" in shift_description(
        0.42, None, "m2")


PROSE = {
    "anterior_margin": "user: " + "an old margin line " * 30,
    "live_zones": [{"start": 5, "end": 6, "content": "user: I decided on Postgres."}],
    "dead_zone_summaries": [{"start": 3, "end": 4,
                             "summary": FALLBACK_PREFIX + "Talk about " + "weather " * 80}],
    "posterior_margin": "assistant: ok",
}


def test_prose_texts_keep_live_zones_verbatim_and_zones_in_turn_order() -> None:
    text = full_text(PROSE)
    assert text.index("Talk about") < text.index("I decided on Postgres.")
    assert FALLBACK_PREFIX not in full_text(PROSE, for_embedding=True)
    assert live_text(PROSE) == "user: I decided on Postgres."
    cortex = cortex_text(PROSE, margin_chars=40, summary_chars=60)
    assert "user: I decided on Postgres." in cortex
    assert all(len(line) <= 60 for line in cortex.splitlines())  # trimmed and condensed
    live_margin = dict(PROSE, margin_live={"anterior": ["entry_gate:density_fact"]})
    assert PROSE["anterior_margin"] in cortex_text(live_margin, 40, 60)
    meta = {"sequence": [PROSE, PROSE]}
    assert full_text(meta) == text + "\n" + text and live_text(meta).count("Postgres") == 2


def test_artifacts_are_verified_by_hash_and_the_brief_is_never_overwritten(
        tmp_path: Path) -> None:
    run = RunDir.for_run(tmp_path, 7, NOW)
    assert run.path.name == "2026-11-23_run00007"
    sha = run.write_artifact(2, {"blocks": [1, 2]})
    assert run.read_artifact(2, sha) == {"blocks": [1, 2]}
    assert run.read_artifact(2, "0" * 64) is None and run.read_artifact(3, sha) is None
    path = run.work / "stage2.json.gz"
    path.write_bytes(gzip.compress(b'{"blocks": [9]}'))
    assert run.read_artifact(2, sha) is None  # altered: treated as absent
    assert run.write_once("brief.md", "first") is not None
    assert run.write_once("brief.md", "second") is None
    assert (run.path / "brief.md").read_text() == "first"
    run.drop_work()
    assert not run.work.exists() and (run.path / "brief.md").exists()


def test_the_extractive_fallback_names_itself_and_keeps_central_sentences() -> None:
    text = ("user: The garden tomatoes need water daily.\nassistant: Water the garden "
            "tomatoes at dawn.\nuser: Also the cat is sleeping.")
    out = extractive(text, 400)
    assert out.startswith(FALLBACK_PREFIX)
    assert "tomatoes" in out and "user:" not in out
    assert strip_fallback(out + " " + out).count(FALLBACK_PREFIX) == 0


def test_vectors_round_trip() -> None:
    v = np.array([0.25, -1.5, 3.0], np.float32)
    assert np.array_equal(decode(encode(v)), v)
    assert parse_vector("[0.25,-1.5,3]") == pytest.approx(v)
    assert parse_vector(None) is None and encode(None) is None


def test_the_fault_hook_kills_only_at_its_stage_and_point() -> None:
    code = ("from night_cycle.hooks import fault_hook\n"
            "fault_hook(6, 'mid'); fault_hook(7, 'after'); print('alive', flush=True)\n"
            "fault_hook(7, 'mid'); print('not reached')")
    env = {"COGD_TEST_HOOK": "kill:night-7-mid", "PATH": ""}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == -9 and proc.stdout == "alive\n"


def test_the_pause_hook_waits_at_its_site_until_the_test_removes_the_file(
        tmp_path: Path) -> None:
    import time

    flag = tmp_path / "paused"
    code = ("from agent.testhooks import fault_hook\n"
            "fault_hook('night-6-mid'); print('past 6', flush=True)\n"
            "fault_hook('merge-mid'); print('past merge', flush=True)")
    env = {"COGD_TEST_HOOK": f"pause:merge-mid:{flag}", "PATH": ""}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None
    assert proc.stdout.readline() == "past 6\n"
    for _ in range(500):
        if flag.exists():
            break
        time.sleep(0.02)
    assert flag.exists()
    time.sleep(0.3)
    assert proc.poll() is None  # still waiting at merge-mid
    flag.unlink()
    rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and rest == "past merge\n"


def test_a_small_models_looping_or_echoing_summary_is_cleaned_or_refused() -> None:
    from night_cycle.summarize import usable

    source = ("user: we talked about the budget.\nassistant: travel costs rose in spring.\n"
              "user: then we cut travel and keep the training money.")
    assert usable("Excerpt: user: Budget cut. Budget cut. Budget cut.", source) == "Budget cut."
    assert usable("   ", source) is None
    assert usable(source + " and more", source) is None  # no shorter than what it summarises
