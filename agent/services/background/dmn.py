"""One tick of the idle default-mode network (issue #5; seed 003 §Idle Loop, seed 002).

proactive recall (topic shift, task completion, winding down → `thoughts` that the
loop's next prompt shows as "recalled without being asked"; also run for one turn at a
time by the idle worker on the turn's NOTIFY, `proactive_turn`) → stochastic surfacing
(self-prompt / creative impulse / discard, rumination cap, weights that evolve from
outcomes) → thoughts that act (a self-prompt, while idle and rate-limited, becomes an
internal System 1 turn stored as an `internal_turn` thought, never sent to a user) →
outcomes (a self-prompt counts in its goal's `actions`, a useful one in `useful_actions`)
→ the gut signal (logged in gut_signals; its outcome written after the horizon; the
outcome record moves what surfaces, seed 003 §17d) → dormant-memory recovery (seed 003
§Idle Loop: sometimes the draw is among old, rarely used memories close to the recent
topics; the one drawn gets its importance and decay clock refreshed, audit-logged) →
expiry (an idle thought or a proactive recall no prompt took within
`unshown_max_age_minutes`, a self-prompt not acted on within the outcome horizon: status
'expired'; issue 42 item 7). A frustrated
user turn (the frustration heuristic, seed 000 §5.4.6) gets no proactive recall.

Writes thoughts, gut_signals, the goals' action counters, its own worker_state, and a
recovered dormant memory's importance, status and last_accessed (with an audit_log row
holding the values before); never a memory's content, never identity.
"""

from __future__ import annotations

import json
import logging
import math
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from agent.bus import Channel, Kind, notify
from agent.db import audit
from agent.db.queries import query, vector_text
from agent.domain import dmn as rules
from agent.domain.frustration import FrustrationConfig
from agent.domain.tables import need
from agent.errors import ProviderError
from agent.services.background.consolidation.state import get_state, set_state
from agent.services.conversation import frustration

if TYPE_CHECKING:
    from agent.config import Settings
    from agent.providers.ports import LLM, Embedder
    from agent.services.memory.recall import Recaller

logger = logging.getLogger(__name__)

OUTCOME_HORIZON_MINUTES = 60  # cogd choice: a surfaced item recalled within an hour was useful
# cogd choice: proactive recall is about the live conversation; turns older than this (an
# imported history, a backlog after downtime) never trigger it (wall-clock seconds)
LIVE_TURNS_S = 3600
# cogd choice: the turns whose proactive pass ran (tick or NOTIFY), kept so neither path
# runs it again (worker_state dmn.proactive "handled")
HANDLED_KEPT = 500


def _vec(text: str | None) -> np.ndarray[Any, Any] | None:
    return None if text is None else np.asarray(json.loads(text), dtype=np.float32)


@dataclass(frozen=True)
class IdleConfig:
    """What the DMN reads from the settings, parsed once (`from_settings`): [idle], and the
    keys it reads from [intentions], [monitors] and [embedding]."""

    dmn: rules.DmnConfig  # [idle]
    winding_down_results: int  # [intentions]: open intentions a winding-down turn recalls
    overdue_after_sessions: int  # [intentions]: an intention this overdue presses
    gut_layer_weights: tuple[float, ...]  # [monitors]: the gut signal's layers
    universal_dim: int  # [embedding]
    frustration: FrustrationConfig  # [emotion] frustration_*: proactive recall holds back

    @classmethod
    def from_settings(cls, settings: Settings) -> IdleConfig:
        return cls(
            dmn=rules.DmnConfig.from_table(settings.idle),
            winding_down_results=int(need(settings.intentions, "winding_down_results")),
            overdue_after_sessions=int(need(settings.intentions, "overdue_after_sessions")),
            gut_layer_weights=tuple(float(x) for x in
                                    need(settings.monitors, "gut_layer_weights")),
            universal_dim=int(settings.embedding.universal_dim),
            frustration=FrustrationConfig.from_table(settings.emotion),
        )


class Dmn:
    """The idle default-mode network. `config`: IdleConfig.from_settings; `universal`: the
    embedder of surfacing and the gut signal; `recaller`: proactive recall's and the
    internal turn's; `system1`: the internal turn's model, asked for on the first internal
    turn (agent/runtime.py `Runtime.dmn` builds it)."""

    def __init__(self, config: IdleConfig, *, universal: Embedder, recaller: Recaller,
                 system1: Callable[[], LLM], rng: random.Random | None = None,
                 dormant_rng: random.Random | None = None) -> None:
        self.config = config
        self.cfg = config.dmn
        self.layer_weights = list(config.gut_layer_weights)
        self.dim = config.universal_dim
        self.universal = universal
        self.recaller = recaller
        self._system1_source = system1
        self._system1: Any = None  # built on the first internal turn
        self.rng = rng or random.Random()
        # "sometimes" a dormant draw: its own generator, so the surfacing noise's draws
        # stay as they were
        self.dormant_rng = dormant_rng or random.Random()
        self._embedded: dict[str, np.ndarray[Any, Any]] = {}
        # gut signal id -> its delta (a signal's delta never changes): each tick parses
        # only the signals that are new to the record
        self._deltas: dict[int, np.ndarray[Any, Any]] = {}

    def minutes(self, n: float) -> timedelta:
        return timedelta(seconds=n * self.cfg.seconds_per_minute)

    def tick(self, conn: psycopg.Connection[Any], now: datetime | None = None) -> dict[str, Any]:
        now = now or datetime.now(UTC)
        out: dict[str, Any] = {}
        with conn.transaction():
            out["proactive"] = self.proactive(conn, now)
        with conn.transaction():
            out["surfaced"] = self.surface(conn, now)
        out["acted"] = self.act(conn, now)  # its writes in a transaction, the model outside
        with conn.transaction():
            out["weights"] = self.evolve(conn, now)
        with conn.transaction():
            out["gut"] = self.gut(conn)
        with conn.transaction():
            out["gut_outcomes"] = self.gut_outcomes(conn, now)
        with conn.transaction():
            out["expired"] = self.expire(conn, now)
        return out

    # -- proactive recall ---------------------------------------------------------

    def proactive(self, conn: psycopg.Connection[Any], now: datetime) -> list[dict[str, Any]]:
        """The catch-up pass (the tick): every live user turn since the watermark that the
        NOTIFY path (`proactive_turn`) has not handled already."""
        state = get_state(conn, "dmn.proactive")
        rows = conn.execute(
            query("dmn_recent_user_turns"),
            (state.get("seen_to", "-infinity"), now - timedelta(seconds=LIVE_TURNS_S))
        ).fetchall()
        handled = list(state.get("handled", []))
        made: list[dict[str, Any]] = []
        for row in rows:
            if str(row[0]) not in handled:
                made += self._proactive_row(conn, row, now)
                handled.append(str(row[0]))  # a late notification of it does nothing
        if rows:
            set_state(conn, "dmn.proactive", {"seen_to": rows[-1][4].isoformat(),
                                              "handled": handled[-HANDLED_KEPT:]})
        return made

    def proactive_turn(self, conn: psycopg.Connection[Any], entry_id: str,
                       now: datetime | None = None) -> list[dict[str, Any]]:
        """The proactive pass for one user turn, on its TURN notification (seed 002 §1:
        within seconds, not on the next tick). An assistant turn, or a turn that is not
        live, does nothing. Each turn's pass runs once: the tick's catch-up pass skips the
        turns handled here, and this skips those the tick (or a repeated notification)
        handled."""
        now = now or datetime.now(UTC)
        try:
            uuid.UUID(str(entry_id))
        except ValueError:  # not a day_table entry id: nothing to do
            return []
        with conn.transaction():
            row = conn.execute(query("dmn_user_turn"),
                               (entry_id, now - timedelta(seconds=LIVE_TURNS_S))).fetchone()
            if row is None:
                return []
            state = get_state(conn, "dmn.proactive")
            if str(row[0]) in state.get("handled", []):
                return []  # the tick's pass, or a repeated notification, handled it
            made = self._proactive_row(conn, row, now)
            handled = [*state.get("handled", []), str(row[0])][-HANDLED_KEPT:]
            set_state(conn, "dmn.proactive", {**state, "handled": handled})
        return made

    def _proactive_row(self, conn: psycopg.Connection[Any], row: tuple[Any, ...],
                       now: datetime) -> list[dict[str, Any]]:
        entry, session, user, text, _at, cur, prev = row
        current = _vec(cur)
        if current is None:
            return []
        if frustration.of_turn(conn, entry, self.config.frustration).frustrated:
            return []  # seed 000 §5.4.6: nothing unasked-for while the user is frustrated
        made: list[dict[str, Any]] = []
        fired = rules.triggers(_vec(prev), current, text, self.cfg)
        if ("topic_shift" in fired or "task_completion" in fired) and not self._session_cooling(
                conn, session, now):
            made += self._recall_for(conn, entry, session, text, fired, now, user=user)
        if "winding_down" in fired:
            made += self._open_intentions(conn, session, user, now)
        return made

    def _session_cooling(self, conn: psycopg.Connection[Any], session: Any,
                         now: datetime) -> bool:
        """seed 000 §6.3: at most N proactive recalls per session, M minutes apart."""
        row = conn.execute(query("dmn_session_observations"), (session,)).fetchone()
        count, last = (int(row[0]), row[1]) if row else (0, None)
        since = (None if last is None
                 else (now - last).total_seconds() / self.cfg.seconds_per_minute)
        return rules.session_cooling(count, since, self.cfg)

    def _cooling(self, conn: psycopg.Connection[Any], source: str, session: Any,
                 now: datetime) -> bool:
        """seed 002 §1: the same item is not injected into a conversation twice within
        `topic_cooldown_minutes`. Keyed by the item and the session it was injected into
        (a thought is pending for its own session's prompt only: another conversation has
        not seen it), and by the item a thought surfaced (its first source), not by the
        turn that triggered it. Only a thought shown, or waiting for a prompt that will show
        it ('new': the loop's next prompt, or in a `claude:` session `cogd hook`'s), counts;
        one that went nowhere does not (agent/db/sql/dmn.sql
        `dmn_thought_already_surfaced`; issue 42 item 5)."""
        row = conn.execute(
            query("dmn_thought_already_surfaced"),
            {"sources": json.dumps([source]), "item": source, "session": session,
             "since": now - self.minutes(self.cfg.topic_cooldown_minutes)}).fetchone()
        return row is not None

    def _thought(self, conn: psycopg.Connection[Any], kind: str, content: str, theme: str,
                 sources: list[Any], session: Any, now: datetime,
                 user: Any = None) -> dict[str, Any]:
        row = conn.execute(
            query("dmn_thought_insert"),
            (kind, content[:2000], theme, json.dumps(sources, default=str), session, now, user),
        ).fetchone()
        assert row is not None
        notify(conn, Channel.THOUGHT, Kind.THOUGHT, str(row[0]))  # sent at commit
        return {"thought_id": str(row[0]), "kind": kind, "theme": theme, "content": content}

    def _recall_for(self, conn: psycopg.Connection[Any], entry: Any, session: Any, text: str,
                    fired: list[str], now: datetime, detector: str = "keyword-heuristic",
                    user: Any = None) -> list[dict[str, Any]]:
        """Strong matches for `text` not already in this session, not surfaced in it within
        the topic cooldown, at most max_injected: each stored as a proactive_recall thought.
        `entry`: the turn that triggered it (None: a text that is no turn)."""
        turn = [] if entry is None else [f"day_table:{entry}"]
        out = self.recaller.recall(conn, text, k=self.cfg.search_results, log=False,
                                   recent_ids=set(turn), session_id=session)
        made: list[dict[str, Any]] = []
        for item, why in self.screen(conn, out.result.items, session, now):
            if why is not None:
                continue
            thought = self._thought(
                conn, "proactive_recall", f"Earlier: {' '.join(item.content.split())[:400]}",
                fired[0], [item.id, *turn, {"trigger_detector": detector}],
                session, now, user)
            made.append({**thought, "item": item.id, "speaker": item.speaker,
                         "said_at": None if item.created_at is None
                         else item.created_at.isoformat()})
        return made

    def screen(self, conn: psycopg.Connection[Any], items: list[Any], session: Any,
               now: datetime) -> list[tuple[Any, str | None]]:
        """Each recalled item with why the proactive pass holds it back (None: surfaced);
        read-only, so `bench.proactive` can say which filter held a question's recall."""
        same_session = {str(r[0]) for r in conn.execute(
            query("dmn_session_entries"), (session,))}
        contents: set[str] = set()
        kept = 0
        out: list[tuple[Any, str | None]] = []
        for item in items:
            out.append((item, self._held(conn, item, session, now, same_session, contents,
                                         kept)))
            kept += out[-1][1] is None
        return out

    def _held(self, conn: psycopg.Connection[Any], item: Any, session: Any, now: datetime,
              same_session: set[str], contents: set[str], kept: int) -> str | None:
        if item.verdict != "strong_match":
            return "not a strong match"
        if kept >= self.cfg.max_injected:
            return "max_injected_thoughts reached"
        text_key = " ".join(item.content.split())
        if text_key in contents:
            return "duplicate text"  # a memory and the turn it was made from say the same
        contents.add(text_key)
        if item.kind == "day_table" and item.id.split(":", 1)[1] in same_session:
            return "already in this conversation"
        if item.source_ids and set(item.source_ids) <= same_session:
            return "a memory made from this conversation's own turns"
        if self._cooling(conn, item.id, session, now):
            return "item cooldown (surfaced in this session within topic_cooldown_minutes)"
        return None

    def _open_intentions(self, conn: psycopg.Connection[Any], session: Any, user: Any,
                         now: datetime) -> list[dict[str, Any]]:
        made = []
        limit = self.config.winding_down_results
        for iid, kind, content, carried in conn.execute(
            query("dmn_open_intentions"), (user, limit)).fetchall():
            source = f"intention:{iid}"
            if self._cooling(conn, source, session, now):
                continue
            made.append(self._thought(
                conn, "proactive_recall",
                f"Still open ({kind}, carried {carried} sessions): {content[:300]}",
                "winding_down", [source], session, now, user))
        return made

    # -- surfacing ------------------------------------------------------------------

    def _embed(self, text: str) -> np.ndarray[Any, Any]:
        if text not in self._embedded:
            self._embedded[text] = np.asarray(self.universal.embed_documents([text])[0])
        return self._embedded[text]

    def _attention(self, conn: psycopg.Connection[Any]) -> np.ndarray[Any, Any] | None:
        row = conn.execute(
            query("dmn_recent_turns_centroid")
        ).fetchone()
        return _vec(row[0]) if row else None

    def hope(self, conn: psycopg.Connection[Any]) -> tuple[np.ndarray[Any, Any] | None, float]:
        """The gut's outcome record as a direction and its confidence (rules.hope_direction
        over the newest `gut_outcome_signals` outcome-tagged signals, each signed by the
        gut-outcome heuristic)."""
        signed = [(sid, v) for sid, outcome in conn.execute(
            query("dmn_gut_outcome_record"), (self.cfg.gut_outcome_signals,)).fetchall()
            if (v := rules.gut_outcome_valence(outcome)) is not None]
        missing = [sid for sid, _ in signed if sid not in self._deltas]
        if missing:
            for sid, delta in conn.execute(query("dmn_gut_deltas"), (missing,)).fetchall():
                self._deltas[sid] = np.asarray(json.loads(delta), dtype=np.float32)
        keep = {sid for sid, _ in signed}
        self._deltas = {sid: d for sid, d in self._deltas.items() if sid in keep}
        return rules.hope_direction([self._deltas[sid] for sid, _ in signed],
                                    [v for _, v in signed])

    def candidates(self, conn: psycopg.Connection[Any], now: datetime,
                   attention: np.ndarray[Any, Any] | None = None,
                   ) -> tuple[list[rules.Surfaceable], list[Any], list[Any]]:
        """What one draw chooses among: the 200 most important active memories, identity
        and the installation-wide goals, each with its features, the gut intensity moved by
        the gut's outcome record (seed 003 §17d); or, "sometimes" (`dormant_draw_probability`,
        with a recent topic to relate to), only the dormant memories close to that topic
        (seed 003 §Idle Loop, CMA dormant recovery). Also the identity and goal rows."""
        att = vector_text(attention) if attention is not None else None
        direction, confidence = self.hope(conn)
        hope = vector_text(direction) if direction is not None else None
        traits = conn.execute(query("dmn_identity_values")).fetchall()
        goals = conn.execute(query("dmn_goal_values")).fetchall()
        gain = self.cfg.gut_outcome_gain

        def memory(row: tuple[Any, ...], dormant: bool, max_access: int) -> rules.Surfaceable:
            mid, content, imp, access, touched, assoc, along, owner = row[:8]
            age = (now - touched).total_seconds() / 86400
            return rules.Surfaceable(
                f"memory:{mid}", 2, content, rules.recency_score(age),
                rules.gut_intensity(float(imp), float(along), confidence, gain),
                max(0.0, float(assoc)), math.log1p(int(access)) / math.log1p(max_access),
                owner=owner, dormant=dormant)

        if att is not None and self.dormant_rng.random() < self.cfg.dormant_draw_probability:
            dormant = conn.execute(query("dmn_dormant_memories"), {
                "attention": att, "hope": hope,
                "before": now - timedelta(days=self.cfg.dormant_after_days),
                "max_access": self.cfg.dormant_max_access_count,
                "min_similarity": self.cfg.dormant_min_similarity,
                "k": self.cfg.dormant_candidates}).fetchall()
            if dormant:
                top = max([int(m[3]) for m in dormant] + [1])
                return [memory(m, True, top) for m in dormant], traits, goals
        mems = conn.execute(query("dmn_surfaceable_memories"),
                            {"attention": att, "hope": hope}).fetchall()
        max_access = max([int(m[3]) for m in mems] + [1])
        items = [memory(m, False, max_access) for m in mems]
        for layer, rows in ((0, traits), (1, goals)):
            for name, desc, weight in rows:
                vec = self._embed(desc or name)
                assoc = float(vec @ attention) if attention is not None else 0.0
                along = float(vec @ direction) if direction is not None else 0.0
                items.append(rules.Surfaceable(
                    f"{'identity' if layer == 0 else 'goal'}:{name}", layer, desc or name,
                    1.0, rules.gut_intensity(float(weight), along, confidence, gain),
                    max(0.0, assoc), 0.0))
        return items, traits, goals

    def surface(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        attention = self._attention(conn)
        items, traits, goals = self.candidates(conn, now, attention)
        if not items:
            return None
        weights = get_state(conn, "dmn.weights").get("weights") or dict(self.cfg.weights)
        picked = rules.surface(items, weights, self.cfg.noise, self.rng)
        if picked is None:
            return None
        item, parts = picked
        count = conn.execute(query("dmn_theme_thought_count"),
                             (item.id,)).fetchone()
        if rules.ruminating(int(count[0]) if count else 0, self.cfg):
            return {"item": item.id, "kind": None, "reason": "rumination cap"}
        vec = self._embed(item.content)
        goal_sim, goal_name = max(((float(self._embed(d or n) @ vec), n) for n, d, _ in goals
                                   if f"goal:{n}" != item.id), default=(0.0, None))
        value_sim, value_name = max(((float(self._embed(d or n) @ vec), n) for n, d, _ in traits
                                     if f"identity:{n}" != item.id), default=(0.0, None))
        pressing = conn.execute(
            query("dmn_pressure_waiting"),
            (self.config.overdue_after_sessions,)).fetchone()
        kind = rules.classify(goal_sim, value_sim, bool(pressing and pressing[0]),
                              self.cfg.connection_min_similarity)
        text = {"self_prompt": f"How does this serve the goal '{goal_name}'? {item.content}",
                "creative_impulse": f"A thought in the light of '{value_name}': {item.content}",
                "discarded": item.content}[kind]
        goal = goal_name if kind == "self_prompt" else None
        meta: dict[str, Any] = {"contributions": parts, "goal": goal}
        if item.dormant:
            meta["dormant"] = True
        # the memory's user owns the thought: it holds their words, and goes into their
        # prompt only (issue 42 item 7, `turn_on_my_mind_take`)
        made = self._thought(conn, kind, text, item.id, [item.id, meta], None, now,
                             item.owner)
        recovered = self._recover(conn, item, kind, now) if item.dormant else None
        if goal is not None:  # an action taken for the goal (seed 003 §Compulsion Safety)
            conn.execute(query("dmn_goal_action"), (goal,))
        pending = get_state(conn, "dmn.outcomes").get("pending", [])
        pending.append({"item": item.id, "at": now.isoformat(), "contributions": parts,
                        "goal": goal})
        set_state(conn, "dmn.outcomes", {"pending": pending[-200:]})
        out = {**made, "goal_similarity": round(goal_sim, 3),
               "value_similarity": round(value_sim, 3), "gut_intensity": item.gut_intensity}
        if recovered is not None:
            out["recovered"] = recovered
        return out

    def _recover(self, conn: psycopg.Connection[Any], item: rules.Surfaceable, kind: str,
                 now: datetime) -> dict[str, Any]:
        """Dormant-memory recovery (seed 003 §Idle Loop, §Consolidation "CMA-inspired
        dormant recovery can resurface them"): the dormant memory drawn gets its importance
        back up to `dormant_refresh_importance` (never lowered), an archived one becomes
        active again, and its decay clock restarts (last_accessed = now). An audit_log row
        (actor 'dmn', action 'memory_recovered') keeps the values before and after, and the
        memory's metadata says when (`recovered_at`)."""
        mid = item.id.split(":", 1)[1]
        row = conn.execute(query("dmn_recover_memory"), {
            "id": mid, "now": now, "at": now.isoformat(),
            "importance": rules.dormant_refresh(0.0, self.cfg.dormant_refresh_importance),
        }).fetchone()
        assert row is not None
        before = {"importance": row[0], "status": row[1],
                  "last_accessed": None if row[2] is None else row[2].isoformat()}
        after = {"importance": row[3], "status": row[4], "last_accessed": now.isoformat()}
        audit.append(conn, "dmn", "memory_recovered", item.id, {
            "before": before, "after": after, "thought_kind": kind,
            "association": round(item.association, 4),
            "why": "dormant-memory recovery: not recalled for "
                   f"{self.cfg.dormant_after_days:g}+ days, close to the recent topics"})
        return {"memory": item.id, "before": before, "after": after}

    # -- thoughts that act ------------------------------------------------------------

    def act(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        """seed 003 §Idle Loop "goal connection → self-prompt → feed to System 1": the
        newest self-prompt not acted on (within the outcome horizon) becomes an internal
        System 1 turn while the agent is idle (no user turn for `act_idle_minutes`), at most
        one per `act_every_minutes`. The answer is stored as an `internal_turn` thought with
        no session: never in a conversation's pending thoughts, never sent to a user. The
        model is called outside a transaction (the worker's connection is autocommit); the
        writes that follow are one transaction."""
        row = conn.execute(query("dmn_next_self_prompt"),
                           (now - self.minutes(OUTCOME_HORIZON_MINUTES),)).fetchone()
        if row is None:
            return None
        last_turn = conn.execute(query("dmn_last_user_turn_at")).fetchone()
        if last_turn and last_turn[0] and now - last_turn[0] < self.minutes(
                self.cfg.act_idle_minutes):
            return {"skipped": "not idle"}
        # the rate limit counts every attempt, a failed one too: a model that is down is
        # not asked again on every tick
        last_act = conn.execute(query("dmn_last_internal_turn_at")).fetchone()
        tried = get_state(conn, "dmn.act").get("attempted_at")
        last = max((t for t in (last_act[0] if last_act else None,
                                datetime.fromisoformat(tried) if tried else None) if t),
                   default=None)
        if last is not None and now - last < self.minutes(self.cfg.act_every_minutes):
            return {"skipped": "rate limit"}
        set_state(conn, "dmn.act", {"attempted_at": now.isoformat()})
        return self._internal_turn(conn, row, now)

    def _internal_turn(self, conn: psycopg.Connection[Any], row: tuple[Any, ...],
                       now: datetime) -> dict[str, Any]:
        prompt_id, prompt, item, sources = row
        goal = next((s.get("goal") for s in sources if isinstance(s, dict)), None)
        owner = None
        if item.startswith("memory:"):
            got = conn.execute(query("dmn_memory_owner"), (item.split(":", 1)[1],)).fetchone()
            owner = got[0] if got else None
        out = self.recaller.recall(conn, prompt, k=self.cfg.act_recall_results, log=False,
                                   reconsolidate=False, user_id=owner)
        material = [i for i in out.result.items if i.verdict != "no_match"]
        if self._system1 is None:
            self._system1 = self._system1_source()
        listed = "\n".join(f"- [{i.id}] {' '.join(i.content.split())[:400]}" for i in material)
        messages = [
            {"role": "system", "content": (
                "You are cogd, thinking on your own between conversations: no user is "
                "present and nothing you write is sent to anyone. A thought came up; answer "
                "it for yourself in a few sentences, from the material listed (cite an item "
                "with its tag), and say what, if anything, is worth doing next.")},
            {"role": "user", "content": prompt + ("\n\nMaterial:\n" + listed if listed
                                                 else "\n\n(no material was recalled)")},
        ]
        try:
            result = self._system1.chat(messages)
        except ProviderError as exc:  # the self-prompt is not retried: the loop goes on
            logger.warning("dmn: the internal turn's model failed (%s)", exc)
            with conn.transaction():
                conn.execute(query("dmn_thought_status"), ("act_failed", prompt_id))
            return {"failed": str(exc)[:200], "self_prompt": str(prompt_id)}
        text = result.text.strip() or "(no answer)"
        if result.fallback:  # the heuristic profile: extractive, and it says so
            text = f"Heuristic answer (extractive, no model): {text}"
        with conn.transaction():
            made = self._thought(
                conn, "internal_turn", text, f"internal_turn:{item}",
                [f"thought:{prompt_id}", item, *[i.id for i in material],
                 {"goal": goal, "model": getattr(self._system1, "model", None),
                  "fallback": bool(result.fallback)}],
                None, now, owner)
            conn.execute(query("dmn_thought_status"), ("acted", prompt_id))
        return {**made, "self_prompt": str(prompt_id), "item": item, "goal": goal,
                "material": [i.id for i in material], "fallback": bool(result.fallback)}

    def evolve(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, float] | None:
        """Surfaced items later recalled (or cited in a reply) within the horizon were
        useful; the others, once the horizon passed, were not. A useful self-prompt counts
        in its goal's `useful_actions`."""
        pending = get_state(conn, "dmn.outcomes").get("pending", [])
        if not pending:
            return None
        weights = get_state(conn, "dmn.weights").get("weights") or dict(self.cfg.weights)
        keep, changed = [], False
        for p in pending:
            at = datetime.fromisoformat(p["at"])
            recalled = conn.execute(
                query("dmn_recently_recalled"),
                (at, p["item"])).fetchone()
            if recalled is None and p["item"].startswith("memory:"):
                recalled = conn.execute(query("dmn_recently_cited"),
                                        (p["item"].split(":", 1)[1], at)).fetchone()
            if recalled or now - at > self.minutes(OUTCOME_HORIZON_MINUTES):
                weights = rules.evolve_weights(weights, p["contributions"], bool(recalled),
                                               self.cfg.weight_step)
                changed = True
                if recalled and p.get("goal"):
                    conn.execute(query("dmn_goal_useful"), (p["goal"],))
            else:
                keep.append(p)
        set_state(conn, "dmn.outcomes", {"pending": keep})
        if changed:
            set_state(conn, "dmn.weights", {"weights": weights})
            return weights
        return None

    def expire(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, int]:
        """Every thought reaches something or is gone (issue 42 item 7): an idle thought
        (internal turn, creative impulse) or a proactive recall that no prompt took within
        `unshown_max_age_minutes` (a conversation that ended with it pending), and a
        self-prompt not acted on within the outcome horizon, become 'expired' (kept, never
        deleted). Counts per kind."""
        rows = conn.execute(query("dmn_expire_thoughts"), {
            "mind_before": now - self.minutes(self.cfg.unshown_max_age_minutes),
            "prompt_before": now - self.minutes(OUTCOME_HORIZON_MINUTES)}).fetchall()
        out: dict[str, int] = {}
        for (kind,) in rows:
            out[kind] = out.get(kind, 0) + 1
        return out

    # -- gut signal -------------------------------------------------------------------

    def gut(self, conn: psycopg.Connection[Any]) -> dict[str, Any]:
        def weighted(rows: list[tuple[Any, ...]]) -> np.ndarray[Any, Any] | None:
            vecs = [self._embed(r[0]) for r in rows]
            c = rules.centroid(vecs, [float(r[1]) for r in rows])
            return c

        l0 = weighted(conn.execute(query("dmn_identity_texts")).fetchall())
        l1 = weighted(conn.execute(query("dmn_goal_texts")).fetchall())
        row = conn.execute(
            query("dmn_recent_memories_centroid")).fetchone()
        l2 = _vec(row[0]) if row else None
        attention = self._attention(conn)
        delta = rules.gut_delta([l0, l1, l2], self.layer_weights, attention, self.dim)
        norm = float(np.linalg.norm(delta))
        layers = {"l0": l0 is not None, "l1": l1 is not None, "l2": l2 is not None,
                  "attention": attention is not None}
        conn.execute(
            query("dmn_gut_signal"),
            (norm, vector_text(delta), json.dumps(layers)))
        return {"delta_norm": round(norm, 4), "layers": layers}

    def gut_outcomes(self, conn: psycopg.Connection[Any], now: datetime) -> int:
        """seed 003 §17d (delta, action, OUTCOME): each gut signal older than the outcome
        horizon gets its outcome (`dmn_gut_outcomes`, a named heuristic: the user turns
        that followed, their similarity to the delta, recalls that matched, citations)."""
        horizon = self.minutes(OUTCOME_HORIZON_MINUTES).total_seconds()
        return len(conn.execute(query("dmn_gut_outcomes"),
                                {"now": now, "horizon_s": horizon}).fetchall())
