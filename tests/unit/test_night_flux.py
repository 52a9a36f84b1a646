"""Flux detection (seed 001 §3.2): the surprise proxy, the rolling baseline, arcs."""

from __future__ import annotations

import numpy as np
import pytest

from agent.config import load_settings
from agent.domain.night_flux import (
    SIGNAL_NOVELTY,
    SIGNAL_PERPLEXITY,
    FluxArc,
    FluxConfig,
    choose_signal,
    detect_flux,
    novelty_signal,
    phi,
)

CFG = FluxConfig.from_table(load_settings().night_cycle)
# a baseline that wobbles 0.50 +- 0.02 (std 0.02 after 5 turns)
BASE = [0.48, 0.52, 0.48, 0.52, 0.48, 0.52, 0.48, 0.52]


def test_config_comes_from_the_seed_table() -> None:
    assert (CFG.baseline_window_turns, CFG.spike_sigma, CFG.stable_turns) == (20, 1.5, 2)
    assert CFG.smoothing_turns == 3 and CFG.stable_derivative == 0.1


def test_novelty_proxy_is_one_minus_cosine_to_the_recent_context() -> None:
    a = np.array([1, 0, 0], np.float32)
    b = np.array([0, 1, 0], np.float32)
    out = novelty_signal([a, a, b, None, b], context_turns=2)
    assert out[0] is None and out[3] is None  # no context yet; no embedding
    assert out[1] == pytest.approx(0.0)
    assert out[2] == pytest.approx(1.0)
    # context of turn 4 is the 2 embedded turns before it: a and b -> centroid at 45 degrees
    assert out[4] == pytest.approx(1 - np.sqrt(0.5), abs=1e-6)


def test_perplexity_is_used_only_when_every_turn_has_it() -> None:
    vecs = [np.array([1, 0], np.float32)] * 3
    assert choose_signal([2.0, 3.0, 4.0], vecs, 5) == (SIGNAL_PERPLEXITY, [2.0, 3.0, 4.0])
    name, signal = choose_signal([2.0, None, 4.0], vecs, 5)
    assert name == SIGNAL_NOVELTY and signal[0] is None


def test_a_spike_opens_an_arc_that_closes_after_two_stable_turns() -> None:
    signal: list[float | None] = [*BASE, 0.9, 0.5, 0.5, 0.5, 0.5]
    trace = detect_flux(signal, CFG)
    assert trace.states[:8] == ["baseline"] * 8
    # the 3-turn moving average still rises on the turn after the spike (+0.33 std:
    # not stable); it falls on the next two (stable, stable): the arc closes there
    assert trace.states[8:] == ["spike", "resolution", "resolution", "stable", "baseline"]
    [arc] = trace.arcs
    assert (arc.start, arc.end, arc.closed) == (8, 11, True)
    assert arc.peak == 0.9 and arc.final == 0.5
    assert arc.baseline == pytest.approx(0.5)
    assert arc.reversal_quality == pytest.approx((0.9 - 0.5) * 4)
    assert arc.arrete == pytest.approx(0.0)


def test_just_below_the_threshold_is_not_a_spike() -> None:
    below = 0.5 + 1.49 * 0.02
    above = 0.5 + 1.51 * 0.02
    assert not detect_flux([*BASE, below], CFG).arcs
    assert detect_flux([*BASE, above], CFG).arcs


def test_no_spike_is_judged_before_the_baseline_has_enough_turns() -> None:
    trace = detect_flux([0.5, 0.5, 0.99, 0.5], CFG)
    assert trace.arcs == [] and trace.z[2] == 0.0


def test_rising_surprise_keeps_the_arc_open_to_the_end() -> None:
    trace = detect_flux([*BASE, 0.9, 1.2, 1.6, 2.2], CFG)
    [arc] = trace.arcs
    assert not arc.closed and arc.end == len(BASE) + 3
    assert arc.peak == 2.2 and "stable" not in trace.states


def test_arc_round_trips_through_json() -> None:
    arc = FluxArc(3, 7, 0.9, 0.5, 0.02, 0.4, True)
    assert FluxArc.from_dict(arc.as_dict()) == arc


def test_phi_maps_z_to_a_novelty_score() -> None:
    assert phi(0.0) == 0.5
    assert phi(1.5) == pytest.approx(0.9332, abs=1e-4)
