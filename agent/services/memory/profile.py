"""The user profile (issue 42 item 1; seed 000 §5.4.5): who the user is, from their own
words, kept as claims with sources (table `profile_claims`, revision 0024).

- Read by consolidation's `profile` operation (agent/services/background/consolidation/
  profile.py) from the users' own turns (role 'user', no other speaker), oldest first
  after a watermark. With the consolidation role routed to a real model, the model reads
  each message (JSON, agent/domain/profile.py LLM_SYSTEM); offline, or when the model
  fails or answers something else than that JSON, the named PROFILE_HEURISTIC does.
- A claim names its turn (`source_entry_id`) and when it was said. A newer statement on
  the same slot supersedes the current claim: that one is kept, `retired`, linked to the
  claim that replaced it; a back-dated one (an older line imported later) is kept as
  retired by the current claim. A statement that repeats the current value adds nothing.
- Shown at a session start, within [context] profile_max_tokens (Continuity, the
  handoff), by `cogd profile`, the MCP tool `profile` and `GET /v1/profile`: one user's
  own claims only.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import profile as rules
from agent.domain.quoting import quoted_line
from agent.domain.tables import need
from agent.errors import ProviderError

logger = logging.getLogger(__name__)

ModelSource = Callable[[], Any]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NIL = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class ProfileConfig:
    """[context]: the profile block's budget and how much a pass reads."""

    max_tokens: int  # profile_max_tokens
    turns_per_pass: int  # profile_turns_per_pass

    @classmethod
    def from_table(cls, ctx: Mapping[str, Any]) -> ProfileConfig:
        return cls(max_tokens=int(need(ctx, "profile_max_tokens")),
                   turns_per_pass=int(need(ctx, "profile_turns_per_pass")))


def _no_model() -> None:
    return None


class Profile:
    """Reads, records and shows a user's profile. `model`: the consolidation role's LLM
    when it routes to a real provider (asked on first use), else None."""

    def __init__(self, cfg: ProfileConfig, model: ModelSource = _no_model) -> None:
        self.cfg = cfg
        self.model = model
        self._llm: Any = None
        self._llm_built = False

    @property
    def llm(self) -> Any:
        if not self._llm_built:
            self._llm, self._llm_built = self.model(), True
        return self._llm

    # -- reading a message ------------------------------------------------------------

    def extract(self, text: str) -> tuple[list[rules.ProfileFact], str]:
        """The facts a user message states and who read them (`llm:<model>`, or the
        named heuristic when there is no model or it failed)."""
        if not rules.about_self(text):
            return [], rules.PROFILE_HEURISTIC
        llm = self.llm
        if llm is not None:
            try:
                result = llm.chat([{"role": "system", "content": rules.LLM_SYSTEM},
                                   {"role": "user", "content":
                                    f"Message: {quoted_line(text, 2000)}\nJSON:"}],
                                  temperature=0.0, max_tokens=300)
                if not result.fallback:
                    return rules.parse_llm(result.text), f"llm:{llm.model}"
            except (ProviderError, ValueError) as exc:
                logger.warning("profile: the model's extraction failed (%s); the heuristic "
                               "reads the message", exc)
        return rules.extract(text), rules.PROFILE_HEURISTIC

    # -- writing claims ---------------------------------------------------------------

    def record(self, conn: psycopg.Connection[Any], user_id: Any, entry_id: Any,
               said_at: datetime, facts: list[rules.ProfileFact], detector: str,
               ) -> list[dict[str, Any]]:
        """The facts of one turn as claims (in the caller's transaction); what was done."""
        done: list[dict[str, Any]] = []
        for fact in facts:
            key = {"user": user_id, "slot": fact.slot}
            conn.execute(query("profile_slot_lock"), key)
            if conn.execute(query("profile_turn_claimed"),
                            {"entry": entry_id, "slot": fact.slot}).fetchone():
                continue
            cur = conn.execute(query("profile_slot_current"), key).fetchone()
            if cur is not None and rules.key_of(cur[1]) == rules.key_of(fact.value):
                continue  # it restates the current claim
            new_id = uuid.uuid4()
            row = {**key, "kind": fact.kind, "value": fact.value, "entry": entry_id,
                   "at": said_at, "detector": detector, "claim_id": new_id}
            if cur is not None and said_at < cur[2]:  # back-dated: the current one stays
                conn.execute(query("profile_insert"), {
                    **row, "status": "retired", "retired_at": cur[2], "retired_by": cur[0]})
                done.append({**fact.as_dict(), "status": "retired"})
                continue
            if cur is not None:  # superseded: kept, retired (linked once the new one exists)
                conn.execute(query("profile_retire"),
                             {"claim": cur[0], "at": said_at, "by": None})
            made = conn.execute(query("profile_insert"), {
                **row, "status": "current", "retired_at": None, "retired_by": None}
            ).fetchone()
            if cur is not None and made is not None:
                conn.execute(query("profile_retire"),
                             {"claim": cur[0], "at": said_at, "by": made[0]})
            done.append({**fact.as_dict(), "status": "current",
                         **({"superseded": cur[1]} if cur is not None else {})})
        return done

    def read_turns(self, conn: psycopg.Connection[Any], rows: list[Any]) -> list[dict[str, Any]]:
        out = []
        for entry_id, user_id, content, at in rows:
            facts, detector = self.extract(content)
            if facts:
                for d in self.record(conn, user_id, entry_id, at, facts, detector):
                    out.append({**d, "entry_id": str(entry_id), "detector": detector})
        return out

    def scan(self, conn: psycopg.Connection[Any], after: datetime | None, after_id: str | None,
             ) -> tuple[list[dict[str, Any]], tuple[datetime, str] | None]:
        """The users' own turns after the watermark (at most turns_per_pass): their claims,
        and the new watermark (None: nothing read)."""
        rows = conn.execute(query("profile_turns_since"), {
            "after": after or EPOCH, "after_id": after_id or NIL,
            "k": self.cfg.turns_per_pass}).fetchall()
        if not rows:
            return [], None
        return self.read_turns(conn, rows), (rows[-1][3], str(rows[-1][0]))

    def rebuild(self, conn: psycopg.Connection[Any], user_id: Any) -> list[dict[str, Any]]:
        """Every own turn of one user still in day_table, read again (idempotent: a turn
        claims a slot once): for a history imported back-dated after the watermark."""
        return self.read_turns(conn, conn.execute(query("profile_turns_of_user"),
                                                  {"user": user_id}).fetchall())

    # -- showing it --------------------------------------------------------------------

    def current(self, conn: psycopg.Connection[Any], user_id: Any) -> list[rules.ProfileClaim]:
        return rules.ordered([
            rules.ProfileClaim(str(r[0]), r[1], r[2], r[3], r[4], str(r[5]), r[6], r[7])
            for r in conn.execute(query("profile_current"), {"user": user_id})])

    def show(self, conn: psycopg.Connection[Any], user_id: Any) -> dict[str, Any]:
        """One user's profile: the current claims with their sources, and the superseded
        ones (kept, with the claim that replaced each)."""
        retired = [{"id": f"profile:{r[0]}", "kind": r[1], "slot": r[2], "value": r[3],
                    "said_at": r[4].isoformat(), "source_ids": [f"day_table:{r[5]}"],
                    "detector": r[6], "retired_at": r[7].isoformat(),
                    "retired_by": None if r[8] is None else f"profile:{r[8]}"}
                   for r in conn.execute(query("profile_retired"), {"user": user_id})]
        return {"claims": [c.as_dict() for c in self.current(conn, user_id)],
                "superseded": retired}

    def block(self, conn: psycopg.Connection[Any], user_id: Any,
              count_tokens: Callable[[str], int]) -> tuple[str, dict[str, Any]] | None:
        """The profile block of a session start, within profile_max_tokens, and its
        metadata; None when nothing is known about the user."""
        claims = self.current(conn, user_id)
        if not claims or self.cfg.max_tokens <= 0:
            return None
        text, kept = rules.render_profile(claims, self.cfg.max_tokens, count_tokens)
        return text, {"items": [c.as_dict() for c in kept], "cut": len(claims) - len(kept)}
