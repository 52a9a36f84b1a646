"""Stage 11, episodes and milestones (seed 000 §4.3, §4.6.3; issue 42 item 4).

Numbered 11 so the older stages keep their numbers (and a resumed run its checkpoints),
but run after stage 8 and before the day-table cleanup (9), which may delete the turns it
reads. The blocks no episode holds yet (at most MAX_BLOCKS a run, oldest first) are cut,
per user, into episodes by agent/domain/episodes.py's EPISODE_HEURISTIC (a UTC day, a
time gap, a topic shift of the blocks' vectors). Each episode gets a title: the
night_cycle role's LLM when it routes to a real provider (openai, gemini), else the
TITLE_HEURISTIC (salient terms of the user's turns); `titled_by` says which. Its
milestones come from the MILESTONE_HEURISTIC over the user's turns (a first mention of a
name, a decision, a move, an important or emotional event). Stored with their dates and
source turn ids, in one transaction with the checkpoint; ids derive from the first
block, and every insert is ON CONFLICT DO NOTHING, so a re-run writes nothing twice.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from agent.db.queries import query
from agent.domain import episodes as rules
from agent.errors import CogdError
from agent.services.reach.intentions import REAL_PROVIDERS
from night_cycle.context import RunContext
from night_cycle.prose import full_text
from night_cycle.stages import StageOutput
from night_cycle.vectors import parse_vector

logger = logging.getLogger(__name__)
NAME = "episodes and milestones"
TRANSACTIONAL = True
MAX_BLOCKS = 20_000  # cogd choice: a run's bound; the rest waits for the next run
EPISODE_NAMESPACE = uuid.UUID("5d0f7a52-3c84-4e0b-9b1f-2a6c8e4d7b13")
TITLE_SYSTEM = ("Give a short title (at most 8 words) for this stretch of a conversation: "
                "what it was about or what happened. Answer with the title only.")


def episode_id(first_block: str) -> str:
    return str(uuid.uuid5(EPISODE_NAMESPACE, f"episode:{first_block}"))


def _titler(ctx: RunContext) -> Any:
    """The night_cycle role's LLM when it routes to a real provider, else None."""
    try:
        llm = ctx.llm()
    except CogdError:
        return None
    return llm if llm.provider in REAL_PROVIDERS else None


def _title(llm: Any, texts: list[str], terms: list[str]) -> tuple[str, str]:
    if llm is not None and texts:
        excerpt = "\n".join(texts)[:4000]
        try:
            result = llm.chat([{"role": "system", "content": TITLE_SYSTEM},
                               {"role": "user", "content": excerpt}],
                              temperature=0.0, max_tokens=24)
            title = " ".join(str(result.text).split()).strip(" \"'")[:120]
            if title and not result.fallback:
                return title, f"llm:{llm.model}"
        except (CogdError, RuntimeError, ValueError) as exc:
            logger.warning("episode title: the model failed (%s); the heuristic titles it",
                           exc)
    return rules.heuristic_title(terms), rules.TITLE_HEURISTIC


def run(ctx: RunContext, _inputs: Any = None) -> StageOutput:
    cfg = rules.EpisodeConfig.from_table(ctx.cfg)
    rows = ctx.conn.execute(query("timeline_unassigned_blocks"),
                            {"cutoff": ctx.cutoff, "limit": MAX_BLOCKS}).fetchall()
    ctx.progress.stage(11, NAME, max(1, len(rows)))
    by_user: dict[str | None, list[rules.Piece]] = {}
    prose: dict[str, Any] = {}
    for r in rows:
        entries = r[6] if isinstance(r[6], list) else json.loads(r[6] or "[]")
        by_user.setdefault(r[2], []).append(rules.Piece(
            r[0], r[1], r[3], r[4], parse_vector(r[5]), tuple(str(e) for e in entries)))
        prose[r[0]] = r[7]
    llm = _titler(ctx) if rows else None
    made = marks = 0
    titled: dict[str, int] = {}
    for user_id, pieces in by_user.items():
        for seg in rules.segment(pieces, cfg):
            entries = [e for p in seg.pieces for e in p.entry_ids]
            turns = [t for t in ctx.turns(entries) if t.role == "user"]
            texts = [t.content for t in turns] or [
                full_text(prose[p.id]) for p in seg.pieces if prose.get(p.id)]
            terms = rules.salient_terms(texts, cfg.title_terms)
            title, by = _title(llm, texts, terms)
            titled[by] = titled.get(by, 0) + 1
            eid = episode_id(seg.pieces[0].id)
            made += ctx.conn.execute(query("timeline_insert_episode"), {
                "episode_id": eid, "user_id": user_id,
                "session_ids": sorted({p.session_id for p in seg.pieces}),
                "start": seg.start, "end": seg.end, "title": title, "titled_by": by,
                "terms": terms, "entries": entries, "detector": rules.EPISODE_HEURISTIC,
                "run_id": ctx.run.run_id}).rowcount
            for p in seg.pieces:
                ctx.conn.execute(query("timeline_insert_episode_block"), (p.id, eid))
            weight = {r[0]: float(r[1]) for r in ctx.conn.execute(
                query("timeline_turn_importance"), {"ids": [t.entry_id for t in turns]})}
            for m in rules.milestones([rules.TurnText(t.entry_id, t.created_at, t.content,
                                                      weight.get(t.entry_id))
                                       for t in turns], cfg):
                marks += ctx.conn.execute(query("timeline_insert_milestone"), {
                    "episode_id": eid, "user_id": user_id, "kind": m.kind, "key": m.key,
                    "content": m.content, "at": m.at, "importance": m.importance,
                    "entry_id": m.entry_id, "detector": rules.MILESTONE_HEURISTIC}).rowcount
            ctx.progress.advance(len(seg.pieces))
    return StageOutput({"blocks": len(rows), "episodes": made, "milestones": marks,
                        "titled_by": titled, "users": len(by_user),
                        "detector": rules.EPISODE_HEURISTIC}, None)
