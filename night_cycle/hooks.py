"""The night cycle's fault-hook sites (see agent/testhooks.py): "night-<stage>-mid" in the
middle of a stage (after a first write), "night-<stage>-after" right after its
checkpoint. Tests use them to prove that `--resume` after a real crash ends with the same
rows as an uninterrupted run."""

from __future__ import annotations

from agent import testhooks


def fault_hook(stage: int, point: str) -> None:
    testhooks.fault_hook(f"night-{stage}-{point}")
