"""Memory commands: `cogd import FILE.jsonl`, `cogd recall "query"`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Any

import click

from agent.commands.context import json_option, ready_url, settings_from
from agent.config import Settings
from agent.domain.tables import need
from agent.errors import InputError


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--user", "default_user", default="user", show_default=True,
              help="User handle for lines whose speaker is missing (a ChatGPT or Claude "
              "export: whose the user's messages are).")
@click.option("--stop-on-error", is_flag=True,
              help="Stop at the first bad line (default: report it and continue).")
@click.option("--batch-size", default=256, show_default=True, type=click.IntRange(1, 10000),
              help="Lines per transaction: one embedder call, one INSERT and one NOTIFY "
              "per batch; the next batch is embedded while this one is written.")
@click.option("--format", "fmt", default="auto", show_default=True,
              type=click.Choice(["auto", "cogd", "chatgpt", "claude", "text"]),
              help="The file's format; auto guesses it from the name and first characters "
              "(a heuristic; a .jsonl file or stdin is cogd's).")
@click.option("--assistant", "assistant", multiple=True, metavar="NAME",
              help="--format text: the speaker who is the assistant (repeatable) "
              "[default: assistant, ChatGPT, GPT, Claude, AI, bot, cogd].")
@json_option
def import_(file: Path, default_user: str, stop_on_error: bool, batch_size: int,
            fmt: str, assistant: tuple[str, ...], as_json: bool) -> int:
    """Import a conversation history in bulk: the live write path's rows and gates.

    \b
    Formats (--format, default auto):
      cogd     cogd's JSONL, one message per line: {"session", "speaker", "role",
               "content", "timestamp", "external_id", "user"}
      chatgpt  ChatGPT's conversations.json (the branch each conversation ended on;
               system, tool, hidden and non-text messages are skipped and counted)
      claude   Claude.ai's conversations.json
      text     a text or Markdown log of "Name: message" lines (one session, named
               after the file; --assistant NAME says who the assistant is). A
               heuristic: one to three words and a colon start a new speaker, so
               "Note: ..." inside a message starts one by "Note"
    auto guesses the format from the name and first characters (a heuristic).

    For cogd JSONL, `speaker` (who said it) is stored and indexed; `user` is the
    account the session belongs to. Idempotent on external_id: importing a file twice
    adds nothing, and an interrupted import run again continues where it stopped (each batch
    is one transaction). On a terminal a progress bar shows the rate and the time left. A bad
    JSONL line is reported with its line number and skipped (or, with
    --stop-on-error, stops the import; lines before it stay imported). A ChatGPT, Claude or
    text file is read whole first: a truncated or foreign one is refused with one line
    naming the line or node, and nothing is written.
    """
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.access.import_formats import detect_format, parse_file, read_text_file
    from agent.services.access.importer import Importer, ImportReport, read_lines

    settings = settings_from()
    if str(file) != "-" and not file.exists():
        raise InputError(f"{file}: no such file")
    parsed = None
    if fmt != "cogd" and not (fmt == "auto" and (str(file) == "-"
                                                 or file.suffix.lower() == ".jsonl")):
        # read and validated whole before anything is written (import_formats.py)
        text = sys.stdin.read() if str(file) == "-" else read_text_file(file)
        if fmt == "auto":
            fmt = detect_format(file, text)
        if fmt != "cogd":
            parsed = parse_file(Path("stdin") if str(file) == "-" else file, fmt,
                                default_user, assistant, text=text)
    url = ready_url(settings)
    writer = Runtime(settings).turn_writer()
    report = ImportReport()
    if parsed is not None:
        report.lines = len(parsed.lines)
        with connect(url, app="cogd-import", autocommit=True) as conn:
            _run_import(Importer(conn, writer, default_user, batch_size),
                        iter(parsed.lines), report, len(parsed.lines),
                        not as_json and sys.stderr.isatty())
        return _import_summary(report, as_json, parsed.format,
                               dict(sorted(parsed.skipped.items())))
    stream: IO[str]
    if str(file) == "-":
        stream = sys.stdin
        total = None
    else:
        stream = file.open(encoding="utf-8", errors="replace")
        total = sum(1 for line in file.open(encoding="utf-8", errors="replace") if line.strip())
    show = not as_json and sys.stderr.isatty()
    with connect(url, app="cogd-import", autocommit=True) as conn:
        lines = read_lines(stream, default_user, report, stop_on_error)
        _run_import(Importer(conn, writer, default_user, batch_size), lines, report, total,
                    show)
    if stream is not sys.stdin:
        stream.close()
    return _import_summary(report, as_json, "cogd", {})


def _run_import(importer: Any, lines: Any, report: Any, total: int | None, show: bool) -> None:
    """Run an import; on a terminal, a rich progress bar with the rate and the time left."""
    if not show:
        importer.run(lines, report)
        return
    import time

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    start = time.monotonic()
    with Progress(TextColumn("importing"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"),
                  TimeRemainingColumn(), console=Console(stderr=True)) as bar:
        task = bar.add_task("import", total=total, rate="")

        def advance(n: int) -> None:
            done = bar.tasks[0].completed + n
            rate = done / max(time.monotonic() - start, 1e-9)
            bar.update(task, advance=n, rate=f"{rate:.0f} lines/s")

        importer.run(lines, report, progress=advance)


def _import_summary(report: Any, as_json: bool, fmt: str, skipped: dict[str, int]) -> int:
    """The import's summary: one line, or --json's object (with the format read and the
    messages skipped, by reason)."""
    data = {**report.as_dict(), "format": fmt, "skipped": skipped}
    if as_json:
        click.echo(json.dumps(data))
    else:
        for err in report.errors[:20]:
            click.echo(f"cogd: skipped {err}", err=True)
        if len(report.errors) > 20:
            click.echo(f"cogd: ... and {len(report.errors) - 20} more bad lines", err=True)
        if fmt == "cogd":
            click.echo(f"imported {report.inserted} turns, {report.duplicates} already "
                       f"present, {len(report.errors)} bad lines skipped, {report.scratched} "
                       f"flagged to scratch_buffer ({report.lines} lines read)")
        else:
            left = ", ".join(f"{n} {why}" for why, n in skipped.items()) or "none"
            click.echo(f"imported {report.inserted} turns from a {fmt} export, "
                       f"{report.duplicates} already present, {len(report.errors)} refused, "
                       f"{report.scratched} flagged to scratch_buffer ({report.lines} "
                       f"messages read; skipped: {left})")
    return 0


@click.command()
@click.argument("query", required=False)
@click.option("-k", "k", type=click.IntRange(1, 200), default=None,
              help="How many items [default: config recall.top_k].")
@click.option("--queries", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="A file with one query per line (`-`: read them from stdin); prints one "
              "JSON line per query, its `line` field the query's line number.")
@click.option("--verify", is_flag=True,
              help="Verification mode: the stricter threshold for claims a reply relies on.")
@click.option("--no-log", is_flag=True, help="Do not write recall_log rows (with --level 0: "
              "nor the cortex blocks' reconsolidation).")
@click.option("--level", type=click.IntRange(0, 3), default=None,
              help="Search the cortex at one RAPTOR level instead (seed 001 §5.4): 0 = blocks, "
              "1 branch, 2 trunk, 3 canopy cluster nodes. With --user: level 0 only (a "
              "cluster node summarises blocks of several users); not with --verify or "
              "--as-of.")
@click.option("--user", "user", default=None, metavar="HANDLE",
              help="Only this user's memories (what the loop recalls for them); default: "
              "every user's.")
@click.option("--as-of", "as_of", default=None, metavar="ISO-TIME",
              help="Ask as if at this time (ISO 8601 with a zone): 'last week' and 'in May' "
              "resolve against it, recency counts from it [default: now].")
@json_option
def recall(query: str | None, k: int | None, queries: Path | None, verify: bool,
           no_log: bool, level: int | None, user: str | None, as_of: str | None,
           as_json: bool) -> int:
    """What memory returns for a query: items with id, kind, content, score, a verdict
    (strong_match / weak_match / no_match) and their sources (day_table entry ids and
    external ids). The same pipeline the loop uses, which scopes recall to the user it
    talks to; this searches every user's memories unless --user names one. With
    --level N: the cortex's blocks (0) or cluster nodes (1-3) nearest the query.
    """
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.access.introspect import format_recall, recall_payload
    from agent.services.records.sessions import user_by_handle

    if (query is None) == (queries is None):
        raise InputError("give a query, or --queries FILE (one query per line), not both")
    if query is not None and not query.strip():
        raise InputError("the query is empty")
    now = _as_of(as_of)
    if level is not None and (verify or as_of is not None):
        raise InputError("--level searches the cortex by vector alone: --verify and "
                         "--as-of apply to the recall pipeline (drop --level)")
    if level is not None and level != 0 and user is not None:
        raise InputError(f"--level {level} with --user: a cluster node summarises blocks "
                         "of several users; use --level 0 (that user's blocks and those "
                         "of no user) or drop --user")
    settings = settings_from()
    url = ready_url(settings)
    if level is not None:
        return _recall_level(settings, url, query, queries, level, k, as_json, user,
                             not no_log)
    recaller = Runtime(settings).recaller()
    with connect(url, app="cogd-recall", autocommit=True) as conn:
        user_id = None
        if user is not None:
            user_id = user_by_handle(conn, user)
        if query is not None:
            out = recaller.recall(conn, query, k=k, verify=verify, log=not no_log,
                                  user_id=user_id, now=now)
            payload = recall_payload(out)
            if out.cortex_events:
                payload["reconsolidation"] = out.cortex_events
            click.echo(json.dumps(payload, default=str) if as_json else format_recall(payload))
            return 0
        assert queries is not None
        src = sys.stdin if str(queries) == "-" else queries.open(encoding="utf-8",
                                                                 errors="replace")
        for lineno, line in enumerate(src, start=1):
            text = line.strip()
            if not text:
                continue
            out = recaller.recall(conn, text, k=k, verify=verify, log=not no_log,
                                  user_id=user_id, now=now)
            click.echo(json.dumps({"line": lineno, **recall_payload(out)}, default=str))
    return 0


def _as_of(value: str | None) -> Any:
    """--as-of as an aware datetime, or None (now)."""
    from datetime import datetime

    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--as-of {value!r} is not an ISO 8601 time "
                         "(e.g. 2023-06-01T12:00:00+00:00)") from None
    if when.tzinfo is None:
        raise InputError(f"--as-of {value!r} has no time zone (add +00:00 or Z)")
    return when


@click.command()
@click.option("--all", "everything", is_flag=True,
              help="Rebuild every row, not only those missing an index entry or built by "
                   "an older recipe (e.g. after changing the universal embedding model).")
@click.option("--batch-size", default=256, show_default=True, type=click.IntRange(1, 10000),
              help="Rows per transaction.")
@json_option
def reindex(everything: bool, batch_size: int, as_json: bool) -> int:
    """Rebuild the contextual index: each turn's index text ("(8 May 2023) Ana said,
    ..."), its universal vector and its BM25 lexicon entry; memories' and holographic
    blocks' lexicon entries. Rows written since revision 0007 by the current recipe are
    skipped (unless --all), but for turns still without their contextual vector (the
    loop embeds it after its reply commits; a crash in between leaves it to this command
    or the next loop turn). Content is never changed. Safe to interrupt and run again.
    """
    from agent.db.connect import connect
    from agent.runtime import Runtime

    settings = settings_from()
    url = ready_url(settings)
    indexer = Runtime(settings).indexer()
    show = not as_json and sys.stderr.isatty()
    with connect(url, app="cogd-reindex", autocommit=True) as conn:
        if show:
            total = sum(indexer.pending(conn).values())
            with click.progressbar(length=total, label="reindexing", file=sys.stderr) as bar:
                report = indexer.run(conn, everything=everything, batch=batch_size,
                                     progress=lambda _kind, n: bar.update(n))
        else:
            report = indexer.run(conn, everything=everything, batch=batch_size)
    data = report.as_dict()
    if as_json:
        click.echo(json.dumps(data))
    else:
        done = ", ".join(f"{n} {kind}" for kind, n in data["indexed"].items())
        click.echo(f"indexed {done} (recipe {data['recipe_version']})")
    return 0


def _recall_level(settings: Settings, url: str, query: str | None, queries: Path | None,
                  level: int, k: int | None, as_json: bool, user: str | None,
                  reconsolidate: bool) -> int:
    """`cogd recall --level N`: nearest cortex blocks (0) or RAPTOR nodes (1-3). With a
    user (level 0 only): that user's blocks and blocks of no user, as the loop's recall."""
    from agent.cortex.lance import cortex_uri
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.records.sessions import user_by_handle

    rt = Runtime(settings)
    universal = rt.universal
    store = rt.cortex.store()
    if store is None:
        raise InputError(f"no cortex at {cortex_uri(settings)} yet: `cogd night-cycle` builds "
                         "it (cortex blocks, then cluster levels 1-3)")
    texts: list[tuple[int, str]] = [(0, query)] if query is not None else []
    if queries is not None:
        src = sys.stdin if str(queries) == "-" else queries.open(encoding="utf-8",
                                                                 errors="replace")
        texts = [(n, line.strip()) for n, line in enumerate(src, start=1) if line.strip()]
    with connect(url, app="cogd-recall", autocommit=True) as conn:
        user_id = None if user is None else str(user_by_handle(conn, user))
        for lineno, text in texts:
            qvec = [float(x) for x in universal.embed_query(text)]
            items = store.search_level(qvec, level, k or 10, user_id=user_id)
            events = (store.reconsolidate(conn, [i["id"] for i in items])
                      if level == 0 and reconsolidate and items else [])
            payload: dict[str, Any] = {"query": text, "level": level, "items": items}
            if events:
                payload["reconsolidation"] = events
            if queries is not None:
                payload = {"line": lineno, **payload}
            if as_json or queries is not None:
                click.echo(json.dumps(payload, default=str))
                continue
            click.echo(f"level {level}: {len(items)} item(s)")
            for i in items:
                extra = (f" ({i['leaf_count']} blocks, parent {i['parent'] or '-'})"
                         if level else "")
                text_ = " ".join(str(i["content"]).split())
                click.echo(f"  {i['similarity']:.3f}  {i['id']}{extra}  "
                           f"{text_[:157] + '...' if len(text_) > 160 else text_}")
    return 0


@click.command()
@click.argument("target")
@click.option("--user", "handle", default=None, metavar="HANDLE",
              help="Explain as this user sees it: only their memories and those of no "
              "user, another user's memory in a chain shown without its text. Without "
              "--user: every user's memories (the operator's view).")
@json_option
def why(target: str, handle: str | None, as_json: bool) -> int:
    """Where a memory comes from: TARGET is a memory id, or text (its best-matching
    memory; when no active memory matches, a superseded one whose text contains TARGET,
    with the insight that now holds it). Walks `supersedes` links from insights to their
    sources and down to the day_table turns they were made from. Then the reasoning
    trails (decisions) of those memories and turns, or whose text matches TARGET:
    "Decision / Considered (why not) / Because / Outcome (win|loss|partial)".

    The same answer as the REPL's /why, GET /v1/memories/{id}/why and the MCP tool
    `why`, which are always scoped to their caller's user; this command sees every
    user's memories unless --user names one. --json: {user, memory_id, chain, trails}.
    """
    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.access.introspect import why as explain
    from agent.services.access.introspect import why_lines
    from agent.services.records.sessions import user_by_handle

    if not target.strip():
        raise InputError("give a memory id or some text")
    settings = settings_from()
    url = ready_url(settings)
    rt = Runtime(settings)
    with connect(url, app="cogd-why", autocommit=True) as conn:
        user_id = None if handle is None else user_by_handle(conn, handle.strip())
        found = explain(conn, rt.decision_tracker(), rt.recaller(), target, user_id=user_id,
                        handle=None if handle is None else handle.strip())
    if as_json:
        click.echo(json.dumps(found))
        return 0
    for line in why_lines(found):
        click.echo(line)
    return 0


@click.command()
@click.option("--all", "show_all", is_flag=True, help="Include decided proposals.")
@json_option
def proposals(show_all: bool, as_json: bool) -> int:
    """Layer 0 (identity) proposals from consolidation, waiting for approval."""
    from agent.db.connect import connect
    from agent.services.records.identity import list_proposals

    url = ready_url(settings_from())
    with connect(url, app="cogd-proposals", autocommit=True) as conn:
        items = list_proposals(conn, include_decided=show_all)
    if as_json:
        click.echo(json.dumps(items, default=str))
    elif not items:
        click.echo("no pending proposals")
    for p in items if not as_json else []:
        flag = "SUSPECT: " if (p["evidence"] or {}).get("suspect") else ""
        click.echo(f"{p['id']}  L{p['layer']} {p['kind']} [{p['status']}] {flag}"
                   f"{p['payload'].get('description', '')[:120]}  evidence: {p['evidence']}")
    return 0


def _decide(proposal_id: str, approve: bool) -> str:
    import getpass
    import uuid

    from agent.db.connect import connect
    from agent.services.records.identity import decide_proposal

    try:
        pid = uuid.UUID(proposal_id)
    except ValueError:
        raise InputError(f"{proposal_id!r} is not a proposal id (see `cogd proposals`)") from None

    url = ready_url(settings_from(), owner=True)
    with connect(url, app="cogd-proposals", autocommit=True) as conn:
        return decide_proposal(conn, pid, approve, getpass.getuser())


@click.command()
@click.argument("proposal_id")
def approve(proposal_id: str) -> int:
    """Approve a Layer 0 proposal: the value enters identity (audit-logged)."""
    click.echo(f"proposal {proposal_id} {_decide(proposal_id, True)}")
    return 0


@click.command()
@click.argument("proposal_id")
def reject(proposal_id: str) -> int:
    """Reject a Layer 0 proposal (kept, marked rejected, audit-logged)."""
    click.echo(f"proposal {proposal_id} {_decide(proposal_id, False)}")
    return 0


@click.group(invoke_without_command=True)
@click.pass_context
def goals(ctx: click.Context) -> None:
    """Layer 1 goals and their weights; `cogd goals reset` undoes runaway weights."""
    if ctx.invoked_subcommand is None:
        from agent.db.connect import connect
        from agent.services.access.introspect import goals_text

        url = ready_url(settings_from())
        with connect(url, app="cogd-goals", autocommit=True) as conn:
            click.echo(goals_text(conn))


@goals.command("reset")
@click.argument("name", required=False)
def goals_reset(name: str | None) -> int:
    """Reset goal weights (all, or NAME) to the promoted initial weight (compulsion safety's
    manual reset). Logged in goals_history and audit_log."""
    import getpass

    from agent.db.connect import connect

    settings = settings_from()
    weight = float(need(settings.goals, "promoted_initial_weight"))
    url = ready_url(settings)
    from agent.services.records.identity import reset_goals

    with connect(url, app="cogd-goals", autocommit=True) as conn:
        count = reset_goals(conn, name, weight, getpass.getuser())
    click.echo(f"reset {count} goal(s) to {weight}")
    return 0


@click.command("export")
@click.option("--user", "handle", required=True, metavar="HANDLE", envvar="COGD_USER",
              show_envvar=True, help="Whose conversation (a user handle).")
@click.option("--output", default="-", show_default=True, envvar="COGD_EXPORT_OUTPUT",
              show_envvar=True,
              type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="The JSONL file, written whole or not at all (a temp file renamed over "
              "it), mode 0600; '-': stdout.")
@json_option
def export(handle: str, output: Path, as_json: bool) -> int:
    """Write one user's conversation as JSONL that `cogd import` reads back.

    Every day_table turn of the user's (the turn's user, else its session's), oldest
    first, one import-format line each: {"session", "speaker", "role", "content",
    "timestamp", "external_id", "user"}. `session` is the session's key (its external id,
    else its uuid); `external_id` is the turn's own, else "cogd:<entry_id>", so importing
    the file again, here or elsewhere, adds nothing; timestamps are UTC ISO 8601.

    Exported: dialogue, and explicit /remember turns (the user's own words; they come back
    as ordinary dialogue: the import format has no message type). Left out: internal
    monologue and epiphanies, the agent's own notes, which an import would turn into
    things said. Memories, insights and the cortex are not exported: consolidation and
    the night cycle derive them again from the imported turns.

    With --output FILE, --json prints {"user", "turns", "sessions", "path", "skipped"}
    (else one line). With --output - the JSONL is stdout and no summary is printed. A
    turn `cogd import` would refuse (a key over its length limit) is left out and named
    on stderr, so the file always imports with no bad line.
    """
    import contextlib
    import os

    from agent.db.connect import connect
    from agent.services.access.exporter import ExportReport, atomic_file, exporting

    settings = settings_from()
    to_stdout = str(output) == "-"
    url = ready_url(settings)
    show = not as_json and sys.stderr.isatty()
    try:
        with connect(url, app="cogd-export", autocommit=True) as conn, \
                exporting(conn, handle) as exporter:
            report = ExportReport(exporter.handle, path=None if to_stdout else str(output))
            total = exporter.count() if show else 0
            with contextlib.ExitStack() as stack:
                out: IO[str] = (sys.stdout if to_stdout
                                else stack.enter_context(atomic_file(output)))
                if show:
                    bar = stack.enter_context(
                        click.progressbar(length=total, label="exporting", file=sys.stderr))
                    exporter.write(out, report, progress=bar.update)
                else:
                    exporter.write(out, report)
        if to_stdout:
            sys.stdout.flush()
    except BrokenPipeError:  # `cogd export --user u | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    for skipped in report.skipped[:20]:
        click.echo(f"cogd: skipped {skipped}", err=True)
    if len(report.skipped) > 20:
        click.echo(f"cogd: ... and {len(report.skipped) - 20} more turns skipped", err=True)
    if to_stdout:
        return 0
    if as_json:
        click.echo(json.dumps(report.as_dict()))
    else:
        click.echo(f"exported {report.turns} turns in {report.sessions} sessions of "
                   f"{report.user} to {output}")
    return 0


@click.command()
@click.argument("memory_id", required=False)
@click.option("--user", "handle", default=None, metavar="HANDLE",
              help="Forget everything of this user instead: turns, memories, blocks, "
              "cortex rows, sessions, tokens and the user.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (--user asks).")
@json_option
def forget(memory_id: str | None, handle: str | None, yes: bool, as_json: bool) -> int:
    """Erase a memory, and every copy or quote of what it says, everywhere cogd keeps it:
    its turn, other turns and memories holding the text, the insights built on it (their
    other sources become active again), scratch copies, recall logs, intentions, the text
    inside holographic blocks (then re-embedded), the inbox and outbox, the LanceDB
    cortex (old table versions removed from disk) and the night cycle's briefs. With
    --user, every row that refers to that user, found from the schema. An audit row
    names what was removed, never the text.

    This is the one thing cogd cannot undo (the REPL's /forget only archives). Copies
    outside cogd's data (your backups; Postgres's WAL and dead rows until VACUUM) stay.
    """
    import getpass

    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.records.sessions import user_by_handle

    if (memory_id is None) == (handle is None):
        raise InputError("give a memory id, or --user HANDLE (not both)")
    settings = settings_from()
    url = ready_url(settings)
    with connect(url, app="cogd-forget", autocommit=True) as conn:
        forgetter = Runtime(settings).forgetter(conn)
        if handle is not None:
            uid = user_by_handle(conn, handle)
            if not yes and not click.confirm(
                    f"erase everything of user {handle!r}? This cannot be undone",
                    err=True):
                raise InputError("nothing forgotten")
            report = forgetter.user(uid, getpass.getuser())
        else:
            assert memory_id is not None
            report = forgetter.memory(memory_id, getpass.getuser())
    data = report.as_dict()
    if as_json:
        click.echo(json.dumps(data))
    else:
        removed = ", ".join(f"{n} {t}" for t, n in sorted(data["removed"].items())) or "none"
        redacted = ", ".join(f"{n} {t}" for t, n in sorted(data["redacted"].items()))
        click.echo(f"forgot {data['target']}: removed {removed}"
                   + (f"; text cut from {redacted}" if redacted else "")
                   + (f"; cortex {data['cortex']}" if data["cortex"] else "")
                   + (f"; {data['files_changed']} brief files" if data["files_changed"]
                      else ""))
    return 0


COMMANDS = (import_, recall, reindex, why, proposals, approve, reject, goals, export, forget)
