"""A block's prose (seed 001 §3.4): margins, live zones verbatim, dead-zone summaries,
and the flat texts made from it (what is embedded, what the cortex returns)."""

from __future__ import annotations

from typing import Any

from night_cycle.summarize import strip_fallback


def zones_in_order(prose: dict[str, Any]) -> list[tuple[int, str]]:
    """(start, text) of every zone, live verbatim and dead summarised, in turn order."""
    zones = [(int(z["start"]), str(z["content"])) for z in prose.get("live_zones", [])]
    zones += [(int(z["start"]), str(z["summary"])) for z in prose.get("dead_zone_summaries", [])]
    return sorted(zones, key=lambda z: z[0])


def full_text(prose: dict[str, Any], *, for_embedding: bool = False) -> str:
    if "sequence" in prose:  # a metablock: its constituents in order
        return "\n".join(full_text(p, for_embedding=for_embedding) for p in prose["sequence"])
    parts = [prose.get("anterior_margin") or ""]
    parts += [strip_fallback(t) if for_embedding else t for _, t in zones_in_order(prose)]
    parts.append(prose.get("posterior_margin") or "")
    return "\n".join(p for p in parts if p)


def live_text(prose: dict[str, Any]) -> str:
    if "sequence" in prose:
        return "\n".join(live_text(p) for p in prose["sequence"])
    return "\n".join(str(z["content"]) for z in prose.get("live_zones", []))


def cortex_text(prose: dict[str, Any], margin_chars: int, summary_chars: int) -> str:
    """seed 001 §5.3: margins trimmed, summaries condensed further, live zones verbatim."""
    if "sequence" in prose:
        return "\n".join(cortex_text(p, margin_chars, summary_chars) for p in prose["sequence"])

    def cut(text: str, n: int) -> str:
        text = " ".join(text.split())
        return text if len(text) <= n else text[: max(0, n - 3)].rstrip() + "..."

    live_margin = prose.get("margin_live") or {}
    parts = []
    if prose.get("anterior_margin"):
        parts.append(prose["anterior_margin"] if live_margin.get("anterior")
                     else cut(prose["anterior_margin"], margin_chars))
    for z in sorted(prose.get("live_zones", []) + prose.get("dead_zone_summaries", []),
                    key=lambda z: int(z["start"])):
        parts.append(str(z["content"]) if "content" in z else cut(str(z["summary"]),
                                                                  summary_chars))
    if prose.get("posterior_margin"):
        parts.append(prose["posterior_margin"] if live_margin.get("posterior")
                     else cut(prose["posterior_margin"], margin_chars))
    return "\n".join(parts)
