"""Forgetting: the one place cogd destroys content, and only on request (issue 16).

`cogd forget MEMORY_ID` erases a memory and every verbatim copy of what it says;
`cogd forget --user HANDLE` erases everything of a user. Consolidation supersedes and
never destroys; this is the exception, and it leaves an audit row that names what was
removed (ids and counts per place), never the text.

What goes, for a memory: the memory; its source turn; the owner's other turns and
memories that contain its text (or its turn's text) verbatim; the insights that
supersede any of them (they carry the fact; their other sources become active again);
the rows that point at them (gate decisions, citations, links, intentions, predictions
and decisions made from or settled by them, the cognitive models built from them and the
principles crystallised from those models, continuation notes, scratch copies, recall
log entries, escalations, the problem queue). Where the text is kept inside something
that also holds other content, it is cut out and replaced by "[forgotten]":
holographic blocks (then re-embedded and re-indexed), the inbox and outbox, consolidation
log entries, proposals and goals, the LanceDB cortex (blocks, archive, cluster summaries,
antechamber; then re-embedded, and old table versions removed from disk), and the
text files of the night cycle's run directories (a brief item holding the start of the
text, or a span of it, is removed). A quote of a span of the text (SPAN_WORDS) counts as a
copy: it is cut out of the owner's turns and memories that hold it (issue 38). The touched
tables are ANALYZEd afterwards (pg_stats samples column values). For a whole user: every
row that refers to them, found from the schema (agent/db/scrub.py: erase_user), and the
user; the cortex rows of their blocks and the cluster nodes built over them (the night
cycle rebuilds the tree).

Texts shorter than MIN_NEEDLE characters are not searched for elsewhere (they would cut
every "ok" out of everything); the rows that are the memory and its turn still go.
Not removed: copies outside cogd's data (backups, logs you keep, Postgres WAL and dead
row versions until VACUUM and checkpoints recycle them: docs/guide.md, "Forgetting").
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from agent.db import audit, scrub
from agent.db.queries import query, vector_text
from agent.errors import InputError

log = logging.getLogger("agent.forget")

REDACTED = "[forgotten]"
_WORDS = re.compile(r"[^\W_]{3,}")  # an episode's title words and terms (revision 0025)
MIN_NEEDLE = 12  # cogd choice: shorter texts are erased as rows only, not searched for
PREFIX_CHARS = 40  # a brief line holding this much of a text's start is removed
# A quote of a forgotten text (a reply that repeats part of it, a brief's excerpt) is found
# by its spans: SPAN_WORDS consecutive words of the text (split at whitespace, joined by one
# space), at least SPAN_CHARS long, holding a rare word: a lexicon term (agent/domain/
# lexical.py) that at most RARE_DF turns hold (a word of the day table's vocabulary that
# many turns use says nothing about where a quote came from). Six words, one of them
# rare, do not occur by chance in an unrelated text; a span of common words
# ("I don't know what to do") is never one. A heuristic: a quote reworded or shorter than
# SPAN_WORDS words is not found.
SPAN_WORDS = 6
SPAN_CHARS = 30
RARE_DF = 5
MAX_SPANS = 256  # per forget: the probes stay a bounded list
# analysed after every forget, whatever was touched: the text's own tables and the lexicon
ANALYZED = ("day_table", "memories", "holographic_blocks", "lexical_postings",
            "lexical_terms")

# (table, key, text columns, JSON columns, scope): rows whose text holds a needle are
# deleted (copies and logs) or redacted (rows that keep other content, or bookkeeping).
# scope: "user" (user_id is the owner), "session" (a session of the owner), "all".
Holding = tuple[str, str, tuple[str, ...], tuple[str, ...], str]
DELETE_HOLDING: tuple[Holding, ...] = (
    ("scratch_buffer", "id", ("content",), ("signals",), "user"),
    ("intentions", "intention_id", ("content",), ("resolution",), "user"),
    ("continuation_notes", "note_id", ("content",), ("source_ids",), "user"),
    ("workflows", "workflow_id", ("name", "trigger"), ("steps",), "user"),
    ("cognitive_models", "model_id", ("statement",), (), "user"),  # evidence: cascade
    ("principles", "principle_id", ("statement",), ("source_ids",), "user"),
    ("thoughts", "thought_id", ("content", "theme"), ("source_ids",), "session"),
    ("problem_queue", "problem_id", ("content",), ("source_ids",), "user"),
    ("recall_log", "id", ("query",), ("items",), "session"),
    ("gate_decisions", "decision_id", ("reason",), ("signals", "outcome"), "session"),
    ("milestones", "milestone_id", ("content",), (), "user"),  # a turn's words (0025)
)
REDACT_HOLDING: tuple[Holding, ...] = (
    ("inbox", "id", ("content", "partial_reply"), (), "session"),
    ("outbox", "id", ("content",), ("metadata",), "session"),
    ("escalations", "id", ("outcome",), ("triggers", "stakes", "monitors"), "session"),
    ("consolidation_log", "id", (), ("inputs", "outputs"), "all"),
    ("proposals", "proposal_id", (), ("payload", "evidence"), "all"),
    ("goals", "goal_id", ("description",), ("metadata",), "all"),
    ("goals_history", "id", ("reason",), ("details",), "all"),
    ("identity_history", "id", ("reason",), ("details",), "all"),
    ("preoccupation_centroids", "centroid_id", ("label",), (), "all"),
    ("night_cycle_runs", "run_id", ("error",), ("summary", "checkpoints"), "all"),
    ("holographic_blocks", "block_id", ("index_text",),
     ("prose", "citations", "vector_history"), "user"),
)

# the owner's own turns and memories that quote a span of the forgotten text without
# holding all of it (a reply that repeats part of it): the span is cut out, and their
# vectors and index entries are rebuilt from what is left
QUOTING: tuple[Holding, ...] = (
    ("day_table", "entry_id", ("content", "index_text"), (), "user"),
    ("memories", "memory_id", ("content", "index_text"), ("metadata",), "user"),
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
    analyzed: list[str] = field(default_factory=list)

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
                 data_dir: Path,
                 embed_native: Callable[[list[str]], list[Any]] | None = None) -> None:
        self.conn = conn
        self.embed = embed  # the universal embedder's embed_documents
        self.embed_native = embed_native or embed  # the native one (None: the same model)
        self.reindex = reindex  # rebuilds pending turn and block index entries
        self.cortex = cortex  # a LanceCortex, or None when there is none yet
        self.data_dir = Path(data_dir)
        self._blocks_touched: list[Any] = []

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
        # rows that hold the whole text are copies and go (above); a quote of a span of it
        # is cut out of wherever it is (issue 38)
        quotes = sorted({*needles, *self._spans(needles)}, key=len, reverse=True)
        # the cortex and the files first: a crash after them leaves the rows to forget
        # again (this command, re-run), never rows whose copies were missed
        with self._night_cycle_held():
            self._cortex(report, quotes, blocks=[], owner=owner)
            self._files(report, quotes, [])
            self._rows(report, actor, owner, memories, turns, [], quotes, whole=False)
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
        with self._night_cycle_held():
            self._cortex(report, needles, blocks=[str(b) for b in blocks], owner=user_id,
                         whole_user=True)
            # briefs: lines naming their blocks, or starting like a long text of theirs
            # (a short phrase of theirs may well be another user's too)
            self._files(report, [n for n in needles if len(n) >= PREFIX_CHARS],
                        [str(b) for b in blocks])
            self._rows(report, actor, user_id, memories, turns, blocks, needles, whole=True)
        self._after(report)
        return report

    def _spans(self, texts: Sequence[str]) -> list[str]:
        """The distinctive spans of `texts` (see SPAN_WORDS): what a quote of them holds."""
        from agent.domain.lexical import terms

        spans: dict[str, list[str]] = {}
        for text in texts:
            words = text.split()
            for i in range(len(words) - SPAN_WORDS + 1):
                span = " ".join(words[i:i + SPAN_WORDS])
                if len(span) >= SPAN_CHARS and len(spans) < MAX_SPANS:
                    spans.setdefault(span, terms(span))
        wanted = sorted({t for ts in spans.values() for t in ts})
        df = dict(self.conn.execute(query("forget_term_df"), (wanted,)).fetchall())
        return [s for s, ts in spans.items() if any(df.get(t, 0) <= RARE_DF for t in ts)]

    @contextlib.contextmanager
    def _night_cycle_held(self) -> Iterator[None]:
        """The night cycle's lock, for the time of the forget: a night cycle writing the
        cortex meanwhile could write a forgotten row back, or lose the files of its own
        write to the clean-up of old versions."""
        from agent.db.locks import singleton_lock

        with singleton_lock(self.conn, "night-cycle", command="a night cycle",
                            see="`select * from v_night_cycle` (forget after it ends)"):
            yield

    # -- Postgres -------------------------------------------------------------------

    def _rows(self, report: ForgetReport, actor: str, owner: Any, memories: list[Any],
              turns: list[Any], blocks: list[Any], needles: list[str], whole: bool) -> None:
        """Find first (reads, embeddings), then one short transaction of deletes and
        updates: the lexicon triggers lock each kind's statistics row until commit, and
        every other writer waits for it."""
        conn = self.conn
        ids = {"uid": owner, "memories": memories, "turns": turns, "blocks": blocks}
        id_texts = [str(x) for x in (*memories, *turns, *blocks)]
        if not whole:  # a failed prediction's problem and thought quote only its sentence
            id_texts += [str(r[0]) for r in conn.execute(query("forget_doomed_predictions"),
                                                         ids)]
        sessions = self._sessions(owner)
        doomed = {table: [k for k, _ in self._holding(table, key, texts, jsons, scope, owner,
                                                      sessions, needles, id_texts, whole)]
                  for table, key, texts, jsons, scope in DELETE_HOLDING}
        redact = []
        for table, key, texts, jsons, scope in REDACT_HOLDING:
            # a whole user's phrases may be anyone's: what no user owns is matched by id
            words = [] if whole and scope == "all" else needles
            for k, values in self._holding(table, key, texts, jsons, scope, owner, sessions,
                                           words, id_texts if whole else [], whole=False):
                if table == "holographic_blocks" and k in blocks:
                    continue  # deleted below
                redact.append((table, key, [*texts, *jsons], jsons, k,
                               [cut(v, needles) for v in values]))
        if not whole:
            gone = {*map(str, turns), *map(str, memories)}
            for table, key, texts, jsons, scope in QUOTING:
                for k, values in self._holding(table, key, texts, jsons, scope, owner,
                                               sessions, needles, [], whole=False):
                    if str(k) not in gone:
                        redact.append((table, key, [*texts, *jsons], jsons, k,
                                       [cut(v, needles) for v in values]))
        starts = [_fold(n)[:PREFIX_CHARS] for n in needles] + id_texts
        briefs = [(r, u, kept) for r, u, text in conn.execute(query("forget_night_briefs"))
                  if (kept := _cut_items(text, starts)) != text] if not whole and conn.execute(
                      query("forget_has_night_briefs")).fetchone() != (None,) else []
        touched = [k for t, _, _, _, k, _ in redact if t == "holographic_blocks"]
        episodes = [] if whole else self._episodes(turns, [*touched, *blocks], needles)
        vectors = self._block_vectors(touched, redact)
        quoted = {t: [(k, new[0]) for t2, _, _, _, k, new in redact if t2 == t]
                  for t in ("day_table", "memories")}
        revectors = {t: list(zip(rows, self.embed([v or " " for _, v in rows]),
                                 self.embed_native([v or " " for _, v in rows]), strict=True))
                     for t, rows in quoted.items() if rows}
        quoting = [] if whole else [r[0] for r in conn.execute(
            query("forget_quoting_turns"), {"uid": owner, "needles": needles,
                                            "turns": turns})]
        with conn.transaction():
            report.restored = len(conn.execute(query("forget_restore_sources"),
                                               ids).fetchall())
            row = conn.execute(query("forget_delete_references"), ids).fetchone()
            report.count("removed", "references", int(row[0]) if row else 0)
            if not whole:  # predictions and reasoning trails (issue 18)
                made = conn.execute(query("forget_turn_foresight"), ids).fetchone()
                report.count("removed", "predictions", int(made[0]) if made else 0)
                report.count("removed", "decisions", int(made[1]) if made else 0)
            built = conn.execute(query("forget_memory_models"), ids).fetchone()
            report.count("removed", "cognitive_models", int(built[0]) if built else 0)
            report.count("removed", "principles", int(built[1]) if built else 0)
            for table, keys in doomed.items():
                if not keys:
                    continue
                if table == "scratch_buffer":  # gate decisions point at scratch rows
                    conn.execute(query("forget_gate_of_scratch"), (keys,))
                key = next(k for t, k, *_ in DELETE_HOLDING if t == table)
                report.count("removed", table, scrub.delete_keys(conn, table, key, keys))
            if whole:  # every row of the user, found from the schema (issue 38)
                for table, n in scrub.erase_user(conn, owner).items():
                    report.count("removed", table, n)
            else:
                report.count("removed", "memories",
                             conn.execute(query("forget_delete_memories"), ids).rowcount)
                report.count("removed", "day_table",
                             conn.execute(query("forget_delete_turns"), ids).rowcount)
                # a claim on a slot that a forgotten memory had retired holds again
                report.restored += conn.execute(query("claims_restore"), ids).rowcount
            for table, key, cols, jsons, k, new in redact:  # of rows still there
                report.count("redacted", table, scrub.rewrite(conn, table, key, cols, jsons, k, [
                    json.dumps(v) if c in jsons and v is not None else v
                    for c, v in zip(cols, new, strict=True)]))
            for eid, title, terms in episodes:  # what an episode took from the turns
                report.count("redacted", "episodes", conn.execute(
                    query("timeline_forget_episode_update"),
                    {"id": eid, "title": title, "terms": terms, "turns": turns}).rowcount)
            for run_id, user, text in briefs:  # the night cycle's briefs kept in Postgres
                conn.execute(query("forget_night_brief_update"), (text, run_id, user))
                report.count("redacted", "night_briefs", 1)
            for k, (uni, nat) in vectors.items():
                conn.execute(query("forget_block_reembed"),
                             {"id": k, "universal": uni, "native": nat})
            for table, rows in revectors.items():  # a quote cut out: new vectors and index
                for (k, _), uni, nat in rows:
                    conn.execute(query(f"forget_{table}_reembed"), {
                        "id": k, "universal": vector_text(uni), "native": vector_text(nat)})
            if quoting:  # a reply's index quotes the turn before it: rebuilt without it
                conn.execute(query("forget_reindex_turns"), (quoting,))
                report.count("redacted", "day_table_index", len(quoting))
            # the lexicon keeps a term whose last document went (df 0): a forgotten word goes
            conn.execute(query("forget_unused_terms"))
            audit.append(conn, actor, "forget", report.target, report.as_dict())
        self._blocks_touched = touched + ([None] if quoting or revectors else [])

    def _block_vectors(self, touched: list[Any],
                       redact: list[Any]) -> dict[Any, tuple[str, str]]:
        """New vectors of the blocks whose prose lost the text, from what is left."""
        from agent.domain.contextual import prose_text

        if not touched:
            return {}
        prose = {k: new[cols.index("prose")] for t, _, cols, _, k, new in redact
                 if t == "holographic_blocks"}
        texts = [prose_text(prose[k]) or " " for k in touched]
        uni = self.embed(texts)
        nat = self.embed_native(texts)
        return {k: (vector_text(u), vector_text(n))
                for k, u, n in zip(touched, uni, nat, strict=True)}

    def _episodes(self, turns: list[Any], blocks: list[Any], needles: list[str],
                  ) -> list[tuple[Any, str, list[str]]]:
        """The episodes made from forgotten turns or from blocks the text was cut out of
        (revision 0025): (id, title, terms) without the forgotten text's words (3+
        letters, any case): a heuristic title is made again from the terms left, a
        model's has those words replaced by REDACTED."""
        from agent.domain.episodes import TITLE_HEURISTIC, heuristic_title

        words = {w.lower() for n in needles for w in _WORDS.findall(n)}
        out = []
        for eid, title, terms, titled_by in self.conn.execute(
                query("timeline_forget_episodes_of_turns"), {"turns": turns,
                                                             "blocks": blocks}):
            kept = [t for t in terms if t.lower() not in words]
            out.append((eid, heuristic_title(kept) if titled_by == TITLE_HEURISTIC else
                        _WORDS.sub(lambda m: REDACTED if m.group(0).lower() in words
                                   else m.group(0), title), kept))
        return out

    def _sessions(self, owner: Any) -> list[Any]:
        return [r[0] for r in self.conn.execute(query("forget_owner_sessions"), (owner,))]

    def _holding(self, table: str, key: str, texts: Sequence[str], jsons: Sequence[str],
                 scope: str, owner: Any, sessions: list[Any], needles: list[str],
                 id_texts: list[str], whole: bool) -> list[tuple[Any, list[Any]]]:
        """(key, values) of the rows in scope whose text holds a needle or an id (all the
        owner's rows in scope when `whole`). Postgres narrows the rows (their columns as
        text hold a needle, raw or as JSON escapes it); Python checks the values."""
        # a JSON column's text escapes quotes, backslashes and control characters
        probes = sorted({*needles, *(json.dumps(n, ensure_ascii=False)[1:-1] for n in needles),
                         *id_texts})
        out = []
        for k, values, mine in scrub.rows_holding(self.conn, table, key, [*texts, *jsons],
                                                  scope, owner, sessions, probes, whole):
            if (whole and mine) or holds(values, needles) or (id_texts and holds(
                    [json.dumps(v, default=str) for v in values], id_texts)):
                out.append((k, values))
        return out

    def _after(self, report: ForgetReport) -> None:
        """Rebuild the index entries of blocks whose text was cut and of turns that quoted
        a forgotten one (their old terms leave the lexicon), then drop the terms no
        document holds any more."""
        if self._blocks_touched:
            self.reindex(self.conn)
            with self.conn.transaction():
                self.conn.execute(query("forget_unused_terms"))
        # the planner statistics sample column values (pg_stats): refreshed, so the text
        # is not kept there (issue 38)
        report.analyzed = scrub.analyze(self.conn, [
            *report.removed, *report.redacted, *ANALYZED])

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
                and holds([r["prose_text"], r["live_zones_text"], _json(r["prose"])],
                          needles))]
            if whole_user:
                gone = [r["block_id"] for r in rows if r["block_id"] in blocks
                        or (r.get("user_id") and str(r["user_id"]) == str(owner))]
                store.delete(name, gone, "block_id")
                report.cortex[f"{name}_removed"] = len(gone)
                changed |= bool(gone)
                continue
            for r in mine:
                for col in ("prose_text", "live_zones_text"):
                    r[col] = cut(r[col], needles)
                r["prose"] = _cut_json(r["prose"], needles)
            if mine:
                texts = [r["prose_text"] or " " for r in mine]
                for r, u, n in zip(mine, self.embed(texts), self.embed_native(texts),
                                   strict=True):
                    r["universal"] = [float(x) for x in u]
                    r["native"] = [float(x) for x in n]
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

    def _files(self, report: ForgetReport, needles: list[str], ids: list[str]) -> None:
        """Every text file of the night cycle's run directories under DATA_DIR/night_cycle
        (the brief, one per user or one for the run, and the run summary): a Markdown item
        that holds the start of a forgotten text or a span of it (a brief quotes excerpts,
        its whitespace folded) or names a forgotten block goes; in JSON the texts are cut,
        in any other text file too. A file that is not UTF-8 text is not cogd's."""
        root = self.data_dir / "night_cycle"
        if not root.is_dir() or not (needles or ids):
            return
        starts = [_fold(n)[:PREFIX_CHARS] for n in needles] + ids
        for path in sorted(root.rglob("*")):
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if path.suffix == ".md":
                new = _cut_items(text, starts)
            elif path.suffix == ".json":
                new = _cut_json(text, needles)
            else:
                new = cut(text, needles)
            if new != text:
                path.write_text(new, encoding="utf-8")
                report.files += 1


def _cut_items(markdown: str, starts: Sequence[str]) -> str:
    """A brief without the items that hold one of `starts` (whitespace folded)."""
    return "\n".join(f"- {REDACTED}" if holds(_fold("\n".join(item)), starts)
                     else "\n".join(item) for item in _items(markdown))


def _items(markdown: str) -> list[list[str]]:
    """A brief's lines grouped into items: a list item with its wrapped lines, a heading,
    a blank line (a quoted excerpt may wrap onto the next line)."""
    items: list[list[str]] = []
    for line in markdown.split("\n"):
        starts_item = (not line.strip() or line.lstrip().startswith(("- ", "* ", "#"))
                       or not items or not items[-1][0].strip())
        if starts_item:
            items.append([line])
        else:
            items[-1].append(line)
    return items


def _fold(text: str) -> str:
    return " ".join(text.split())


def _json(text: Any) -> Any:
    """A JSON string column (the cortex's prose, a summary file) as data, else as is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _cut_json(text: Any, needles: Sequence[str]) -> Any:
    """Cut the needles out of a JSON document's strings (escapes would hide them in its
    text), keeping it JSON; text that is not JSON is cut as text."""
    data = _json(text)
    if data is text:
        return cut(text, needles)
    return json.dumps(cut(data, needles), indent=2 if "\n" in str(text) else None,
                      ensure_ascii=False)


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
