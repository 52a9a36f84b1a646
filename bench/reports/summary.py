"""The summary of `python -m bench all`: each suite's headline numbers, and the report."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.reports import pct


def headline(module: Any, part: str, data: Any) -> Any:
    fn: Callable[[Any], Any] | None = getattr(module, "headline", None)
    try:
        if fn is not None:
            return fn(data)
        if part == "loop":
            return loop_headline(data)
        if part == "night":
            return night_headline(data)
        return generic_headline(data)
    except Exception as exc:  # a result format this summary does not know
        return {"note": f"headline not extracted ({type(exc).__name__}: {exc})"}


def loop_headline(data: dict[str, Any]) -> dict[str, Any]:
    """bench/suites/loop.py: per scale, turn write and recall p50/p95, the pipeline/bare ratio."""
    out = {}
    for s in data["scales"]:
        w, r = s["turn_write"], s["recall"]
        out[f"{s['memories']:,} memories"] = {
            "turn_write_ms": [w["total_ms"]["p50"], w["total_ms"]["p95"]],
            "recall_ms": [r["pipeline_ms"]["p50"], r["pipeline_ms"]["p95"]],
            "bare_ms": [r["bare_ms"]["p50"], r["bare_ms"]["p95"]],
            "ratio": [r.get("ratio_p50"), r.get("ratio_p95")]}
    return out


def night_headline(data: dict[str, Any]) -> dict[str, Any]:
    """bench/suites/night.py: turns/min through every stage (its known keys, else generic)."""
    keys = ("turns_per_min", "night_seconds", "turns", "llm", "import_turns_per_min")
    out = {k: data[k] for k in keys if k in data}
    return out or generic_headline(data) or {}


def generic_headline(data: Any, limit: int = 12) -> Any:
    """Top-level numbers of an unknown result (and of a `summary` mapping if it has one)."""
    if not isinstance(data, dict):
        return None
    summary = data.get("summary")
    src: dict[str, Any] = summary if isinstance(summary, dict) else data
    found = {k: v for k, v in src.items()
             if isinstance(v, int | float) and not isinstance(v, bool)}
    return dict(list(found.items())[:limit]) or None


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1 else f"{value:g}"
    if isinstance(value, list):
        return " / ".join(_fmt(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return "n/a" if value is None else str(value)


def headline_rows(parts: list[dict[str, Any]]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for p in parts:
        h = p.get("headline")
        if p["status"] != "ok" or not isinstance(h, dict):
            continue
        if p["part"] == "quality":
            for system, v in h.items():
                nm = ("n/a" if v["no_match_precision"] is None else
                      f"{pct(v['no_match_precision'])} / {pct(v['no_match_recall'])}")
                rows.append((f"quality, {system}: R@5 / R@10 / MRR (answerable); no-match "
                             "precision / recall",
                             f"{pct(v['R@5'])} / {pct(v['R@10'])} / {v['MRR']:.3f}; {nm}"))
        elif p["part"] == "speed":
            rows += [
                ("speed: NOTIFY one hop p50 / p95 (ms)", _fmt(h["notify_one_hop_ms"])),
                ("speed: NOTIFY ping-pong p50 / p95 (ms)", _fmt(h["notify_ping_pong_ms"])),
                ("speed: recall, no rerank p50 / p95 (ms)", _fmt(h["recall_ms"])),
                ("speed: recall, with rerank p50 / p95 (ms)", _fmt(h["recall_rerank_ms"])),
                ("speed: bare embed + HNSW p50 / p95 (ms)", _fmt(h["bare_ms"])),
                ("speed: pipeline / bare ratio p50 / p95", _fmt(h["ratio"])),
                ("speed: peak RSS (VmHWM, MiB)", _fmt(h["peak_rss_MiB"])
                 + ("" if h.get("loop_answered") else " (the loop did not finish its reply)")),
            ]
        elif p["part"] == "loop":
            for scale, v in h.items():
                rows.append((f"loop, {scale}: turn write / recall / bare p50 / p95 (ms); ratio",
                             f"{_fmt(v['turn_write_ms'])}; {_fmt(v['recall_ms'])}; "
                             f"{_fmt(v['bare_ms'])}; {_fmt(v['ratio'])}"))
        else:
            rows += [(f"{p['part']}: {k}", _fmt(v)) for k, v in h.items()]
    return rows


def markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    lines = [
        f"# Benchmark summary, {data['date']}", "",
        f"`{data['command']}` on {m['cpus']} CPUs ({m['processor']}), Python {m['python']}, "
        f"{m['platform']}; wall time {data['wall_s']} s; 1-minute load average at start / end "
        f"{data['load_average_1min'][0]} / {data['load_average_1min'][1]}.", "",
        "## Parts", "",
        "| part | status | wall s | result files |", "| --- | --- | --- | --- |",
    ]
    for p in data["parts"]:
        status = p["status"] + (f": {p['error']}" if p.get("error") else "")
        files = ", ".join(f"[{f}]({f})" for f in p.get("files", []) if f.endswith(".md"))
        lines.append(f"| {p['part']} | {status} | {p['wall_s']} | {files or '-'} |")
    rows = headline_rows(data["parts"])
    lines += ["", "## Headline numbers", "", "| measure | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in rows] or ["| (none: no part succeeded) | |"]
    lines += ["", "Each part's report has the method, the conditions and the full tables.", ""]
    return "\n".join(lines)
