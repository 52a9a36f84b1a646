"""An import keeps a session's owner across runs; a line naming another owner is a bad
line, not an import stopped (the session ownership of agent/services/records/sessions.py)."""

from __future__ import annotations

import io
import json
from typing import Any

from agent.config import Settings
from agent.runtime import Runtime
from agent.services.access.importer import Importer, ImportReport, read_lines


def load(conn: Any, settings: Settings, *lines: dict[str, Any]) -> ImportReport:
    report = ImportReport()
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    Importer(conn, Runtime(settings).turn_writer(), "importer").run(
        read_lines(io.StringIO(text), "importer", report, False), report)
    return report


def owners(conn: Any) -> dict[str, str]:
    return dict(conn.execute("SELECT s.external_id, u.handle FROM sessions s "
                             "JOIN users u USING (user_id)").fetchall())


def test_a_rerun_or_an_appended_file_keeps_the_sessions_owner(conn: Any,
                                                               settings: Settings) -> None:
    first = load(conn, settings,
                 {"session": "s1", "speaker": "Ana", "content": "I moved to Porto.",
                  "external_id": "a1"},
                 {"session": "s1", "speaker": "Ben", "content": "Porto is lovely.",
                  "external_id": "b1"})
    assert (first.inserted, first.errors) == (2, [])
    # the next run's first new line of s1 is Ben's, then an assistant's
    second = load(conn, settings,
                  {"session": "s1", "speaker": "Ben", "content": "When did you move?",
                   "external_id": "b2"},
                  {"session": "s1", "role": "assistant", "content": "Noted.",
                   "external_id": "x1"})
    assert (second.inserted, second.errors) == (2, [])
    assert owners(conn) == {"s1": "Ana"}
    stolen = load(conn, settings,
                  {"session": "s1", "user": "mallory", "content": "Mine now.",
                   "external_id": "m1"},
                  {"session": "s2", "user": "mallory", "content": "My own session.",
                   "external_id": "m2"})
    # session keys are per user (revision 0019): mallory's "s1" is her own session
    assert (stolen.inserted, stolen.errors) == (2, [])
    assert sorted(conn.execute("SELECT s.external_id, u.handle FROM sessions s JOIN users u "
                               "USING (user_id)").fetchall()) == [
        ("s1", "Ana"), ("s1", "mallory"), ("s2", "mallory")]
    assert conn.execute("SELECT count(*) FROM day_table d JOIN sessions s USING (session_id) "
                        "WHERE d.user_id <> s.user_id").fetchone() == (0,)
    # a line naming a session by the uuid of another user's session is refused
    ana_s1 = conn.execute("SELECT session_id::text FROM sessions s JOIN users u USING "
                          "(user_id) WHERE u.handle = 'Ana'").fetchone()[0]
    taken = load(conn, settings, {"session": ana_s1, "user": "mallory", "content": "Mine.",
                                  "external_id": "m3"})
    assert taken.errors == [f"line 1: session {ana_s1!r} belongs to another user"]


def test_exported_ids_are_known_in_any_case_and_malformed_ones_are_new(
        conn: Any, settings: Settings) -> None:
    load(conn, settings, {"session": "s1", "speaker": "Ana", "content": "Hello there.",
                          "external_id": "h1"})
    entry = conn.execute("SELECT entry_id::text FROM day_table").fetchone()[0]
    again = load(conn, settings,
                 {"session": "s1", "content": "Hello there.",
                  "external_id": f"cogd:{entry.upper()}"},
                 {"session": "s1", "content": "A new line.", "external_id": "cogd:zzz"},
                 {"session": "s1", "content": "Another one.", "external_id": "cogd:"})
    assert (again.duplicates, again.inserted, again.errors) == (1, 2, [])
