"""Memory commands: `cogd import FILE.jsonl`, `cogd recall "query"`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Any

import click

from agent.commands.context import json_option, settings_from
from agent.errors import InputError


def _ready_url(settings: Any) -> str:
    """The database URL, migrated to head (the embedded server is started if needed)."""
    from agent.db.connect import preflight, resolve
    from agent.db.migrate import upgrade

    target = resolve(settings)
    preflight(target.url)
    upgrade(target.url, settings)
    return target.url


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--user", "default_user", default="user", show_default=True,
              help="User handle for lines whose speaker is missing.")
@click.option("--stop-on-error", is_flag=True,
              help="Stop at the first bad line (default: report it and continue).")
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(1, 10000),
              help="Lines per transaction (one NOTIFY per batch).")
@json_option
def import_(file: Path, default_user: str, stop_on_error: bool, batch_size: int,
            as_json: bool) -> int:
    """Import a conversation from JSONL through the live write path.

    One message per line: {"session", "speaker", "role", "content", "timestamp",
    "external_id"}. Idempotent on external_id: importing a file twice adds nothing.
    A bad line is reported with its line number and skipped (or, with
    --stop-on-error, stops the import; lines before it stay imported).
    """
    from agent.db.connect import connect
    from agent.domain.gates import EntryGateConfig
    from agent.memory.importer import Importer, ImportReport, read_lines
    from agent.memory.turns import TurnWriter
    from agent.providers import factory
    from agent.providers.text import default_counter

    settings = settings_from()
    if str(file) != "-" and not file.exists():
        raise InputError(f"{file}: no such file")
    url = _ready_url(settings)
    writer = TurnWriter(
        factory.build_universal_embedder(settings), factory.build_native_embedder(settings),
        default_counter().count, EntryGateConfig.from_table(settings.entry_gate),
    )
    report = ImportReport()
    stream: IO[str]
    if str(file) == "-":
        stream = sys.stdin
        total = None
    else:
        stream = file.open(encoding="utf-8", errors="replace")
        total = sum(1 for line in file.open(encoding="utf-8", errors="replace") if line.strip())
    show = not as_json and sys.stderr.isatty()
    with connect(url, app="cogd-import", autocommit=True) as conn:
        importer = Importer(conn, writer, default_user, batch_size)
        lines = read_lines(stream, default_user, report, stop_on_error)
        if show:
            with click.progressbar(length=total or 0, label="importing", file=sys.stderr) as bar:
                importer.run(lines, report, progress=bar.update)
        else:
            importer.run(lines, report)
    if stream is not sys.stdin:
        stream.close()
    data = report.as_dict()
    if as_json:
        click.echo(json.dumps(data))
    else:
        for err in report.errors[:20]:
            click.echo(f"cogd: skipped {err}", err=True)
        if len(report.errors) > 20:
            click.echo(f"cogd: ... and {len(report.errors) - 20} more bad lines", err=True)
        click.echo(f"imported {report.inserted} turns, {report.duplicates} already present, "
                   f"{len(report.errors)} bad lines skipped, {report.scratched} flagged to "
                   f"scratch_buffer ({report.lines} lines read)")
    return 0


@click.command()
@click.argument("query", required=False)
@click.option("-k", "k", type=click.IntRange(1, 200), default=None,
              help="How many items [default: config recall.top_k].")
@click.option("--queries", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="A file with one query per line; prints one JSON line per query.")
@click.option("--verify", is_flag=True,
              help="Verification mode: the stricter threshold for claims a reply relies on.")
@click.option("--no-log", is_flag=True, help="Do not write recall_log rows.")
@json_option
def recall(query: str | None, k: int | None, queries: Path | None, verify: bool,
           no_log: bool, as_json: bool) -> int:
    """What memory returns for a query: items with id, kind, content, score, a verdict
    (strong_match / weak_match / no_match) and their sources (day_table entry ids and
    external ids). The same pipeline the loop uses.
    """
    from agent.db.connect import connect
    from agent.memory.introspect import format_recall, recall_payload
    from agent.memory.recall import build_recaller

    if (query is None) == (queries is None):
        raise InputError("give a query, or --queries FILE (one query per line), not both")
    if query is not None and not query.strip():
        raise InputError("the query is empty")
    settings = settings_from()
    url = _ready_url(settings)
    recaller = build_recaller(settings)
    with connect(url, app="cogd-recall", autocommit=True) as conn:
        if query is not None:
            out = recaller.recall(conn, query, k=k, verify=verify, log=not no_log)
            payload = recall_payload(out)
            click.echo(json.dumps(payload, default=str) if as_json else format_recall(payload))
            return 0
        assert queries is not None
        src = sys.stdin if str(queries) == "-" else queries.open(encoding="utf-8",
                                                                 errors="replace")
        for lineno, line in enumerate(src, start=1):
            text = line.strip()
            if not text:
                continue
            out = recaller.recall(conn, text, k=k, verify=verify, log=not no_log)
            click.echo(json.dumps({"line": lineno, **recall_payload(out)}, default=str))
    return 0


COMMANDS = (import_, recall)
