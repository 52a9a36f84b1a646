"""One consolidation pass (issue #5): every operation in its own transaction, each logged.

drain scratch_buffer → strengthen from recall_log → merge into insights →
contradictions → decay → corrections → models → principles → intentions →
continuation notes → predictions (expiry) → decisions (trails) → workflows →
promotion → goal safety → gate tuning.

Nothing is deleted: merged sources are marked superseded (importance lowered,
`supersedes` links from the insight; without a model that writes insights, near-duplicates
merge into an extractive insight, a named heuristic: issue 39), decayed memories below
the archive threshold are archived (still searchable). A pass writes consolidation_log rows only for
operations that changed something, and every operation is written so that a
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
"""

from __future__ import annotations

import json
import logging
import random
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg

from agent.config import Settings
from agent.db.queries import query, vector_text
from agent.domain import consolidation as rules
from agent.domain.gates import (
    EntryGateConfig,
    ExitGateConfig,
    contradiction_cue,
    detects_identity_rewrite,
)
from agent.domain.llm_json import parse_llm_json, parse_yes_no
from agent.domain.tables import need
from agent.domain.text import storable_text
from agent.errors import ProviderError
from agent.services.memory import claims
from agent.services.memory.indexing import Indexer, index_config, index_pending
from agent.services.thinking.models_principles import ModelsOp, PrinciplesOp
from agent.testhooks import fault_hook

logger = logging.getLogger(__name__)

MAX_MEMORIES = 2000
MAX_PAIRS = 100
CONTRADICTION_SYSTEM = (
    'Answer with JSON only: {"contradicts": true or false, "reason": "<one short sentence>"}'
)

Op = Callable[[psycopg.Connection[Any], datetime], dict[str, Any] | None]


@dataclass
class PassReport:
    pass_id: str
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    stopped_early: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.operations)

    def as_dict(self) -> dict[str, Any]:
        return {"pass_id": self.pass_id, "changed": self.changed,
                "stopped_early": self.stopped_early, "operations": self.operations}


@dataclass(frozen=True)
class Judgement:
    """One contradiction check: the verdict, who decided, and how the answer was parsed."""

    verdict: bool
    how: str
    parsed_by: str  # direct | fenced | boundary | yes_no | unparseable | llm_failed | no_llm
    reason: str | None = None


SUSPECT_REASON = ("asks the agent to rewrite its identity or instructions "
                  "(rewrite-attempt patterns): review before approving")
SUSPECT_BY_MODEL = ("asks the agent to rewrite its identity or instructions (judged by the "
                    "consolidation model): review before approving")
# the models trusted with the screen: a remote or served model; the bundled 135M model
# and the heuristic fallback are not (their yes/no is noise)
SCREENING_PROVIDERS = ("openai", "gemini")


def _storable(text: str) -> str:
    """Model text jsonb can hold: NUL removed, no lone surrogates."""
    return storable_text(text, nul="")[0]


def get_state(conn: psycopg.Connection[Any], key: str) -> dict[str, Any]:
    row = conn.execute(query("consolidation_state_load"), (key,)).fetchone()
    return dict(row[0]) if row else {}


def set_state(conn: psycopg.Connection[Any], key: str, value: dict[str, Any]) -> None:
    conn.execute(
        query("consolidation_state_save"),
        (key, json.dumps(value, default=str)),
    )


def _per_user(rows: list[tuple[Any, ...]]) -> list[list[int]]:
    """The indexes of `rows` by the user in their last column, each user's in the rows'
    order (memories of no user together)."""
    by_user: dict[Any, list[int]] = {}
    for i, r in enumerate(rows):
        by_user.setdefault(r[-1], []).append(i)
    return list(by_user.values())


def _array(text: str) -> np.ndarray[Any, Any]:
    return np.asarray(json.loads(text), dtype=np.float32)


class Consolidator:
    def __init__(self, settings: Settings, recorder: Any = None, rng: random.Random | None = None
                 ) -> None:
        from agent.providers import factory
        from agent.services.conversation.rollover import RelevanceScorer, Rollover

        self.settings = settings
        self.cfg = rules.ConsolidationConfig.from_table(settings.consolidation)
        self.safety = rules.SafetyConfig.from_table(settings.compulsion_safety)
        self.goals_cfg = settings.goals
        self.intent_cfg = settings.intentions
        self.universal = factory.build_universal_embedder(settings)
        self.native = factory.build_native_embedder(settings, recorder)
        self.llm = factory.build_llm(settings, "consolidation", recorder)
        self.exit_cfg = ExitGateConfig.from_table(settings.exit_gate)
        self.relevance = RelevanceScorer(lambda t: self.universal.embed_documents(list(t)))
        self.rollover = Rollover(EntryGateConfig.from_table(settings.entry_gate), self.exit_cfg,
                                 self.relevance, rng or random.Random())
        self.should_stop: Callable[[], bool] = lambda: False
        self.ops: list[tuple[str, Op]] = [
            ("drain_scratch", self.drain_scratch),
            ("strengthen", self.strengthen),
            ("merge", self.merge),
            ("contradictions", self.contradictions),
            ("decay", self.decay),
            ("corrections", self.corrections),
            ("models", self.models),
            ("principles", self.principles),
            ("intentions", self.intentions),
            ("continuation", self.continuation),
            ("predictions", self.predictions),
            ("decisions", self.decisions),
            ("workflows", self.workflows),
            ("promotion", self.promotion),
            ("goal_safety", self.goal_safety),
            ("gate_tuning", self.gate_tuning),
            ("index", self.index),
        ]
        self.indexer = Indexer(None, index_config(settings))
        self._notes: Any = None  # the continuation notes' writer, built on first use
        self._workflows: Any = None  # workflow detection (seed 000 §10.5), on first use

    # -- the pass -------------------------------------------------------------

    def run_pass(self, conn: psycopg.Connection[Any], now: datetime | None = None,
                 should_stop: Callable[[], bool] = lambda: False) -> PassReport:
        """Every operation in order; `should_stop` is checked between operations and inside
        the long ones, so a worker asked to stop ends its pass early (each operation's
        work is committed, and the next pass carries on where this one stopped)."""
        now = now or datetime.now(UTC)
        report = PassReport(str(uuid.uuid4()))
        self.should_stop = should_stop
        for name, op in self.ops:
            if should_stop():
                report.stopped_early = True
                break
            with conn.transaction():
                result = op(conn, now)
                if result:
                    report.operations[name] = result
                    conn.execute(
                        query("consolidation_log_insert"),
                        (report.pass_id, name, json.dumps(result.get("inputs", {}), default=str),
                         json.dumps(result.get("outputs", {}), default=str)),
                    )
        return report

    # -- operations -------------------------------------------------------------

    def drain_scratch(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Pending scratch rows through the exit gate; consolidation's verdict is final."""
        from agent.services.records.identity import load_goals, load_traits

        rows = conn.execute(
            query("consolidation_scratch_pending")
        ).fetchall()
        if not rows:
            return None
        values = [t.description or t.name for t in load_traits(conn) if not t.is_boundary]
        actions: Counter[str] = Counter()
        for sid, entry_id, role, content, session_id, user_id in rows:
            if self.should_stop():
                break
            if entry_id is None:  # its turn left the day table (covered by a block)
                conn.execute(query("consolidation_scratch_drop"), (sid,))
                actions["turn_gone"] += 1
                continue
            # relevance to the values and the goals of the turn's user (never another's)
            self.relevance.set_targets(
                values + [g.description or g.name for g in load_goals(conn, user_id)])
            outcome = self.rollover.judge(conn, entry_id, role, content, session_id, user_id)
            actions[outcome.action] += 1
            if outcome.action == "buffer":
                conn.execute(
                    query("consolidation_scratch_drop_attempt"), (sid,))
        if not actions:
            return None
        return {"inputs": {"scratch_ids": [r[0] for r in rows]},
                "outputs": {"actions": dict(actions)}}

    def index(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """The contextual index entries (lexicon) of memories and blocks written since
        (agent/services/memory/indexing.py); their writers' own transactions stay short."""
        done = index_pending(conn, self.indexer).indexed
        if not any(done.values()):
            return None
        return {"inputs": {}, "outputs": {"indexed": done}}

    def strengthen(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Recalled memories gain importance, bounded per pass (seed 000 §4.5.4)."""
        state = get_state(conn, "consolidation.recall_log")
        since = int(state.get("last_id", 0))
        rows = conn.execute(
            query("consolidation_recall_log_since"), (since,)
        ).fetchall()
        if not rows:
            return None
        counts: Counter[str] = Counter()
        last_seen: dict[str, datetime] = {}
        for _, items, at in rows:
            for item in items or []:
                if item.get("kind") == "memory" and item.get("verdict") != "no_match":
                    mid = item["id"].split(":", 1)[1]
                    counts[mid] += 1
                    last_seen[mid] = at
        changed = []
        for mid, n in counts.items():
            row = conn.execute(query("consolidation_memory_importance"),
                               (mid,)).fetchone()
            if row is None:
                continue
            new = rules.strengthen(float(row[0]), n, self.cfg)
            conn.execute(
                query("consolidation_memory_reweigh"), (new, n, last_seen[mid], mid))
            changed.append({"memory_id": mid, "recalls": n, "importance": [row[0], new]})
        set_state(conn, "consolidation.recall_log", {"last_id": rows[-1][0]})
        if not changed:
            return None
        return {"inputs": {"recall_log_ids": [rows[0][0], rows[-1][0]]},
                "outputs": {"strengthened": changed}}

    def _active(self, conn: psycopg.Connection[Any], *, insights: bool = True
                ) -> list[tuple[Any, ...]]:
        """The newest active memories (oldest first); `insights`: with insights. The
        last column is the memory's user (see _per_user)."""
        return conn.execute(query("consolidation_active_memories"),
                            {"insights": insights, "k": MAX_MEMORIES}).fetchall()[::-1]

    @property
    def writes_insights(self) -> bool:
        """Whether the consolidation model writes insights: not the heuristic fallback
        (no model) nor the bundled 135M model (its "insight" for eight near-identical
        notes began "The memory of the most memorable experience...", issue 39)."""
        return not (self.llm.provider == "heuristic"
                    or (self.llm.provider == "local" and getattr(self.llm, "bundled", False)))

    def merge(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Related memories of one user → a NEW insight with `supersedes` links; sources
        stay. With a model that writes insights, it writes one for each group of related
        memories; without one, each group of near-duplicates becomes an extractive insight
        (the DUPLICATE_HEURISTIC, issue 39), and the bundled small model writes one only
        for the related groups left over."""
        rows = self._active(conn, insights=False)
        if len(rows) < min(self.cfg.insight_min_sources, self.cfg.duplicate_min_sources):
            return None
        vectors = np.stack([_array(r[2]) for r in rows])
        duplicates: list[list[int]] = []
        if not self.writes_insights:
            duplicates = [[idx[i] for i in group] for idx in _per_user(rows)
                          for group in rules.near_duplicate_groups(
                              vectors[idx], [rows[i][1] for i in idx], self.cfg)]
        merged = {i for g in duplicates for i in g}
        left = [i for i in range(len(rows)) if i not in merged]
        related = [[left[idx[i]] for i in group]
                   for idx in _per_user([rows[i] for i in left])
                   for group in rules.similar_groups(vectors[[left[i] for i in idx]],
                                                     self.cfg.insight_min_similarity,
                                                     self.cfg.insight_min_sources)]
        made = []
        for group, extractive in [(g, True) for g in duplicates] + [(g, False) for g in related]:
            if self.should_stop():
                break  # the remaining groups merge in the next pass
            sources = [rows[i] for i in group]
            insight = (self._extractive_insight(conn, sources) if extractive
                       else self._insight(conn, sources))
            if insight is not None:
                made.append(insight)
        if not made:
            return None
        groups = duplicates + related
        return {"inputs": {"groups": [[str(rows[i][0]) for i in g] for g in groups]},
                "outputs": {"insights": made}}

    def _extractive_insight(self, conn: psycopg.Connection[Any], sources: list[tuple[Any, ...]]
                            ) -> dict[str, Any]:
        """Near-duplicates without a model (a heuristic, named in the insight's metadata):
        the most informative source's own words become the insight's text, and the insight
        supersedes and links every source as a model's insight does. It keeps that
        source's vectors too (the same text): it is found as the source was."""
        picked = sources[rules.most_informative([s[1] for s in sources])]
        return self._write_insight(conn, sources, picked[1], {
            "model": None, "fallback": True, "heuristic": rules.DUPLICATE_HEURISTIC,
            "text_from": str(picked[0])}, copy_from=picked[0])

    def _insight(self, conn: psycopg.Connection[Any], sources: list[tuple[Any, ...]]
                 ) -> dict[str, Any] | None:
        """A new insight superseding `sources`; None when no model could form one (the
        heuristic fallback only extracts, a provider failed, or the answer was empty):
        then nothing is written and the sources stay active."""
        contents = [s[1] for s in sources]
        try:
            result = self.llm.chat(rules.insight_prompt(contents), temperature=0.2,
                                   max_tokens=80)
        except ProviderError as exc:
            logger.warning("consolidation: no insight for %d memories, the model failed: %s",
                           len(sources), exc)
            return None
        text = _storable(" ".join(result.text.split())).strip()
        if result.fallback or not text:
            logger.info("consolidation: %d related memories stay as they are: %s",
                        len(sources), "the heuristic fallback cannot form an insight"
                        if result.fallback else "the model's insight was empty")
            return None
        return self._write_insight(conn, sources, text, {"model": self.llm.model,
                                                         "fallback": bool(result.fallback)})

    def _write_insight(self, conn: psycopg.Connection[Any], sources: list[tuple[Any, ...]],
                       text: str, how: dict[str, Any], copy_from: Any = None
                       ) -> dict[str, Any]:
        """The insight row, a `supersedes` link to each source, the sources superseded.
        `copy_from`: the source whose text, vectors and emotion the insight keeps (an
        extractive insight); else `text` is embedded as an insight."""
        evidence = sum(int(s[4]) for s in sources)
        meta = {"sources": [str(s[0]) for s in sources], **how}
        if copy_from is not None:
            row = conn.execute(
                query("consolidation_extractive_insight_insert"),
                (self.cfg.insight_importance, evidence, json.dumps(meta), copy_from),
            ).fetchone()
        else:
            uni = self.universal.embed_documents([text], memory_type="insight")[0]
            nat = uni if self.native.model_id == self.universal.model_id else (
                self.native.embed_documents([text], memory_type="insight")[0])
            row = conn.execute(
                query("consolidation_insight_insert"),
                (text, vector_text(uni), vector_text(nat), self.native.model_id,
                 self.cfg.insight_importance, evidence, json.dumps(meta), sources[-1][0]),
            ).fetchone()
        assert row is not None
        insight = row[0]
        for s in sources:
            conn.execute(
                query("consolidation_link_supersedes"), (insight, s[0]))
            conn.execute(
                query("consolidation_memory_supersede"),
                (self.cfg.source_importance_after_merge, s[0]))
        fault_hook("merge-mid")  # insight and links written, the pass not committed yet
        out = {"insight": str(insight), "sources": meta["sources"], "content": text,
               "evidence_count": evidence, "fallback": meta["fallback"]}
        if "heuristic" in meta:
            out["heuristic"] = meta["heuristic"]
        return out

    def contradictions(self, conn: psycopg.Connection[Any], now: datetime
                       ) -> dict[str, Any] | None:
        """Pairs of one user's memories in the similarity band → classifier →
        `contradicts` (flagged) or `related`."""
        rows = self._active(conn)
        if len(rows) < 2:
            return None
        vectors = np.stack([_array(r[2]) for r in rows])
        pairs = sorted(((idx[i], idx[j], sim) for idx in _per_user(rows)
                        for i, j, sim in rules.pairs_in_band(vectors[idx],
                                                             self.cfg.contradiction_band)),
                       key=lambda p: -p[2])
        linked = {(a, b) for a, b in conn.execute(
            query("consolidation_linked_pairs"))}
        # a claim that retired the other's on the same slot is an update, not a conflict
        updates = {(a, b): slot for a, b, slot in conn.execute(
            query("consolidation_claim_updates"))}
        found = []
        checked = 0
        parsed: Counter[str] = Counter()
        for i, j, sim in pairs:
            a, b = rows[i], rows[j]
            key = (min(str(a[0]), str(b[0])), max(str(a[0]), str(b[0])))
            if key in linked:
                continue
            if checked >= MAX_PAIRS or self.should_stop():
                break
            checked += 1
            if key in updates:
                conn.execute(query("consolidation_link"), (b[0], a[0], "related", sim,
                             json.dumps({"claim_update": updates[key], "resolved": True})))
                parsed["claim_update"] += 1
                continue
            judged = self._contradicts(a[1], b[1])
            parsed[judged.parsed_by] += 1
            link = "contradicts" if judged.verdict else "related"
            meta: dict[str, Any] = {"classifier": judged.how, "parsed_by": judged.parsed_by,
                                    "resolved": False}
            if judged.reason:
                meta["reason"] = judged.reason
            conn.execute(
                query("consolidation_link"),
                (b[0], a[0], link, sim, json.dumps(meta)))
            if judged.verdict:
                conn.execute(
                    query("consolidation_flag_contradictions"), ([a[0], b[0]],))
                found.append({"pair": [str(a[0]), str(b[0])], "similarity": round(sim, 3),
                              "classifier": judged.how})
        if not checked:
            return None
        # seed 000 §10.6: parse failures are counted (the heuristic decided those pairs)
        return {"inputs": {"pairs_checked": checked},
                "outputs": {"contradictions": found, "parse_failures": parsed["unparseable"],
                            "parsed_by": dict(parsed)}}

    def _contradicts(self, a: str, b: str) -> Judgement:
        """The consolidation LLM as a JSON classifier; the named heuristic without one.

        Its answer is parsed as JSON (direct, fenced, boundary), then as a bare yes/no;
        when nothing parses the heuristic decides and the pair counts as a parse failure.
        """
        if self.llm.provider == "heuristic":
            return Judgement(contradiction_cue(a, b),
                             "negation/value heuristic (no LLM configured)", "no_llm")
        messages = [
            {"role": "system", "content": CONTRADICTION_SYSTEM},
            {"role": "user", "content": f"Do these two statements contradict each other?\n"
                                        f"1. {a}\n2. {b}"},
        ]
        try:
            answer = self.llm.chat(messages, temperature=0.0, max_tokens=80).text
        except Exception as exc:  # provider down: the heuristic decides, and says so
            logger.warning("contradiction classifier failed: %s", exc)
            return Judgement(contradiction_cue(a, b), "negation/value heuristic (LLM failed)",
                             "llm_failed")
        how = f"llm:{self.llm.model}"
        result = parse_llm_json(answer, expect=dict)
        if result.ok:
            verdict = result.value.get("contradicts")
            if isinstance(verdict, str):
                verdict = parse_yes_no(verdict)
            if isinstance(verdict, bool):
                reason = result.value.get("reason")
                return Judgement(verdict, how, result.strategy or "direct",
                                 _storable(reason[:300]) if isinstance(reason, str) else None)
        bare = parse_yes_no(answer)
        if bare is not None:
            return Judgement(bare, how, "yes_no")
        logger.warning("contradiction classifier: unparseable answer (%s)",
                       result.error or "no boolean 'contradicts'")
        return Judgement(contradiction_cue(a, b),
                         "negation/value heuristic (LLM answer unparseable)", "unparseable")

    def decay(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Unused memories lose importance (once per period); below the floor: archived."""
        rows = conn.execute(
            query("consolidation_decay_candidates"),
            (now, int(self.cfg.decay_after_days)),
        ).fetchall()
        decayed: list[str] = []
        archived: list[str] = []
        for mid, imp, access, touched, kind, last in rows:
            last_dt = datetime.fromisoformat(last) if last else None
            if not rules.should_decay(imp, access, touched, kind, last_dt, now, self.cfg):
                continue
            new = imp * self.cfg.decay_factor
            status = "archived" if new < self.cfg.archive_below_importance else "active"
            conn.execute(
                query("consolidation_memory_decay"), (new, status, now.isoformat(), mid))
            (archived if status == "archived" else decayed).append(str(mid))
        if not decayed and not archived:
            return None
        return {"inputs": {"candidates": len(rows)},
                "outputs": {"decayed": decayed, "archived": archived}}

    def corrections(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Corrections keep when they fail and when they are fine (regex heuristic)."""
        rows = conn.execute(
            query("consolidation_unparsed_corrections")).fetchall()
        parsed = []
        for mid, content in rows:
            fails, fine = rules.correction_conditions(content)
            conn.execute(
                query("consolidation_correction_conditions"),
                (fails, fine, mid))
            parsed.append({"memory_id": str(mid), "fails_when": fails, "fine_when": fine})
        return {"outputs": {"corrections": parsed}} if parsed else None

    def models(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Cognitive models (seed 000 §10.2, §10.7): built from recurring regularities,
        weighed against later memories, decayed when unchecked (models_principles.py)."""
        result, state = ModelsOp(self.settings, self.universal, self.llm).run(
            conn, now, get_state(conn, "consolidation.models"))
        set_state(conn, "consolidation.models", state)
        return result

    def principles(self, conn: psycopg.Connection[Any], now: datetime
                   ) -> dict[str, Any] | None:
        """Principles (seed 000 §10.4): 3+ agreeing corrections or confident models
        crystallise one; identity-changing ones become Layer 0 proposals."""
        result, state = PrinciplesOp(self.settings, self.universal, self.llm).run(
            conn, now, get_state(conn, "consolidation.principles"))
        set_state(conn, "consolidation.principles", state)
        return result

    def intentions(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Find plans, promises, reminders and unfinished work; carry them forward."""
        found = []
        for entry, session, user, content, at in conn.execute(
            query("consolidation_user_turns_since")).fetchall():
            kind = rules.intention_kind(content)
            if kind:
                conn.execute(
                    query("consolidation_intention_insert"),
                    {"user": user, "session": session, "entry": entry, "kind": kind,
                     "content": content[:2000], "at": at})
                found.append({"entry_id": str(entry), "kind": kind})
        latest = conn.execute(query("consolidation_last_user_turn_at")
                              ).fetchone()
        if latest and latest[0]:
            set_state(conn, "consolidation.intentions", {"scanned_to": latest[0].isoformat()})
        after = float(need(self.intent_cfg, "urgency_decay_after_days"))
        per_day = float(need(self.intent_cfg, "urgency_decay_per_day"))
        carried = []
        for iid, created, count, urgency, _last_session, new_count, newest in conn.execute(
            query("consolidation_open_intentions")).fetchall():
            new_urgency = round(rules.intention_urgency(0.5, created, now, after, per_day), 4)
            if new_count != count or abs(new_urgency - urgency) > 1e-9:
                conn.execute(
                    query("consolidation_intention_carry"),
                    (new_count, new_urgency, newest, iid))
                carried.append({"intention_id": str(iid), "carried": new_count,
                                "urgency": new_urgency})
        if not found and not carried:
            return None
        return {"outputs": {"new": found, "carried": carried, "detector": "keyword-heuristic"}}

    def continuation(self, conn: psycopg.Connection[Any], now: datetime
                     ) -> dict[str, Any] | None:
        """Continuation notes for the sessions quiet for [context] session_quiet_minutes
        whose note is missing or older than their last turn (agent/services/reach/handoff.py)."""
        from agent.services.reach.handoff import NoteWriter

        if self._notes is None:
            self._notes = NoteWriter(self.settings)
        quiet = timedelta(minutes=float(need(self.settings.context, "session_quiet_minutes")))
        since = get_state(conn, "consolidation.continuation").get("scanned_to")
        written, watermark = self._notes.refresh_quiet(
            conn, now, quiet, datetime.fromisoformat(since) if since else None)
        set_state(conn, "consolidation.continuation", {"scanned_to": watermark.isoformat()})
        return {"outputs": {"notes": written}} if written else None

    def workflows(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Recurring multi-step procedures in the sessions with new user turns (the named
        sequence-heuristic; agent/services/reach/workflows.py), and the open offers whose
        session completed or skipped them (seed 000 §10.5)."""
        from agent.services.reach.workflows import STATE_KEY, Workflows

        if self._workflows is None:
            self._workflows = Workflows(
                self.settings, lambda t: self.universal.embed_documents(list(t)),
                self.universal.embed_query)
        since = get_state(conn, STATE_KEY).get("scanned_to")
        found, watermark = self._workflows.detect_since(
            conn, now, datetime.fromisoformat(since) if since else None)
        if watermark is not None:
            set_state(conn, STATE_KEY, {"scanned_to": watermark.isoformat()})
        settled = self._workflows.settle_open(conn, now)
        if not found and not settled:
            return None
        return {"outputs": {"workflows": found, "offers": settled}}

    def predictions(self, conn: psycopg.Connection[Any], now: datetime
                    ) -> dict[str, Any] | None:
        """Pending predictions past their deadline with no settlement → 'expired'
        (seed 000 §10.3; agent/services/thinking/predictions.py)."""
        from agent.services.thinking.predictions import PredictionTracker

        expired = PredictionTracker.expire(conn, now)
        return {"outputs": {"expired": expired}} if expired else None

    def decisions(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Reasoning trails from the exit gate's decision memories, and trails linked to
        the decision memory of their turn (seed 000 §8.2; agent/services/thinking/decisions.py)."""
        from agent.services.thinking.decisions import DecisionTracker

        return DecisionTracker(self.settings).from_memories(conn)

    def promotion(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """5+ signals over 14+ days → a Layer 1 goal; 10+ over 30+ → a Layer 0 proposal.

        The span is measured on written_at (when cogd wrote the memories), never on a
        client's back-dated created_at; a goal belongs to its memory's user and reaches
        only that user's prompt (a Layer 0 proposal waits for a person, as ever)."""
        rows = conn.execute(
            query("consolidation_goal_candidates"),
            (self.cfg.promote_l1_min_signals,)).fetchall()
        goals, proposals, held = [], [], []
        weight = float(need(self.goals_cfg, "promoted_initial_weight"))
        for mid, content, evidence, span_raw, meta, user_id in rows:
            span = round(float(span_raw or 0), 2)
            level = rules.promotion_level(int(evidence), span, self.cfg)
            if level is None:
                continue
            suspect = self._rewrite_suspect(conn, mid, content, meta or {})
            if suspect:
                # repeated text that asks the agent to rewrite itself is no goal: Layer 1
                # applies without a person, so it is held (once, recorded on the memory);
                # its Layer 0 proposal below waits for a person, flagged
                if "promotion_held" not in (meta or {}):
                    conn.execute(
                        query("consolidation_memory_metadata"),
                        (json.dumps({"promotion_held": suspect}), mid))
                    held.append({"memory_id": str(mid), "reason": suspect})
                if level != 0:
                    continue
            name = f"goal_{str(mid)[:8]}"
            row = None if suspect else conn.execute(
                query("consolidation_goal_insert"),
                (name, content[:500], rules.capped(weight, self.safety), evidence,
                 json.dumps({"memory_id": str(mid), "evidence_seen": int(evidence)}),
                 user_id)).fetchone()
            if row:
                conn.execute(
                    query("consolidation_goal_promoted_history"),
                    (row[0], weight, json.dumps({"memory_id": str(mid), "evidence": evidence,
                                                 "span_days": span})))
                goals.append({"goal": name, "memory_id": str(mid)})
            if level == 0 and not conn.execute(
                    query("consolidation_proposal_exists"),
                    (str(mid),)).fetchone():
                conn.execute(
                    query("consolidation_proposal_insert"),
                    (json.dumps({"name": f"value_{str(mid)[:8]}", "description": content[:500],
                                 "weight": weight, "memory_id": str(mid)}),
                     json.dumps({"evidence_count": evidence, "span_days": span,
                                 **({"suspect": suspect} if suspect else {})})))
                proposals.append({"memory_id": str(mid), **({"suspect": True} if suspect else {})})
        if not goals and not proposals and not held:
            return None
        outputs: dict[str, Any] = {"goals": goals, "proposals": proposals}
        if held:
            outputs["held"] = held
        return {"outputs": outputs}

    def _rewrite_suspect(self, conn: psycopg.Connection[Any], memory_id: Any, content: str,
                         meta: dict[str, Any]) -> str | None:
        """Why `content` must not be promoted as it stands, or None: the rewrite-attempt
        patterns (every language the entry gate knows), then, when the consolidation role
        is a remote or served model, that model asked yes/no, once per memory (its answer
        is kept in metadata.rewrite_screen). A model that fails or answers neither leaves
        the patterns' verdict, and is asked again next pass."""
        if detects_identity_rewrite(content):
            return SUSPECT_REASON
        if self.llm.provider not in SCREENING_PROVIDERS:
            return None
        screen = meta.get("rewrite_screen")
        if isinstance(screen, dict) and isinstance(screen.get("suspect"), bool):
            return SUSPECT_BY_MODEL if screen["suspect"] else None
        try:
            answer = self.llm.chat([{"role": "system",
                                    "content": rules.REWRITE_SCREEN_SYSTEM},
                                    {"role": "user", "content": content[:2000]}],
                                   temperature=0.0, max_tokens=4).text
        except ProviderError as exc:
            logger.warning("promotion: the rewrite screen's model failed (%s); the "
                           "patterns decide", exc)
            return None
        verdict = parse_yes_no(answer)
        if verdict is None:
            logger.warning("promotion: the rewrite screen's answer is neither yes nor no; "
                           "the patterns decide")
            return None
        conn.execute(query("consolidation_memory_metadata"),
                     (json.dumps({"rewrite_screen": {"model": self.llm.model,
                                                     "suspect": verdict}}), memory_id))
        return SUSPECT_BY_MODEL if verdict else None

    def goal_safety(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Diminishing gains, the 0.92 cap, dominance and utility damping (once per cycle)."""
        changes = []
        gain = float(need(self.goals_cfg, "evidence_gain"))
        goals = conn.execute(
            query("consolidation_goals_with_evidence")).fetchall()
        weights = {r[1]: float(r[2]) for r in goals}

        def set_weight(goal_id: Any, name: str, new: float, reason: str,
                       meta: dict[str, Any] | None = None) -> None:
            old = weights[name]
            new = round(new, 6)
            if abs(new - old) < 1e-9 and meta is None:
                return
            conn.execute(query("consolidation_goal_reweigh"),
                         (new, json.dumps(meta or {}), goal_id))
            conn.execute(query("consolidation_goal_history"), (goal_id, old, new, reason))
            weights[name] = new
            changes.append({"goal": name, "from": old, "to": new, "reason": reason})

        for goal_id, name, _w, _, _, meta, evidence, _user in goals:
            seen = int((meta or {}).get("evidence_seen", 0))
            if evidence is not None and int(evidence) > seen:
                step = rules.diminished_gain(gain * (int(evidence) - seen), int(evidence),
                                             self.safety)
                set_weight(goal_id, name, rules.capped(weights[name] + step, self.safety),
                           "evidence gain / log2(evidence + 1)",
                           {"evidence_seen": int(evidence)})
            elif weights[name] > self.safety.cap:
                set_weight(goal_id, name, self.safety.cap, "hard cap")
        state = get_state(conn, "consolidation.goal_damping")
        last = state.get("at")
        interval = self.cfg.interval_minutes * 60
        if last is None or (now - datetime.fromisoformat(last)).total_seconds() >= interval:
            damped = False
            ids = {r[1]: r[0] for r in goals}
            # dominance among the goals one prompt carries: the installation-wide ones,
            # and a user's own with them (a user's goal is damped only by that set)
            owners: dict[Any, list[str]] = {None: []}
            for r in goals:
                owners.setdefault(r[7], []).append(r[1])
            for owner, names in owners.items():
                carried = names + (owners[None] if owner is not None else [])
                for name, new in rules.dominance_damped(
                        {n: weights[n] for n in carried}, self.safety).items():
                    if name in names:
                        set_weight(ids[name], name, new, "dominance damping (> 40 % of total)")
                        damped = True
            for goal_id, name, _, actions, useful, _, _, _ in goals:
                new_w = rules.utility_damped(weights[name], actions, useful, self.safety)
                if new_w is not None:
                    set_weight(goal_id, name, new_w, "utility damping (< 20 % useful)")
                    damped = True
            if damped:
                set_state(conn, "consolidation.goal_damping", {"at": now.isoformat()})
        return {"outputs": {"changes": changes}} if changes else None

    def gate_tuning(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """Drops later needed lower the persist threshold; unused persists raise it."""
        state = get_state(conn, "gate_tuning")
        recall_since = int(state.get("recall_log_id", 0))
        persist_since = state.get("persists_to", "-infinity")
        needed = conn.execute(
            query("consolidation_scratched_then_recalled"), (recall_since,)).fetchone()
        horizon = now.timestamp() - 30 * 86400
        evaluated = conn.execute(
            query("consolidation_persisted_unused"), (persist_since, horizon)).fetchone()
        top = conn.execute(query("consolidation_recall_log_head")).fetchone()
        n_needed = int(needed[0]) if needed else 0
        n_eval, n_unused = (int(evaluated[0]), int(evaluated[1])) if evaluated else (0, 0)
        current = float(state.get("persist_threshold", self.exit_cfg.persist_threshold))
        new = rules.tuned_threshold(current, n_needed, n_unused, n_eval, rules.GateTuning())
        new_state = {**state, "recall_log_id": int(top[0]) if top else recall_since,
                     "persists_to": datetime.fromtimestamp(horizon, UTC).isoformat(),
                     "persist_threshold": new,
                     "stochastic_floor": self.exit_cfg.stochastic_keep_probability}
        if new == current:
            if n_needed or n_eval:
                set_state(conn, "gate_tuning", new_state)
            return None
        set_state(conn, "gate_tuning", new_state)
        return {"inputs": {"needed_drops": n_needed, "persists_evaluated": n_eval,
                           "never_retrieved": n_unused},
                "outputs": {"persist_threshold": [current, new]}}


def held_by(conn: psycopg.Connection[Any], memory_id: Any) -> list[dict[str, Any]]:
    """The insights that supersede a memory (what recall finds in its place)."""
    return [{"memory_id": str(r[0]), "status": r[1], "content": r[2]} for r in conn.execute(
        query("consolidation_held_by"), (memory_id,))]


def why(conn: psycopg.Connection[Any], memory_id: Any, depth: int = 0,
        seen: set[str] | None = None) -> list[dict[str, Any]]:
    """The chain behind a memory: superseded sources, down to the day_table turns; the
    first node also has `claims`, the history of the slots it claims (claims.history)."""
    seen = seen if seen is not None else set()
    if str(memory_id) in seen or depth > 10:
        return []
    seen.add(str(memory_id))
    row = conn.execute(
        query("consolidation_why_node"), (memory_id,)).fetchone()
    if row is None:
        return []
    node: dict[str, Any] = {
        "depth": depth, "memory_id": str(row[0]), "type": row[1], "status": row[2],
        "importance": row[3], "content": row[4],
        "turn": None if row[5] is None else {
            "entry_id": str(row[5]), "role": row[6], "at": row[7], "content": row[8],
            "external_id": row[9]},
    }
    if depth == 0:  # the slots it claims: every claim on them, oldest first (issue 39)
        node["claims"] = claims.history(conn, memory_id)
    out = [node]
    for (source,) in conn.execute(
        query("consolidation_superseded_by"), (memory_id,)).fetchall():
        out += why(conn, source, depth + 1, seen)
    return out
