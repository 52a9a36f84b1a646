"""Block formation (seed 001 §3.3, §3.8, §4; night-cycle stage 2): stretches → blocks.

A stretch is one session's turns within one cycle (blocks never cross a cycle
boundary, seed 001 §3.1). Each flux arc becomes a block with 2 turns of margin before
the spike and 2 after the resolution; overlapping arc blocks merge; the turns between
arcs become baseline blocks (all dead zone unless something in them is live), so every
turn of the stretch is in exactly one block and cleanup can remove it later.

Session continuity (seed 001 §4.2): a stretch that ends inside an open arc is flagged;
a later stretch of the same user within 24 hours whose opening turns ask the same
question (cosine > 0.75) continues it, and chains of continuations form metablocks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.domain.night_flux import FluxArc
from agent.domain.tables import scalar_fields


@dataclass(frozen=True)
class BlockConfig:
    margin_before_turns: int
    margin_after_turns: int
    baseline_block_max_turns: int
    baseline_block_min_turns: int
    continuity_last_turns: int
    continuity_max_age_hours: float
    continuity_min_similarity: float

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> BlockConfig:
        return cls(**scalar_fields(cls, t))


@dataclass(frozen=True)
class Span:
    """A block's turns [start, end] (inclusive) within its stretch."""

    start: int
    end: int
    kind: str  # "arc" | "baseline"
    arcs: tuple[FluxArc, ...] = ()
    anterior: int = 0  # margin turns at the start
    posterior: int = 0  # margin turns at the end

    @property
    def size(self) -> int:
        return self.end - self.start + 1

    @property
    def open_arc(self) -> bool:
        return any(not a.closed for a in self.arcs)


def form_spans(n: int, arcs: Sequence[FluxArc], cfg: BlockConfig) -> list[Span]:
    """Partition turns 0..n-1 into arc blocks (with margins) and baseline blocks."""
    if n <= 0:
        return []
    merged: list[list[Any]] = []  # [lo, hi, [arcs]]
    for arc in sorted(arcs, key=lambda a: a.start):
        lo = max(0, arc.start - cfg.margin_before_turns)
        hi = min(n - 1, arc.end + cfg.margin_after_turns)
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
            merged[-1][2].append(arc)
        else:
            merged.append([lo, hi, [arc]])
    spans: list[list[Any]] = [[lo, hi, "arc", a] for lo, hi, a in merged]
    gaps: list[tuple[int, int]] = []
    cursor = 0
    for lo, hi, _ in merged:
        if lo > cursor:
            gaps.append((cursor, lo - 1))
        cursor = hi + 1
    if cursor <= n - 1:
        gaps.append((cursor, n - 1))
    for a, b in gaps:
        length = b - a + 1
        if length < cfg.baseline_block_min_turns and spans:
            before = [s for s in spans if s[1] == a - 1]
            after = [s for s in spans if s[0] == b + 1]
            if before:
                before[0][1] = b
                continue
            if after:
                after[0][0] = a
                continue
        chunks = max(1, math.ceil(length / cfg.baseline_block_max_turns))
        size, extra = divmod(length, chunks)
        start = a
        for i in range(chunks):
            end = start + size + (1 if i < extra else 0) - 1
            spans.append([start, end, "baseline", []])
            start = end + 1
    out: list[Span] = []
    for lo, hi, kind, block_arcs in sorted(spans, key=lambda s: s[0]):
        if kind == "arc":
            first = min(a.start for a in block_arcs)
            last = max(a.end for a in block_arcs)
            out.append(Span(lo, hi, "arc", tuple(block_arcs), first - lo, hi - last))
        else:
            out.append(Span(lo, hi, "baseline"))
    return out


def exchanges(roles: Sequence[str]) -> list[tuple[int, int]]:
    """(first, last) turn index of each exchange: a user turn and the turns answering it."""
    out: list[tuple[int, int]] = []
    for i, role in enumerate(roles):
        if role == "user" or not out:
            out.append((i, i))
        else:
            out[-1] = (out[-1][0], i)
    return out


@dataclass(frozen=True)
class StretchEnds:
    """What continuity detection needs from one stretch."""

    key: str
    user_id: str | None
    cycle: str
    start_time: datetime
    end_time: datetime
    open_arc_vector: npt.NDArray[np.float32] | None  # mean of the last turns when it ends open
    opening_vector: npt.NDArray[np.float32] | None  # mean of the first user turns


def mean_unit(vectors: Sequence[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32] | None:
    if not vectors:
        return None
    m = np.mean(np.stack(vectors), axis=0)
    norm = float(np.linalg.norm(m))
    return None if norm == 0 else (m / norm).astype(np.float32)


def link_continuations(
    stretches: Sequence[StretchEnds], cfg: BlockConfig
) -> list[tuple[str, str, float]]:
    """(earlier key, later key, similarity): a later session continuing an open arc.

    Only within one cycle (metablocks never cross a night cycle, seed 001 §4.4); each
    later stretch continues at most one open arc, the most similar one, and each open
    arc is continued at most once.
    """
    links: list[tuple[str, str, float]] = []
    taken: set[str] = set()
    ordered = sorted(stretches, key=lambda s: (s.start_time, s.key))
    max_age = timedelta(hours=cfg.continuity_max_age_hours)
    for later in ordered:
        if later.opening_vector is None:
            continue
        best: tuple[float, str] | None = None
        for earlier in ordered:
            if (earlier.key == later.key or earlier.key in taken
                    or earlier.open_arc_vector is None or earlier.user_id != later.user_id
                    or earlier.cycle != later.cycle or earlier.end_time > later.start_time
                    or later.start_time - earlier.end_time > max_age):
                continue
            sim = float(np.dot(earlier.open_arc_vector, later.opening_vector))
            if sim > cfg.continuity_min_similarity and (best is None or sim > best[0]):
                best = (sim, earlier.key)
        if best is not None:
            taken.add(best[1])
            links.append((best[1], later.key, best[0]))
    return links


def chains(links: Sequence[tuple[str, str, float]]) -> list[list[str]]:
    """Continuation links → ordered chains of keys (each chain is one metablock)."""
    nxt = {a: b for a, b, _ in links}
    has_prev = {b for _, b, _ in links}
    out: list[list[str]] = []
    for head in sorted(k for k in nxt if k not in has_prev):
        chain = [head]
        while chain[-1] in nxt:
            chain.append(nxt[chain[-1]])
        out.append(chain)
    return out
