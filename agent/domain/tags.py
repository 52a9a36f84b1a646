"""Memory tags (issue #4 step 6): a reply may cite `[memory:<id>]`.

Recalled items are shown to the model with their tag; whatever the reply cites is
parsed here and stored as a citation (table memory_citations), valid or not — a
tag naming an id that was never recalled is kept and marked invalid, so an
invented citation is visible rather than silently dropped.
"""

from __future__ import annotations

import re
import uuid

TAG = re.compile(r"\[memory:([0-9a-fA-F-]{36})\]")


def tag_for(item_id: str) -> str:
    """The tag for a recall item id ('memory:<uuid>', 'day_table:<uuid>', 'block:<uuid>')."""
    return f"[memory:{item_id.split(':', 1)[-1]}]"


def parse_memory_tags(text: str) -> list[str]:
    """Cited ids (uuids, lower case), in order of first appearance, without repeats."""
    seen: list[str] = []
    for raw in TAG.findall(text):
        try:
            cited = str(uuid.UUID(raw))
        except ValueError:
            continue
        if cited not in seen:
            seen.append(cited)
    return seen
