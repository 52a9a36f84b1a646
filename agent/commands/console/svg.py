"""Server-side SVG charts for the console (issue 44): pure functions, stdlib only.

Every function returns one `<svg>` element as a string, well-formed XML with a viewBox
(the page scales it), every piece of text escaped. No script, no external reference:
nothing is fetched. Empty data gives a small SVG that says "no data" instead of an empty
frame.

- `line_chart`: one or more series over time (weights, valence/energy, latency).
- `calibration_plot`: stated confidence against the observed hit rate, per bin, with
  the diagonal of perfect calibration.
- `tree`: the cortex's RAPTOR nodes (level 3 canopy on top, level 1 branches at the
  bottom); each node links where `href` says (its blocks on the page).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

# colour-blind friendly (Okabe-Ito), cycled
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442")
FONT = 'font-family="system-ui, sans-serif"'
WIDE_TREE_SLOTS = 8  # a tree with more leaves than this is drawn left to right

Point = tuple[datetime | float, float]


def _e(text: object) -> str:
    """Text or an attribute value, escaped for XML (quotes too)."""
    return escape(str(text), quote=True)


def _f(x: float) -> str:
    return f"{x:.1f}"


def _open(width: int, height: int, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{_e(title)}" '
            f'class="chart">', f"<title>{_e(title)}</title>"]


def no_data(title: str, message: str = "no data", width: int = 320, height: int = 80) -> str:
    """A small SVG that says there is nothing to draw."""
    parts = _open(width, height, title)
    parts.append(f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" '
                 'fill="none" stroke="#bbb" stroke-dasharray="4 3"/>')
    parts.append(f'<text x="{width / 2:.1f}" y="{height / 2:.1f}" text-anchor="middle" '
                 f'dominant-baseline="middle" fill="#666" font-size="13" {FONT} '
                 f'class="no-data">{_e(title)}: {_e(message)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _x_value(x: datetime | float) -> float:
    return x.timestamp() if isinstance(x, datetime) else float(x)


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if not math.isfinite(lo) or not math.isfinite(hi):
        return []
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out: list[float] = []
    v = first
    while v <= hi + step * 1e-6 and len(out) < 20:
        out.append(round(v, 10))
        v += step
    return out


def _tick_label(v: float) -> str:
    if abs(v) >= 1000 or v == int(v):
        return f"{v:.0f}"
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _time_label(ts: float, span: float) -> str:
    when = datetime.fromtimestamp(ts, UTC)
    if span <= 2 * 86400:
        return when.strftime("%m-%d %H:%M")
    return when.strftime("%Y-%m-%d")


def line_chart(series: Mapping[str, Sequence[Point]], *, title: str,
               y_min: float | None = None, y_max: float | None = None, y_label: str = "",
               width: int = 640, height: int = 240) -> str:
    """Each series a polyline (and its points) over a shared x axis: datetimes (UTC
    labels) or numbers. y_min/y_max fix the y range (else it is the data's)."""
    clean = {name: sorted(((_x_value(x), float(y)) for x, y in pts
                           if y is not None and math.isfinite(float(y))), key=lambda p: p[0])
             for name, pts in series.items()}
    clean = {name: pts for name, pts in clean.items() if pts}
    if not clean:
        return no_data(title, width=width, height=min(height, 80))
    timed = any(isinstance(x, datetime) for pts in series.values() for x, _ in pts)
    xs = [x for pts in clean.values() for x, _ in pts]
    ys = [y for pts in clean.values() for _, y in pts]
    x_lo, x_hi = min(xs), max(xs)
    lo = min(ys) if y_min is None else y_min
    hi = max(ys) if y_max is None else y_max
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    if x_hi <= x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    left, right, top = 48, 12, 26
    legend_rows = math.ceil(len(clean) / 4)
    bottom = 26 + 16 * legend_rows
    pw, ph = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * pw

    def py(y: float) -> float:
        y = min(max(y, lo), hi)  # a value outside a fixed range sits on its edge
        return top + (1 - (y - lo) / (hi - lo)) * ph

    parts = _open(width, height, title)
    parts.append(f'<text x="{left}" y="16" font-size="13" font-weight="600" {FONT}>'
                 f"{_e(title)}</text>")
    if y_label:
        parts.append(f'<text x="{width - right}" y="16" font-size="11" text-anchor="end" '
                     f'fill="#555" {FONT}>{_e(y_label)}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
                 'stroke="#ccc"/>')
    for t in _nice_ticks(lo, hi):
        y = py(t)
        parts.append(f'<line x1="{left}" y1="{_f(y)}" x2="{left + pw}" y2="{_f(y)}" '
                     'stroke="#eee"/>')
        parts.append(f'<text x="{left - 4}" y="{_f(y + 4)}" font-size="10" text-anchor="end" '
                     f'fill="#555" {FONT}>{_e(_tick_label(t))}</text>')
    span = x_hi - x_lo
    x_ticks = [x_lo + span * i / 3 for i in range(4)]
    for i, t in enumerate(x_ticks):
        anchor = "start" if i == 0 else "end" if i == 3 else "middle"
        label = _time_label(t, span) if timed else _tick_label(t)
        parts.append(f'<text x="{_f(px(t))}" y="{top + ph + 14}" font-size="10" '
                     f'text-anchor="{anchor}" fill="#555" {FONT}>{_e(label)}</text>')
    for i, (name, pts) in enumerate(clean.items()):
        colour = PALETTE[i % len(PALETTE)]
        coords = " ".join(f"{_f(px(x))},{_f(py(y))}" for x, y in pts)
        parts.append(f'<g class="series" data-name="{_e(name)}">')
        if len(pts) > 1:
            parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" '
                         'stroke-width="1.8"/>')
        if len(pts) <= 200:
            for x, y in pts:
                parts.append(f'<circle cx="{_f(px(x))}" cy="{_f(py(y))}" r="2.2" '
                             f'fill="{colour}"/>')
        parts.append("</g>")
        lx = left + (i % 4) * (pw / 4)
        ly = top + ph + 30 + 16 * (i // 4)
        parts.append(f'<rect x="{_f(lx)}" y="{ly - 8}" width="10" height="10" '
                     f'fill="{colour}"/>')
        parts.append(f'<text x="{_f(lx + 14)}" y="{ly + 1}" font-size="11" {FONT}>'
                     f"{_e(_clip(name, 28))}</text>")
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class CalibrationBin:
    """One confidence bin: the mean stated confidence, the observed hit rate, how many."""

    stated: float
    observed: float
    count: int


def calibration_plot(bins: Sequence[CalibrationBin], *, title: str, size: int = 280) -> str:
    """Stated confidence (x) against observed frequency (y), 0-1 on both, the diagonal
    dashed; each bin a dot whose area grows with its count, labelled n=."""
    usable = [b for b in bins if b.count > 0 and math.isfinite(b.stated)
              and math.isfinite(b.observed)]
    if not usable:
        return no_data(title, "no settled predictions yet", width=size + 40)
    left, top, right, bottom = 40, 26, 12, 34
    width, height = size, size
    pw, ph = width - left - right, height - top - bottom

    def px(v: float) -> float:
        return left + min(max(v, 0.0), 1.0) * pw

    def py(v: float) -> float:
        return top + (1 - min(max(v, 0.0), 1.0)) * ph

    parts = _open(width, height, title)
    parts.append(f'<text x="{left}" y="16" font-size="13" font-weight="600" {FONT}>'
                 f"{_e(title)}</text>")
    parts.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
                 'stroke="#ccc"/>')
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{left - 4}" y="{_f(py(t) + 4)}" font-size="10" '
                     f'text-anchor="end" fill="#555" {FONT}>{t:g}</text>')
        parts.append(f'<text x="{_f(px(t))}" y="{top + ph + 13}" font-size="10" '
                     f'text-anchor="middle" fill="#555" {FONT}>{t:g}</text>')
    parts.append(f'<line x1="{_f(px(0))}" y1="{_f(py(0))}" x2="{_f(px(1))}" y2="{_f(py(1))}" '
                 'stroke="#999" stroke-dasharray="4 3" class="diagonal"/>')
    parts.append(f'<text x="{_f(left + pw / 2)}" y="{height - 4}" font-size="10" '
                 f'text-anchor="middle" fill="#555" {FONT}>stated confidence</text>')
    parts.append(f'<text x="10" y="{_f(top + ph / 2)}" font-size="10" text-anchor="middle" '
                 f'fill="#555" transform="rotate(-90 10 {_f(top + ph / 2)})" {FONT}>'
                 "observed</text>")
    most = max(b.count for b in usable)
    ordered = sorted(usable, key=lambda b: b.stated)
    if len(ordered) > 1:
        coords = " ".join(f"{_f(px(b.stated))},{_f(py(b.observed))}" for b in ordered)
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{PALETTE[0]}" '
                     'stroke-width="1.5"/>')
    for b in ordered:
        r = 3 + 5 * math.sqrt(b.count / most)
        parts.append(f'<circle cx="{_f(px(b.stated))}" cy="{_f(py(b.observed))}" '
                     f'r="{r:.1f}" fill="{PALETTE[0]}" fill-opacity="0.7" class="bin">'
                     f"<title>stated {b.stated:.2f}, observed {b.observed:.2f}, "
                     f"n={b.count}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class TreeNode:
    """A RAPTOR node: its level (1 branch, 2 trunk, 3 canopy), its parent's id (None at
    the top), a label (the summary) and where clicking it goes."""

    node_id: str
    level: int
    label: str
    parent_id: str | None = None
    href: str | None = None
    leaves: int = 0


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def tree(nodes: Sequence[TreeNode], *, title: str, max_width: int = 1600) -> str:
    """The nodes as a tree: the highest level on top, level 1 at the bottom, each parent
    centred over its children; with more than WIDE_TREE_SLOTS leaves, left to right
    instead (a column per level, a row per leaf: labels stay readable). A node without a
    known parent is a root. Each node is a link (`href`), its full summary the tooltip."""
    if not nodes:
        return no_data(title, "no RAPTOR levels yet (the night cycle builds them)", width=480)
    by_id = {n.node_id: n for n in nodes}
    children: dict[str, list[TreeNode]] = {}
    roots: list[TreeNode] = []
    for n in nodes:
        if n.parent_id and n.parent_id in by_id and n.parent_id != n.node_id:
            children.setdefault(n.parent_id, []).append(n)
        else:
            roots.append(n)
    levels = sorted({n.level for n in nodes}, reverse=True)
    row_of = {lvl: i for i, lvl in enumerate(levels)}
    # leaves of the drawing get slots left to right; parents sit over their children
    slot_x: dict[str, float] = {}
    seen: set[str] = set()
    next_slot = [0]

    def place(n: TreeNode, depth: int) -> float:
        seen.add(n.node_id)
        kids = [k for k in children.get(n.node_id, []) if k.node_id not in seen]
        if not kids or depth > 8:
            slot_x[n.node_id] = next_slot[0]
            next_slot[0] += 1
        else:
            xs = [place(k, depth + 1) for k in kids]
            slot_x[n.node_id] = (min(xs) + max(xs)) / 2
        return slot_x[n.node_id]

    for r in sorted(roots, key=lambda n: (-n.level, n.label)):
        if r.node_id not in seen:
            place(r, 0)
    slots = max(next_slot[0], 1)
    box_h, margin, top = 34, 10, 30
    boxes: dict[str, tuple[float, float, float]] = {}  # node -> (x, y, width)
    if slots <= WIDE_TREE_SLOTS:  # top-down: the highest level on top
        box_w, gap_x, gap_y = 120, 12, 46
        natural = margin * 2 + slots * box_w + (slots - 1) * gap_x
        width: float = max(320, min(max_width, natural))
        scale = (width - 2 * margin) / (slots * box_w + (slots - 1) * gap_x)
        bw = box_w * scale
        height: float = top + len(levels) * (box_h + gap_y) - gap_y + margin
        for n in nodes:
            boxes[n.node_id] = (margin + slot_x[n.node_id] * (box_w + gap_x) * scale,
                                top + row_of[n.level] * (box_h + gap_y), bw)
    else:  # many nodes: left to right, the highest level in the first column, a row each
        gap_x, gap_y = 28, 6
        bw = min(260.0, (max_width - 2 * margin - (len(levels) - 1) * gap_x) / len(levels))
        width = margin * 2 + len(levels) * bw + (len(levels) - 1) * gap_x
        height = top + slots * (box_h + gap_y) - gap_y + margin
        for n in nodes:
            boxes[n.node_id] = (margin + row_of[n.level] * (bw + gap_x),
                                top + slot_x[n.node_id] * (box_h + gap_y), bw)
    across = slots > WIDE_TREE_SLOTS

    def edge(parent: TreeNode, child: TreeNode) -> tuple[float, float, float, float]:
        px_, py_, pw_ = boxes[parent.node_id]
        cx_, cy_, cw_ = boxes[child.node_id]
        if across:  # right edge of the parent to the left edge of the child
            return px_ + pw_, py_ + box_h / 2, cx_, cy_ + box_h / 2
        return px_ + pw_ / 2, py_ + box_h, cx_ + cw_ / 2, cy_

    parts = _open(int(width), int(height), title)
    parts.append(f'<text x="{margin}" y="18" font-size="13" font-weight="600" {FONT}>'
                 f"{_e(title)}</text>")
    for n in nodes:  # edges first, under the boxes
        for k in children.get(n.node_id, []):
            x1, y1, x2, y2 = edge(n, k)
            parts.append(f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" '
                         'stroke="#999"/>')
    chars = max(4, int(bw / 6.2))
    fills = {3: "#FBE3D6", 2: "#DCEFE6", 1: "#DDEBF7"}
    for n in nodes:
        x, y, w = boxes[n.node_id]
        mid = x + w / 2
        label = _clip(n.label or "(no summary)", chars)
        sub = f"level {n.level}" + (f" · {n.leaves} blocks" if n.leaves else "")
        open_tag = f'<a href="{_e(n.href)}" class="node-link">' if n.href else ""
        parts.append(f'<g class="node" data-level="{n.level}">{open_tag}'
                     f"<title>{_e(n.label)}</title>"
                     f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{box_h}" rx="4" '
                     f'fill="{fills.get(n.level, "#eee")}" stroke="#777"/>'
                     f'<text x="{_f(mid)}" y="{_f(y + 14)}" font-size="10" '
                     f'text-anchor="middle" {FONT}>{_e(label)}</text>'
                     f'<text x="{_f(mid)}" y="{_f(y + 27)}" font-size="9" fill="#555" '
                     f'text-anchor="middle" {FONT}>{_e(_clip(sub, chars))}</text>'
                     f'{"</a>" if n.href else ""}</g>')
    parts.append("</svg>")
    return "".join(parts)
