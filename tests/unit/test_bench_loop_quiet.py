"""bench.loop's quietness check: a phase during which other processes or the hypervisor
(steal time) took CPU runs again, and the least disturbed attempt is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.suites import loop


class ScriptedWatch(loop.CpuWatch):
    """Snapshots from a script: per phase, (other processes' cores, stolen cores)."""

    def __init__(self, phases: list[tuple[float, float]]) -> None:
        super().__init__(Path("/nonexistent"))
        self.phases = phases
        self.clock = 0.0
        self.busy = self.ours = self.steal = 0.0
        self.calls = 0

    def snapshot(self) -> tuple[float, float, float, float]:
        # measured() takes two snapshots around each phase: the second carries the load
        if self.calls % 2 == 1:
            other, steal = self.phases[self.calls // 2]
            self.clock += 10.0
            self.busy += 10.0 * (1.0 + other)  # our own 1 core plus the others
            self.ours += 10.0
            self.steal += 10.0 * steal
        self.calls += 1
        return self.clock, self.busy, self.ours, self.steal

    def settle(self, max_wait_s: float, below: float = 0.15, window_s: float = 3.0) -> float:
        return 0.0


def run_phases(phases: list[tuple[float, float]], retries: int = 2) -> tuple[Any, dict[str, Any]]:
    results = iter(range(len(phases)))
    return loop.measured(ScriptedWatch(phases), 0.0, retries, lambda: {"attempt": next(results)})


def test_a_phase_the_hypervisor_stole_from_runs_again() -> None:
    result, seen = run_phases([(0.0, 0.19), (0.0, 0.01)])
    assert result == {"attempt": 1} and seen["kept"] == 1
    assert [a["steal_cores"] for a in seen["attempts"]] == [0.19, 0.01]


def test_a_quiet_phase_runs_once_and_a_busy_one_again() -> None:
    result, seen = run_phases([(0.0, 0.02)])
    assert result == {"attempt": 0} and len(seen["attempts"]) == 1
    result, seen = run_phases([(0.6, 0.0), (0.1, 0.0)])
    assert result == {"attempt": 1} and seen["other_cores"] == 0.1


def test_when_every_attempt_is_disturbed_the_least_disturbed_is_kept() -> None:
    result, seen = run_phases([(0.0, 0.30), (0.1, 0.08), (0.4, 0.0)])
    assert len(seen["attempts"]) == 3  # retries spent
    assert result == {"attempt": 1} and seen["kept"] == 1  # 0.18 lost, against 0.30, 0.40
