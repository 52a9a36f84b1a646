"""Consolidation (issue #5): one pass, every operation in its own transaction, each logged.

drain scratch_buffer → strengthen from recall_log → merge into insights →
contradictions → decay → corrections → models → principles → intentions →
continuation notes → predictions (expiry) → decisions (trails) → workflows →
promotion → goal safety → gate tuning → index (the lexicon entries).

Nothing is deleted: merged sources are marked superseded (importance lowered,
`supersedes` links from the insight; without a model that writes insights, near-duplicates
merge into an extractive insight, a named heuristic: issue 39), decayed memories below
the archive threshold are archived (still searchable). A pass writes consolidation_log rows
only for operations that changed something, and every operation is written so that a
second pass with no new input finds nothing to do (watermarks in worker_state,
"at most once per period" markers in memory metadata).

Bounded work per pass (cogd choice, named here): merging and contradiction checks
look at the MAX_MEMORIES most recent active memories, and at most MAX_PAIRS
contradiction candidates per pass; the rest waits for the next pass.

One user's memories only: merging groups, and the contradiction check pairs, memories of
the same user (memories of no user form their own group), as models and principles do;
an insight is filed under its sources' user, so one user's words never reach another's.
A goal promotion makes is its memory's user's (goals.user_id, revision 0019): it reaches
that user's prompt only. Promotion's span and decay read written_at (when cogd wrote the
row), never a client's back-dated created_at.

One module per operation, as the night cycle has one per stage (what each is given and
returns: context.py); runner.py runs them in order:

    drain_scratch, strengthen, merge, contradictions, decay, corrections, models,
    principles, intentions, continuation, predictions, decisions, workflows, promotion,
    goal_safety, gate_tuning, index   one operation each
    context.py     PassConfig (the settings a pass reads, parsed once), PassContext (what an
                   operation is given) and the helpers the operations share
    runner.py      Consolidator (the pass), PassReport, OPERATIONS (the order)
    state.py       get_state / set_state: the watermarks in worker_state
    lineage.py     held_by / why: the chain behind a memory
"""

from agent.services.background.consolidation.context import PassConfig, PassContext
from agent.services.background.consolidation.contradictions import (
    CONTRADICTION_SYSTEM,
    Judgement,
)
from agent.services.background.consolidation.lineage import held_by, why
from agent.services.background.consolidation.runner import Consolidator, PassReport
from agent.services.background.consolidation.state import get_state, set_state

__all__ = ["CONTRADICTION_SYSTEM", "Consolidator", "Judgement", "PassConfig", "PassContext",
           "PassReport", "get_state", "held_by", "set_state", "why"]
