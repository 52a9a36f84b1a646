"""What reads each kind of thought (issue 42 item 7: every thought reaches something or is
gone). One entry per kind of agent/db/schema.py THOUGHT_KINDS: the named queries (in
agent/db/sql) that read it, and where that takes it. tests/unit/test_thought_kinds.py
checks the two lists agree, that each query exists, reads `thoughts` and names the kind
(or reads every kind), and that the docs name no other kind."""

from __future__ import annotations

from collections.abc import Mapping

READERS: Mapping[str, tuple[tuple[str, ...], str]] = {
    "proactive_recall": (("turn_take_thoughts", "hook_pending_thoughts"),
                         "the session's (or its user's) next prompt, 'Recalled without "
                         "being asked', once (or 'expired'); in a `claude:` session, "
                         "`cogd hook`'s next prompt"),
    "self_prompt": (("dmn_next_self_prompt",),
                    "the idle DMN's next internal System 1 turn (or 'expired')"),
    "internal_turn": (("turn_on_my_mind_take",),
                      "its user's next prompt, 'On my mind', once (or 'expired')"),
    "creative_impulse": (("turn_on_my_mind_take",),
                         "its user's next prompt, 'On my mind', once (or 'expired')"),
    "discarded": (("dmn_theme_thought_count",),
                  "the rumination cap: a theme surfaced this often is not drawn again"),
    "epiphany": (("double_take_candidates",),
                 "the next relevant turn of its user, 'Double take', once"),
    "overnight": (("handoff_overnight_thoughts",),
                  "its user's next session start, in the handoff"),
    "creative_drift": (("handoff_overnight_thoughts",),
                       "its user's next session start, in the handoff"),
}
