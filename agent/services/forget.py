"""Forgetting: the one place cogd destroys content, and only on request (issue 16).

`cogd forget MEMORY_ID` erases a memory and every verbatim copy of what it says;
`cogd forget --user HANDLE` erases everything of a user. Consolidation supersedes and
never destroys; this is the exception, and it leaves an audit row that names what was
removed (ids and counts per place), never the text.

What goes, for a memory: the memory; its source turn; the owner's other turns and
memories that contain its text (or its turn's text) verbatim; the insights that
supersede any of them (they carry the fact; their other sources become active again);
the rows that point at them (gate decisions, citations, links, intentions, scratch
copies, recall log entries, escalations). Where the text is kept inside something that
also holds other content, it is cut out and replaced by "[forgotten]": holographic
blocks (then re-embedded and re-indexed), the inbox and outbox, consolidation log
entries, proposals and goals, the LanceDB cortex (blocks, archive, cluster summaries,
antechamber; then re-embedded, and old table versions removed from disk), and the
morning briefs on disk (a line holding the start of the text is removed). For a whole
user: all of their rows, their sessions, tokens and the user row; the cortex rows of
their blocks and the cluster nodes built over them (the night cycle rebuilds the tree).

Texts shorter than MIN_NEEDLE characters are not searched for elsewhere (they would cut
every "ok" out of everything); the rows that are the memory and its turn still go.
Not removed: copies outside cogd's data (backups, logs you keep, Postgres WAL and dead
row versions until VACUUM and checkpoints recycle them).
"""

from __future__ import annotations

import json
import logging
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from agent.db import audit
from agent.db.queries import query, vector_text
from agent.errors import InputError

log = logging.getLogger("agent.forget")

REDACTED = "[forgotten]"
MIN_NEEDLE = 12  # cogd choice: shorter texts are erased as rows only, not searched for
PREFIX_CHARS = 40  # a brief line holding this much of a text's start is removed

# (table, key, text columns, JSON columns, scope): rows whose text holds a needle are
# deleted (copies and logs) or redacted (rows that keep other content, or bookkeeping).
# scope: "user" (user_id is the owner), "session" (a session of the owner), "all".
Holding = tuple[str, str, tuple[str, ...], tuple[str, ...], str]
DELETE_HOLDING: tuple[Holding, ...] = (
    ("scratch_buffer", "id", ("content",), ("signals",), "user"),
    ("intentions", "intention_id", ("content",), (), "user"),
    ("thoughts", "thought_id", ("content", "theme"), ("source_ids",), "session"),
    ("recall_log", "id", ("query",), ("items",), "session"),
    ("gate_decisions", "decision_id", ("reason",), ("signals", "outcome"), "session"),
)
REDACT_HOLDING: tuple[Holding, ...] = (
    ("inbox", "id", ("content", "partial_reply"), (), "session"),
    ("outbox", "id", ("content",), ("metadata",), "session"),
    ("escalations", "id", ("outcome",), ("triggers", "stakes", "monitors"), "session"),
    ("consolidation_log", "id", (), ("inputs", "outputs"), "all"),
    ("proposals", "proposal_id", (), ("payload", "evidence"), "all"),
    ("goals", "goal_id", ("description",), ("metadata",), "all"),
    ("holographic_blocks", "block_id", ("index_text",),
     ("prose", "citations", "vector_history"), "user"),
)


@dataclass
class ForgetReport:
    target: str
    removed: dict[str, int] = field(default_factory=dict)
    redacted: dict[str, int] = field(default_factory=dict)
    restored: int = 0
    cortex: dict[str, int] = field(default_factory=dict)
    files: int = 0
    short_text: bool = False

    def count(self, kind: str, place: str, n: int) -> None:
        if n:
            bucket = self.removed if kind == "removed" else self.redacted
            bucket[place] = bucket.get(place, 0) + n

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "removed": self.removed, "redacted": self.redacted,
                "restored_sources": self.restored, "cortex": self.cortex,
                "files_changed": self.files, "short_text_not_searched": self.short_text}


def cut(value: Any, needles: Sequence[str]) -> Any:
    """`value` (text, or JSON-like data) with every needle replaced by REDACTED."""
    if isinstance(value, str):
        for n in needles:
            if n in value:
                value = value.replace(n, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: cut(v, needles) for k, v in value.items()}
    if isinstance(value, list):
        return [cut(v, needles) for v in value]
    return value


def holds(value: Any, needles: Sequence[str]) -> bool:
    if isinstance(value, str):
        return any(n in value for n in needles)
    if isinstance(value, dict):
        return any(holds(v, needles) for v in value.values())
    if isinstance(value, list):
        return any(holds(v, needles) for v in value)
    return False


class Forgetter:
    def __init__(self, conn: psycopg.Connection[Any], embed: Callable[[list[str]], list[Any]],
                 reindex: Callable[[psycopg.Connection[Any]], Any], cortex: Any,
                 data_dir: Path) -> None:
        self.conn = conn
        self.embed = embed  # the universal embedder's embed_documents
        self.reindex = reindex  # rebuilds pending block index entries
        self.cortex = cortex  # a LanceCortex, or None when there is none yet
        self.data_dir = Path(data_dir)

    # -- entry points ---------------------------------------------------------------

    def memory(self, memory_id: str, actor: str, user_id: Any = None,
               scoped: bool = False) -> ForgetReport:
        """Forget one memory. `scoped`: only if it is `user_id`'s own (a memory of no
        user is everyone's: only the operator's `cogd forget` erases it)."""
        try:
            mid = uuid.UUID(memory_id.strip().removeprefix("memory:"))
        except ValueError:
            raise InputError(f"{memory_id!r} is not a memory id (a uuid)") from None
        row = self.conn.execute(query("forget_memory_row"), (mid,)).fetchone()
        if row is None or (scoped and row[1] != user_id):
            raise InputError(f"no memory {mid}")
        _, owner, content, entry = row
        texts = [content]
        if entry is not None:
            turn = self.conn.execute(query("forget_turn_content"), (entry,)).fetchone()
            if turn:
                texts.append(turn[0])
        needles = sorted({t.strip() for t in texts if len(t.strip()) >= MIN_NEEDLE},
                         key=len, reverse=True)
        report = ForgetReport(f"memories:{mid}",
                              short_text=any(len(t.strip()) < MIN_NEEDLE for t in texts))
        ids = {"uid": owner, "memories": [mid], "turns": [entry] if entry else [],
               "needles": needles}
        memories = [r[0] for r in self.conn.execute(query("forget_doomed_memories"), ids)]
        turns = [r[0] for r in self.conn.execute(query("forget_doomed_turns"), ids)]
        # the cortex and the files first: a crash after them leaves the rows to forget
        # again (this command, re-run), never rows whose copies were missed
        self._cortex(report, needles, blocks=[], owner=owner)
        self._files(report, needles)
        with self.conn.transaction():
            self._rows(report, owner, memories, turns, [], needles, whole=False)
            audit.append(self.conn, actor, "forget", report.target, report.as_dict())
        self._after(report)
        return report

    def user(self, user_id: Any, actor: str) -> ForgetReport:
        """Forget everything of a user: their rows, sessions, tokens and the user."""
        row = self.conn.execute(query("forget_user_rows"), {"uid": user_id}).fetchone()
        assert row is not None
        memories, turns, blocks, _sessions = (list(x) for x in row)
        texts = [r[0] for r in self.conn.execute(query("forget_user_texts"), {
            "turns": turns, "memories": memories, "blocks": blocks})]
        needles = sorted({t.strip() for t in texts if t and len(t.strip()) >= MIN_NEEDLE},
                         key=len, reverse=True)
        report = ForgetReport(f"users:{user_id}")
        self._cortex(report, needles, blocks=[str(b) for b in blocks], owner=user_id,
                     whole_user=True)
        self._files(report, needles)
        with self.conn.transaction():
            self._rows(report, user_id, memories, turns, blocks, needles, whole=True)
            self.conn.execute(query("forget_delete_user"), {"uid": user_id})
            report.count("removed", "users", 1)
            audit.append(self.conn, actor, "forget", report.target, report.as_dict())
        return report

    # -- Postgres -------------------------------------------------------------------

    def _rows(self, report: ForgetReport, owner: Any, memories: list[Any], turns: list[Any],
              blocks: list[Any], needles: list[str], whole: bool) -> None:
        conn = self.conn
        ids = {"uid": owner, "memories": memories, "turns": turns, "blocks": blocks}
        restored = conn.execute(query("forget_restore_sources"), ids).fetchall()
        report.restored = len(restored)
        row = conn.execute(query("forget_delete_references"), ids).fetchone()
        report.count("removed", "references", int(row[0]) if row else 0)
        id_texts = [str(x) for x in (*memories, *turns, *blocks)]
        sessions = self._sessions(owner)
        for table, key, texts, jsons, scope in DELETE_HOLDING:
            doomed = [k for k, _ in self._holding(table, key, texts, jsons, scope, owner,
                                                  sessions, needles, id_texts, whole)]
            if doomed:
                if table == "scratch_buffer":  # gate decisions point at scratch rows
                    conn.execute("DELETE FROM gate_decisions WHERE scratch_id = ANY(%s)",
                                 (doomed,))
                conn.execute(f"DELETE FROM {table} WHERE {key} = ANY(%s)", (doomed,))
                report.count("removed", table, len(doomed))
        n = conn.execute(query("forget_delete_memories"), ids).rowcount
        report.count("removed", "memories", n)
        if whole:  # turns point at inbox rows: outbox and turns go first, then the inbox
            for table in ("outbox",):
                n = conn.execute(f"DELETE FROM {table} WHERE session_id = ANY(%s)",
                                 (sessions,)).rowcount
                report.count("removed", table, n)
        n = conn.execute(query("forget_delete_turns"), ids).rowcount
        report.count("removed", "day_table", n)
        # the lexicon keeps a term whose last document went (df 0); a forgotten word goes
        conn.execute(query("forget_unused_terms"))
        if whole:
            for table in ("inbox", "escalations", "gate_decisions", "recall_log", "thoughts",
                          "scratch_buffer"):
                n = conn.execute(f"DELETE FROM {table} WHERE session_id = ANY(%s)",
                                 (sessions,)).rowcount
                report.count("removed", table, n)
            conn.execute(query("forget_unlink_blocks"), ids)
            n = conn.execute(query("forget_delete_blocks"), ids).rowcount
            report.count("removed", "holographic_blocks", n)
            n = conn.execute("DELETE FROM intentions WHERE user_id = %s", (owner,)).rowcount
            report.count("removed", "intentions", n)
        self._blocks_touched: list[Any] = []
        for table, key, texts, jsons, scope in REDACT_HOLDING:
            for k, values in self._holding(table, key, texts, jsons, scope, owner, sessions,
                                           needles, [], whole=False):
                cols = [*texts, *jsons]
                new = [cut(v, needles) for v in values]
                sets = ", ".join(f"{c} = %s" + ("::jsonb" if c in jsons else "")
                                 for c in cols)
                conn.execute(f"UPDATE {table} SET {sets} WHERE {key} = %s", (
                    *[json.dumps(v) if c in jsons and v is not None else v
                      for c, v in zip(cols, new, strict=True)], k))
                report.count("redacted", table, 1)
                if table == "holographic_blocks":
                    self._blocks_touched.append(k)
        self._reembed_blocks(self._blocks_touched)

    def _sessions(self, owner: Any) -> list[Any]:
        return [r[0] for r in self.conn.execute(
            "SELECT session_id FROM sessions WHERE user_id IS NOT DISTINCT FROM %s", (owner,))]

    def _holding(self, table: str, key: str, texts: Sequence[str], jsons: Sequence[str],
                 scope: str, owner: Any, sessions: list[Any], needles: list[str],
                 id_texts: list[str], whole: bool) -> list[tuple[Any, list[Any]]]:
        """(key, values) of the rows in scope whose text holds a needle or an id (all
        rows in scope when `whole`)."""
        cols = ", ".join([key, *texts, *jsons])
        if scope == "user":
            rows = self.conn.execute(f"SELECT {cols} FROM {table} "
                                     "WHERE user_id IS NOT DISTINCT FROM %s", (owner,))
        elif scope == "session":  # a row of no session is never the owner's whole
            rows = self.conn.execute(
                f"SELECT {cols}, session_id IS NOT NULL FROM {table} "
                "WHERE session_id = ANY(%s) OR session_id IS NULL", (sessions,))
        else:
            rows = self.conn.execute(f"SELECT {cols} FROM {table}")
        out = []
        for r in rows:
            n = 1 + len(texts) + len(jsons)
            values, mine = list(r[1:n]), scope == "user" or (scope == "session" and r[n])
            if (whole and mine) or holds(values, needles) or (id_texts and holds(
                    [json.dumps(v, default=str) for v in values], id_texts)):
                out.append((r[0], values))
        return out

    def _reembed_blocks(self, blocks: list[Any]) -> None:
        """Blocks whose prose lost the text: new vectors of what is left, and a new
        index entry (index_version NULL: the indexer rebuilds it)."""
        from agent.domain.contextual import prose_text

        if not blocks:
            return
        rows = self.conn.execute("SELECT block_id, prose FROM holographic_blocks "
                                 "WHERE block_id = ANY(%s)", (blocks,)).fetchall()
        vectors = self.embed([prose_text(r[1]) or " " for r in rows])
        for r, vec in zip(rows, vectors, strict=True):
            text = vector_text(vec)
            self.conn.execute(query("forget_block_reembed"),
                              {"id": r[0], "universal": text, "native": text})

    def _after(self, report: ForgetReport) -> None:
        """Rebuild the index entries of blocks whose text was cut (their old terms leave
        the lexicon), then drop the terms no document holds any more."""
        if getattr(self, "_blocks_touched", None):
            self.reindex(self.conn)
            with self.conn.transaction():
                self.conn.execute(query("forget_unused_terms"))

    # -- the cortex and the files ---------------------------------------------------

    def _cortex(self, report: ForgetReport, needles: list[str], blocks: list[str],
                owner: Any, whole_user: bool = False) -> None:
        from agent.cortex.lance import ANTECHAMBER, ARCHIVE, BLOCKS, CLUSTERS

        store = self.cortex
        if store is None:
            return
        changed = False
        for name in (BLOCKS, ARCHIVE):
            rows = store.rows(name)
            mine = [r for r in rows if r["block_id"] in blocks or (
                not whole_user and str(r.get("user_id")) == str(owner)
                and holds([r["prose_text"], r["live_zones_text"], r["prose"]], needles))]
            if whole_user:
                gone = [r["block_id"] for r in rows if r["block_id"] in blocks
                        or (r.get("user_id") and str(r["user_id"]) == str(owner))]
                store.delete(name, gone, "block_id")
                report.cortex[f"{name}_removed"] = len(gone)
                changed |= bool(gone)
                continue
            for r in mine:
                for col in ("prose_text", "live_zones_text", "prose"):
                    r[col] = cut(r[col], needles)
            if mine:
                vecs = self.embed([r["prose_text"] or " " for r in mine])
                for r, v in zip(mine, vecs, strict=True):
                    r["universal"] = r["native"] = [float(x) for x in v]
                store.upsert(name, mine, "block_id")
                report.cortex[f"{name}_redacted"] = len(mine)
                changed = True
        clusters = store.rows(CLUSTERS)
        hit = [c for c in clusters if holds(c["summary_text"], needles)
               or any(b in (c.get("member_ids") or "") for b in blocks)]
        if hit:
            # a cluster node summarises its members: one built over forgotten text goes,
            # with the nodes above it (the night cycle rebuilds the tree)
            doomed = {c["cluster_id"] for c in hit}
            while True:
                up = {c["cluster_id"] for c in clusters if any(
                    d in (c.get("member_ids") or "") for d in doomed)} - doomed
                if not up:
                    break
                doomed |= up
            store.delete(CLUSTERS, sorted(doomed), "cluster_id")
            report.cortex[f"{CLUSTERS}_removed"] = len(doomed)
            changed = True
        ante = [a for a in store.rows(ANTECHAMBER)
                if holds([a["question_text"], a["source_content_summary"]], needles)
                or a.get("source_block_id") in blocks]
        if ante:
            store.delete(ANTECHAMBER, [a["entry_id"] for a in ante], "entry_id")
            report.cortex[f"{ANTECHAMBER}_removed"] = len(ante)
            changed = True
        if changed:
            purge_old_versions(store)

    def _files(self, report: ForgetReport, needles: list[str]) -> None:
        """Morning briefs and run summaries under DATA_DIR/night_cycle: lines holding
        the start of a forgotten text go (a brief quotes excerpts); whole texts are cut."""
        root = self.data_dir / "night_cycle"
        if not root.is_dir() or not needles:
            return
        starts = [n[:PREFIX_CHARS] for n in needles]
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.suffix not in (".md", ".json"):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if not holds(text, starts):
                continue
            if path.suffix == ".md":
                new = "\n".join(line if not holds(line, starts) else f"- {REDACTED}"
                                for line in text.split("\n"))
            else:
                new = cut(text, needles)
            path.write_text(new, encoding="utf-8")
            report.files += 1


def build_forgetter(settings: Any, conn: psycopg.Connection[Any]) -> Forgetter:
    """A Forgetter with the configured universal embedder, the block indexer and the
    cortex when there is one."""
    from agent.cortex.lance import LanceCortex, cortex_uri
    from agent.providers import factory
    from agent.services.indexing import build_indexer

    universal = factory.build_universal_embedder(settings)
    indexer = build_indexer(settings)
    uri = cortex_uri(settings)
    cortex = (LanceCortex.from_settings(settings)
              if "://" in uri or Path(uri).is_dir() else None)
    return Forgetter(conn, lambda texts: list(universal.embed_documents(texts)),
                     lambda c: indexer.run(c, kinds=("block",), count=False), cortex,
                     Path(settings.data_dir))


def purge_old_versions(store: Any) -> None:
    """Remove every older version of the cortex tables from disk: a deleted or rewritten
    row stays in an older version's files until they are cleaned up."""
    from agent.cortex.lance import TABLES

    with warnings.catch_warnings():
        # lancedb warns that readers of an older version would fail: forgetting is meant
        # to leave no older version to read
        warnings.simplefilter("ignore", UserWarning)
        for name in TABLES:
            if store.exists(name):
                store.table(name).optimize(cleanup_older_than=timedelta(0),
                                           delete_unverified=True)
