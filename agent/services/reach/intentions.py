"""Intentions with a lifecycle (seed 000 §5.1-5.3): open → fulfilled (a later user turn
shows it done) or dropped (by the user); an open one surfaces when the topic comes up.

Consolidation finds intentions (keyword heuristic) and stores the source turn's vector.
On each user turn the loop checks the user's open intentions against the turn:
- the consolidation role's LLM is asked yes/no when that role routes to a real provider
  (openai, gemini) and the turn is at least [intentions] fulfil_candidate_similarity
  close; its resolution names "llm:<model>";
  at most the [intentions] fulfil_llm_max closest are asked per turn (each ask is a call
  on the turn's hot path);
- otherwise (offline, or when the model fails or answers neither) the named
  "completion-heuristic": the turn is at least [intentions] fulfil_min_similarity close
  and carries a completion cue (agent/domain/handoff.py: completion_cue); it closes only
  the closest intention (and those within [intentions] fulfil_heuristic_margin of it),
  since a cue says that something was done, not which of several related plans.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from agent.db.queries import query, vector_text
from agent.domain import handoff as rules
from agent.domain.llm_json import parse_yes_no
from agent.domain.tables import need
from agent.errors import InputError, ProviderError

logger = logging.getLogger(__name__)

# the models trusted with a yes/no: a remote or served model; the bundled 135M model and
# the extractive heuristic are not (their yes/no is noise)
REAL_PROVIDERS = ("openai", "gemini")
FULFIL_SYSTEM = (
    "You track a user's open intentions. Answer yes if the user's message says that the "
    "intention is now done (completed, sent, booked, fixed, and so on); answer no if it is "
    "not done, only planned, asked about, or unrelated. Answer with one word: yes or no.")


# a function giving the consolidation role's model when that role routes to a real provider,
# else None (agent/runtime.py: Runtime.consolidation_model); called on first use
ModelSource = Callable[[], Any]


def no_model() -> None:
    """The model source of a service with no model: the named heuristics decide."""
    return None


class ConsolidationModel:
    """A service that asks the consolidation role's model when it routes to a real provider
    (`llm`: taken from the subclass's `model` source on first use; None offline, when the
    named heuristics decide)."""

    model: ModelSource
    _llm: Any = None
    _llm_built = False

    @property
    def llm(self) -> Any:
        if not self._llm_built:
            self._llm = self.model()
            self._llm_built = True
        return self._llm

    def ask(self, system: str, text: str, max_tokens: int, what: str) -> str | None:
        """The model's answer to `text` at temperature 0; None without a model, for a
        fallback answer, or when the call fails (logged, naming `what`): then the named
        heuristic decides."""
        if self.llm is None:
            return None
        try:
            answer = self.llm.chat([{"role": "system", "content": system},
                                    {"role": "user", "content": text}],
                                   temperature=0.0, max_tokens=max_tokens)
        except ProviderError as exc:
            logger.warning("%s: the model failed (%s); the named heuristic decides", what, exc)
            return None
        return None if answer.fallback else str(answer.text)


def first_word(answer: str | None) -> str:
    """A one-word verdict ("yes", "Correct.", "win!") as its lowercase word; "" for none."""
    words = (answer or "").strip().lower().split()
    return words[0].strip(".!") if words else ""


@dataclass(frozen=True)
class IntentionsConfig:
    """[intentions]: when a turn fulfils an open intention, when one surfaces."""

    fulfil_min: float  # fulfil_min_similarity
    candidate_min: float  # fulfil_candidate_similarity
    llm_max: int  # fulfil_llm_max
    heuristic_margin: float  # fulfil_heuristic_margin
    surface_min: float  # surface_min_similarity
    cooldown: timedelta  # surface_cooldown_minutes
    surface_max: int
    overdue_after: int  # overdue_after_sessions
    handoff_max: int  # the open intentions a handoff lists

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> IntentionsConfig:
        return cls(
            fulfil_min=float(need(t, "fulfil_min_similarity")),
            candidate_min=float(need(t, "fulfil_candidate_similarity")),
            llm_max=int(need(t, "fulfil_llm_max")),
            heuristic_margin=float(need(t, "fulfil_heuristic_margin")),
            surface_min=float(need(t, "surface_min_similarity")),
            cooldown=timedelta(minutes=float(need(t, "surface_cooldown_minutes"))),
            surface_max=int(need(t, "surface_max")),
            overdue_after=int(need(t, "overdue_after_sessions")),
            handoff_max=int(need(t, "handoff_max")),
        )


class IntentionTracker(ConsolidationModel):
    def __init__(self, cfg: IntentionsConfig, model: ModelSource = no_model) -> None:
        self.cfg = cfg
        self.model = model

    # -- fulfilment -----------------------------------------------------------------

    def check_fulfilment(self, conn: psycopg.Connection[Any], user_id: Any, entry_id: Any,
                         content: str) -> list[dict[str, Any]]:
        """Mark the user's open intentions that this turn shows done; what was fulfilled."""
        rows = conn.execute(query("intentions_fulfil_candidates"),
                            {"entry": entry_id, "user": user_id}).fetchall()
        if not rows:
            return []
        cue = rules.completion_cue(content)
        done: list[dict[str, Any]] = []
        closest = float(rows[0][3])  # the rows come closest first
        asked = 0
        with conn.transaction():
            for iid, _kind, text, sim in rows:
                sim = float(sim)
                ask = asked < self.cfg.llm_max and sim >= self.cfg.candidate_min
                asked += ask
                resolution = self._judge(text, content, sim, cue, ask=ask,
                                         heuristic=sim >= closest - self.cfg.heuristic_margin)
                if resolution is None:
                    continue
                hit = conn.execute(query("intentions_fulfil"), {
                    "entry": entry_id, "id": iid,
                    "resolution": json.dumps(resolution)}).fetchone()
                if hit:
                    done.append({"id": f"intention:{iid}",
                                 "source_ids": [f"day_table:{entry_id}"], **resolution})
        return done

    def _judge(self, intention: str, turn: str, sim: float, cue: str | None, *,
               ask: bool = True, heuristic: bool = True) -> dict[str, Any] | None:
        """The model's yes/no when `ask` and one is configured; else (or when it fails)
        the completion heuristic, when `heuristic` (the closest of the candidates)."""
        if ask:
            answer = self.ask(FULFIL_SYSTEM, f"Intention: {intention[:1000]}"
                              f"\nMessage: {turn[:2000]}", 4, "intentions (fulfilment)")
            verdict = None if answer is None else parse_yes_no(answer)
            if verdict is not None:
                return ({"detector": f"llm:{self.llm.model}", "similarity": round(sim, 4)}
                        if verdict else None)
        if heuristic and rules.fulfils(sim, cue, self.cfg.fulfil_min):
            return {"detector": rules.COMPLETION_DETECTOR, "similarity": round(sim, 4),
                    "cue": cue}
        return None

    # -- surfacing ------------------------------------------------------------------

    def surface(self, conn: psycopg.Connection[Any], user_id: Any, query_vec: Any,
                skip: Collection[str] = (), now: datetime | None = None
                ) -> list[tuple[str, str]]:
        """(id, line) of the open intentions close to the query, off their cooldown, whose
        source turn is not in `skip` (day_table ids in the window); marked surfaced."""
        now = now or datetime.now(UTC)
        rows = conn.execute(query("intentions_surfaceable"), {
            "user": user_id, "q": vector_text(query_vec), "cooled": now - self.cfg.cooldown,
            "min_sim": self.cfg.surface_min, "k": self.cfg.surface_max + len(skip)}).fetchall()
        out = []
        for iid, kind, content, carried, src, _sim in rows:
            if f"day_table:{src}" in skip:
                continue  # said in this very window: no reminder needed
            out.append((str(iid), rules.intention_line(kind, content, int(carried),
                                                       self.cfg.overdue_after, str(iid))))
        out = out[: self.cfg.surface_max]
        self.mark_surfaced(conn, [i for i, _ in out])
        return out

    @staticmethod
    def mark_surfaced(conn: psycopg.Connection[Any], ids: list[str]) -> None:
        if ids:
            with conn.transaction():
                conn.execute(query("intentions_mark_surfaced"), (ids,))

    # -- the user's view ------------------------------------------------------------

    def list(self, conn: psycopg.Connection[Any], user_id: Any, *, include_resolved: bool = False,
             limit: int = 100) -> list[dict[str, Any]]:
        return [{"id": str(r[0]), "kind": r[1], "status": r[2], "content": r[3],
                 "carried": r[4], "overdue": bool(r[5]) and r[2] == "open",
                 "urgency": r[6], "created_at": r[7], "resolved_at": r[8],
                 "resolution": r[9],
                 "resolved_by": None if r[10] is None else f"day_table:{r[10]}",
                 "source_ids": [] if r[11] is None else [f"day_table:{r[11]}"]}
                for r in conn.execute(query("intentions_of_user"), {
                    "user": user_id, "all": include_resolved, "k": limit,
                    "overdue": self.cfg.overdue_after})]


def drop(conn: psycopg.Connection[Any], user_id: Any, intention_id: str, via: str) -> str:
    """The user drops one of their open intentions; InputError for an unknown id, another
    user's, or one already resolved."""
    raw = intention_id.strip().removeprefix("intention:")
    try:
        iid = uuid.UUID(raw)
    except ValueError:
        raise InputError(f"{intention_id!r} is not an intention id (a uuid; "
                         "`cogd intentions --user HANDLE` lists them)") from None
    row = conn.execute(query("intentions_row"), (iid,)).fetchone()
    if row is None or row[1] != user_id:
        raise InputError(f"no intention {iid} of this user "
                         "(`cogd intentions --user HANDLE` lists theirs)")
    if row[2] != "open":
        raise InputError(f"intention {iid} is already {row[2]}")
    with conn.transaction():
        hit = conn.execute(query("intentions_drop"), {
            "id": iid, "resolution": json.dumps({"detector": "user", "via": via})}).fetchone()
    if hit is None:
        raise InputError(f"intention {iid} was resolved meanwhile")
    return f"intention {iid} dropped"
