"""Fuzzing the input surfaces (issue #8): no crash, a clear error every time.

REPL lines (slash commands, the empty-message refusal), the write path's input
cleaning and entry gate, `cogd import` lines (the parser, and one real import of
fuzzed lines), configuration (env overrides and TOML files), and NOTIFY payloads
(the parser, and a real LISTEN round trip). Every property counts its cases and
records them through the `reliability` fixture. Hypothesis runs derandomized
(the same cases every run) with COGD_FUZZ_EXAMPLES examples per property.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pydantic import BaseModel

from agent.bus import Channel, Event, Kind, Listener, PayloadError, parse
from agent.config import Settings, load_settings
from agent.domain.gates import EntryGateConfig, entry_gate
from agent.domain.text import clean_content
from agent.errors import CogdError, ConfigError, InputError
from agent.providers.text import clean_text
from agent.services.access.importer import MAX_KEY_CHARS, ImportLine, parse_line
from agent.services.records.turns import ROLES as TURN_ROLES
from tests.acceptance.test_cli import COGD
from tests.conftest import cogd_env, make_session
from tests.faults.conftest import FUZZ_EXAMPLES, Reliability

FUZZ = hsettings(
    max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
)


@dataclass
class Tally:
    """What one property saw: every case is accepted or rejected with a clear error."""

    cases: int = 0
    accepted: int = 0
    rejected: int = 0
    crashes: int = 0  # properties that failed: an uncaught error or a broken check

    def run(self, prop: Any, reliability: Reliability | None = None,
            target: str = "") -> None:
        """Run the property; a failure is counted and recorded before it fails the test, so
        that docs/reliability.md can show a crash."""
        try:
            prop()
        except BaseException:
            self.crashes += 1
            if reliability is not None:
                self.record(reliability, target)
            raise

    def record(self, reliability: Reliability, target: str) -> None:
        reliability.add("fuzz", target=target, cases=self.cases,
                        rejected_with_clear_error=self.rejected, accepted=self.accepted,
                        crashes=self.crashes)
        assert self.crashes or self.cases == self.accepted + self.rejected


def clear(exc: BaseException) -> str:
    """The message of an error a user can act on (one line of text, never empty)."""
    assert isinstance(exc, CogdError | PayloadError), f"{type(exc).__name__}: {exc}"
    message = str(exc)
    assert message.strip() and "Traceback" not in message
    return message


def storable(text: str) -> bool:
    """Text Postgres can store: no NUL, encodable as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


# -- strategies -----------------------------------------------------------------------

ANY_CHAR = st.characters(blacklist_categories=())  # surrogates included
TEXT = st.one_of(
    st.text(max_size=80),  # any unicode but surrogates; NUL included
    st.text(ANY_CHAR, max_size=40),
    st.text(st.sampled_from(" \t\r\n\x0b\x0c\x00\u00a0\u2003\u3000\ufeff"), max_size=10),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=8), st.integers(1000, 25_000)),
)
SURROGATE_FREE = st.one_of(
    st.text(max_size=80),
    st.text(st.sampled_from(" \t\x00\u00a0\u3000x\ufeff"), max_size=6),  # blank-ish
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=8), st.integers(1000, 12_000)),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)


# -- REPL input -------------------------------------------------------------------------

SLASH = st.sampled_from(["help", "identity", "goals", "status", "recall", "why", "remember",
                         "forget", "quit", "exit", "q", "", "Recall", "forget_me"])
WITH_ARG = st.sampled_from(["recall", "why", "remember", "forget"])
SLASH_LINES = st.one_of(  # mostly commands that take an argument: that is where input goes
    st.builds(lambda c, a: f"/{c} {a}", WITH_ARG, SURROGATE_FREE),
    st.builds(lambda c, a: f"/{c} {a}", WITH_ARG, SURROGATE_FREE),
    st.builds(lambda c, s, a: f"/{c}{s}{a}", SLASH | st.text(max_size=12),
              st.sampled_from([" ", "  ", "\t", ""]), SURROGATE_FREE),
)


REFUSALS = ("usage: /", "unknown command /", "/forget needs a memory id", "no memory ")


@pytest.fixture
def chat_client(settings: Settings, db_url: str) -> Any:
    from agent.commands.chat import ChatClient

    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    client = ChatClient(settings, db_url, "fuzzer", None)
    yield client
    client.close()


def test_fuzz_repl_slash_commands(chat_client: Any, conn: Any, reliability: Reliability) -> None:
    from agent.commands.chat import _slash

    tally = Tally()

    @FUZZ
    @given(SLASH_LINES)
    def prop(line: str) -> None:
        tally.cases += 1
        out: list[str] = []
        keep_going = _slash(chat_client, line, lambda *a, **k: out.append(" ".join(map(str, a))))
        name = line[1:].partition(" ")[0]
        assert keep_going is (name not in ("quit", "exit", "q"))
        if not keep_going:
            tally.accepted += 1
            return
        assert out and all(isinstance(o, str) and o.strip() for o in out)  # always an answer
        if out[0].startswith(REFUSALS):  # a slash line never raises: refusals are echoed
            tally.rejected += 1
        else:
            tally.accepted += 1

    tally.run(prop, reliability, "REPL slash commands (_slash, real db)")
    tally.record(reliability, "REPL slash commands (_slash, real db)")


def test_fuzz_repl_empty_messages_are_refused_before_anything_is_queued(
    chat_client: Any, conn: Any, reliability: Reliability
) -> None:
    tally = Tally()

    @FUZZ
    @given(st.text(st.sampled_from(" \t\r\n\x0b\x0c\u00a0\u2003\u3000\x1c\x1d\x1e\x1f"),
                   max_size=30))
    def prop(text: str) -> None:
        tally.cases += 1
        with pytest.raises(InputError) as info:
            chat_client.send(text, timeout_s=5)
        assert "empty message" in clear(info.value)
        tally.rejected += 1

    tally.run(prop, reliability, "REPL empty message (ChatClient.send)")
    assert conn.execute("SELECT count(*) FROM inbox").fetchone() == (0,)
    tally.record(reliability, "REPL empty message (ChatClient.send)")


def test_fuzz_input_cleaning_and_entry_gate(reliability: Reliability) -> None:
    tally = Tally()
    cfg = EntryGateConfig.from_table(load_settings().entry_gate)

    @FUZZ
    @given(raw=st.one_of(TEXT, st.binary(max_size=200)), role=st.sampled_from(TURN_ROLES),
           max_chars=st.none() | st.integers(1, 5000))
    def prop(raw: str | bytes, role: str, max_chars: int | None) -> None:
        tally.cases += 1
        try:
            cleaned = clean_text(raw, max_chars=max_chars, what="message")
        except InputError as exc:
            assert "empty message" in clear(exc)
            cleaned = None
        else:
            assert "\x00" not in cleaned
            assert max_chars is None or len(cleaned) <= max_chars
            assert cleaned.strip()  # leading whitespace never fills the truncation budget
        try:
            content, notes = clean_content(raw)
        except InputError as exc:
            assert clear(exc) == "empty message: nothing to store (send some text)"
            tally.rejected += 1
            return
        assert storable(content) and content.strip()
        assert ("\x00" in (raw if isinstance(raw, str) else raw.decode("utf-8", "replace"))) == (
            "nul_bytes_replaced" in notes)
        decision = entry_gate(content, role, cfg, random.Random(7))
        assert decision.decision in ("scratch", "pass") and math.isfinite(decision.score)
        assert decision.reason
        tally.accepted += 1

    tally.run(prop, reliability, "clean_text / clean_content / entry_gate")
    tally.record(reliability, "clean_text / clean_content / entry_gate")


def test_fuzz_user_turns_are_stored_or_refused(
    settings: Settings, conn: Any, reliability: Reliability
) -> None:
    from agent.runtime import Runtime

    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    cog = Runtime(settings).cognition(rng=random.Random(7))
    sid = make_session(conn)
    tally = Tally()

    @FUZZ
    @given(TEXT)
    def prop(text: str) -> None:
        tally.cases += 1
        try:
            entry_id, returned = cog.write_user_turn(conn, sid, text)
        except InputError as exc:
            assert not text.replace("\x00", "x").strip()
            assert "empty message" in clear(exc)
            tally.rejected += 1
            return
        stored = conn.execute("SELECT content FROM day_table WHERE entry_id = %s",
                              (entry_id,)).fetchone()[0]
        assert stored == returned == clean_content(text)[0]  # NUL, surrogates replaced
        assert conn.execute("SELECT count(*) FROM gate_decisions WHERE entry_id = %s",
                            (entry_id,)).fetchone() == (1,)
        tally.accepted += 1

    tally.run(prop, reliability, "user turn write path (write_user_turn, real db)")
    tally.record(reliability, "user turn write path (write_user_turn, real db)")


def test_cogd_chat_piped_fuzzed_lines(db_url: str, tmp_path: Path,
                                      reliability: Reliability) -> None:
    rng = random.Random(2026)
    lines: list[bytes] = [
        b"hello there", b"\x00", b"nul \x00 inside", b"bad utf-8 \xff\xfe\xc3(", b"\xed\xa0\x80",
        "emoji \U0001f600 and \u202e rtl".encode(), b"x" * 200_000, b"   \t  ",
        b"/help", b"/recall \x00", b"/remember \xff my \x00 code is 12", b"/forget zzz",
        b"/why", b"/nope", b"'; DROP TABLE day_table; --", b"{\"type\": \"json\"}",
    ]
    alphabet = [chr(c) for c in range(1, 0x250)] + ["\u3042", "\U0001f600", "\ufffd"]
    for _ in range(14):
        lines.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
                     .replace("\n", " ").replace("\r", " ").encode())
    data = b"\n".join(lines) + b"\n"
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"),
                   COGD_LLM__ROLES__SYSTEM1="heuristic", COGD_LLM__ROLES__SYSTEM2="heuristic")
    proc = subprocess.run([COGD, "chat", "--user", "fuzz", "--json", "--timeout", "120"],
                          input=data, env=env, capture_output=True, timeout=300)
    stderr = proc.stderr.decode("utf-8", "replace")
    crashed = proc.returncode != 0 or "Traceback" in stderr or "internal error" in stderr
    if crashed:  # recorded before the test fails, so the report can show it
        reliability.add("fuzz", target="cogd chat (subprocess, piped fuzzed lines)",
                        cases=len(lines), rejected_with_clear_error=0, accepted=0, crashes=1)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    # what cogd reads: one message per line, decoded as its stdin decodes (surrogateescape)
    texts = [ln.decode("utf-8", "surrogateescape") for ln in lines]
    messages = [t for t in texts if t.strip() and not t.startswith("/")]
    replies = [json.loads(r) for r in proc.stdout.decode().splitlines() if r.strip()]
    assert len(replies) == len(messages), stderr
    with psycopg.connect(db_url) as c:
        rows = c.execute("SELECT status FROM inbox ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["done"] * len(messages)
    slash = sum(1 for t in texts if t.startswith("/"))
    reliability.add("fuzz", target="cogd chat (subprocess, piped fuzzed lines)",
                    cases=len(lines), rejected_with_clear_error=0,
                    accepted=len(messages) + slash,
                    skipped_blank=len(lines) - len(messages) - slash, crashes=0)


# -- cogd import lines ----------------------------------------------------------------

OFFSETS = st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-1439, 1439))
TIMESTAMPS = st.one_of(
    st.datetimes(timezones=st.just(UTC) | OFFSETS).map(lambda d: d.isoformat()),
    st.datetimes().map(lambda d: d.isoformat()),  # no time zone
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat().replace("+00:00", "Z")),
    st.text(max_size=30),
)
FIELD = st.one_of(st.text(max_size=30), st.text(ANY_CHAR, max_size=10), JSON_VALUES,
                  st.builds(lambda n: "k" * n, st.integers(MAX_KEY_CHARS - 2, MAX_KEY_CHARS + 2)))
LINE_OBJECTS = st.fixed_dictionaries({}, optional={
    "session": FIELD, "speaker": FIELD,
    "role": st.sampled_from(["user", "assistant", "system", "tool", "USER"]) | JSON_VALUES,
    "content": st.one_of(TEXT, JSON_VALUES), "timestamp": TIMESTAMPS | JSON_VALUES,
    "external_id": FIELD, "extra": JSON_VALUES,
})
VALID_OBJECTS = st.fixed_dictionaries({
    "session": st.sampled_from(["s1", "trip \u00e9t\u00e9"]) | st.text(min_size=1, max_size=20),
    "content": TEXT,
}, optional={
    "speaker": st.sampled_from(["ana", "bo"]) | st.text(max_size=12),
    "role": st.sampled_from(["user", "assistant", "system"]),
    "timestamp": TIMESTAMPS,
    "external_id": st.text(max_size=20) | st.integers(),
})
ONE_FIELD_OFF = st.builds(lambda d, k, v: {**d, k: v}, VALID_OBJECTS,
                          st.sampled_from(["session", "speaker", "role", "content", "timestamp",
                                           "external_id"]), FIELD)
RAW_LINES = st.one_of(
    VALID_OBJECTS.map(json.dumps),
    st.builds(lambda d, a: json.dumps(d, ensure_ascii=a), VALID_OBJECTS, st.booleans()),
    ONE_FIELD_OFF.map(json.dumps),
    st.builds(lambda d, a: json.dumps(d, ensure_ascii=a), LINE_OBJECTS, st.booleans()),
    JSON_VALUES.map(json.dumps),
    st.text(max_size=100),
    st.binary(max_size=100).map(lambda b: b.decode("utf-8", "replace")),
    st.builds(lambda d, k: json.dumps(d)[:k], LINE_OBJECTS, st.integers(0, 60)),  # truncated
    st.builds(lambda n, c: c * n, st.integers(1, 5000), st.sampled_from("[{")),
    st.just('{"session": "s", "content": "x", "n": ' + "9" * 5000 + "}"),  # huge integer
)


def assert_storable_line(line: ImportLine) -> None:
    """What the import writes keys with: Postgres and its unique indexes can take them."""
    for name in ("session", "speaker", "external_id"):
        value = getattr(line, name)
        assert storable(value) and value.strip() and len(value) <= MAX_KEY_CHARS, name
    assert line.role in TURN_ROLES and isinstance(line.content, str) and line.content.strip()
    if line.timestamp is not None:
        assert line.timestamp.tzinfo is not None
        line.timestamp.astimezone(UTC)  # in range once converted (psycopg reads it back)


def test_fuzz_import_line_parser(reliability: Reliability) -> None:
    tally = Tally()

    @FUZZ
    @given(raw=RAW_LINES, lineno=st.integers(1, 10**6))
    def prop(raw: str, lineno: int) -> None:
        tally.cases += 1
        try:
            line = parse_line(lineno, raw, "importer")
        except InputError as exc:
            assert clear(exc).startswith(f"line {lineno}: ")
            tally.rejected += 1
            return
        assert line.lineno == lineno
        assert_storable_line(line)
        tally.accepted += 1

    tally.run(prop, reliability, "cogd import line parser (parse_line)")
    tally.record(reliability, "cogd import line parser (parse_line)")


def fuzzed_import_file(path: Path, n: int = 300) -> list[bytes]:
    """n lines: valid turns, duplicates, and every kind of bad line (seeded, reproducible)."""
    rng = random.Random(88)
    sessions = ["s-1", "s-2", "trip \u00e9t\u00e9", "\u4f1a\u8bdd"]

    def valid(i: int) -> dict[str, Any]:
        return {"session": rng.choice(sessions), "speaker": rng.choice(["ana", "bo"]),
                "role": rng.choice(["user", "assistant"]),
                "content": f"message {i}: I prefer tea {rng.random():.3f}",
                "timestamp": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00Z",
                "external_id": f"ext-{i}"}

    bad: list[Callable[[int], bytes]] = [
        lambda i: b"not json at all",
        lambda i: b"\xff\xfe invalid utf-8 \xc3(",
        lambda i: json.dumps({**valid(i), "content": "  \t "}).encode(),
        lambda i: json.dumps({**valid(i), "session": "nul \x00 session"}).encode(),
        lambda i: json.dumps({**valid(i), "speaker": "\ud800", "role": "user"}).encode(),
        lambda i: json.dumps({**valid(i), "speaker": "   ", "role": "user"}).encode(),
        lambda i: json.dumps({**valid(i), "external_id": "e\x00" + str(i)}).encode(),
        lambda i: json.dumps({**valid(i), "session": "s" * 5000}).encode(),
        lambda i: json.dumps({**valid(i), "timestamp": "9999-12-31T23:59:59-14:00"}).encode(),
        lambda i: json.dumps({**valid(i), "timestamp": "yesterday"}).encode(),
        lambda i: json.dumps({**valid(i), "role": ["user"]}).encode(),
        lambda i: b'{"session": "s", "content": "x", "n": ' + b"9" * 5000 + b"}",
        lambda i: b"[" * 3000,
        lambda i: json.dumps([valid(i)]).encode(),
        lambda i: json.dumps(valid(i))[:40].encode(),
    ]
    odd: list[Callable[[int], bytes]] = [  # unusual but acceptable
        lambda i: json.dumps({**valid(i), "content": "nul \x00 and \ud800 inside"}).encode(),
        lambda i: json.dumps({**valid(i), "content": "long " * 20_000}).encode(),
        lambda i: json.dumps({**valid(i), "external_id": i}).encode(),
        lambda i: json.dumps({k: v for k, v in valid(i).items() if k != "external_id"}).encode(),
        lambda i: json.dumps({**valid(i), "external_id": "ext-1"}).encode(),  # a duplicate
    ]
    lines = []
    for i in range(n):
        r = rng.random()
        if r < 0.45:
            lines.append(rng.choice(bad)(i))
        elif r < 0.6:
            lines.append(rng.choice(odd)(i))
        elif r < 0.63:
            lines.append(b"   ")
        else:
            lines.append(json.dumps(valid(i), ensure_ascii=rng.random() < 0.5).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")
    return lines


def test_cogd_import_of_fuzzed_lines(db_url: str, tmp_path: Path,
                                     reliability: Reliability) -> None:
    src = tmp_path / "fuzzed.jsonl"
    lines = fuzzed_import_file(src)
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"))
    proc = subprocess.run([COGD, "import", str(src), "--json"], env=env, capture_output=True,
                          text=True, timeout=300)
    crashed = (proc.returncode not in (0, 2) or "Traceback" in proc.stderr
               or "internal error" in proc.stderr)
    if crashed:  # recorded before the test fails, so the report can show it
        reliability.add("fuzz", target="cogd import (subprocess, fuzzed file)",
                        cases=len(lines), rejected_with_clear_error=0, accepted=0, crashes=1)
    assert proc.returncode in (0, 2), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    counted = sum(1 for ln in lines if ln.strip())
    assert report["lines"] == counted
    # every line is imported, already present, or reported with its number
    assert report["inserted"] + report["duplicates"] + report["errors"] == counted
    assert report["errors"] > 0 and report["inserted"] > 0
    assert all(e.startswith("line ") for e in report["error_lines"])
    with psycopg.connect(db_url) as c:
        stored = c.execute("SELECT count(*) FROM day_table WHERE external_id IS NOT NULL"
                           ).fetchone()[0]
    assert stored == report["inserted"]
    reliability.add("fuzz", target="cogd import (subprocess, fuzzed file)", cases=counted,
                    rejected_with_clear_error=report["errors"],
                    accepted=report["inserted"] + report["duplicates"], crashes=0)


# -- configuration ----------------------------------------------------------------------

ENV_KEYS = [
    "RETRY__MAX_RETRIES", "RETRY__BASE_DELAY_S", "RETRY__JITTER", "BUS__LISTEN_TIMEOUT_S",
    "PROCESS__HEARTBEAT_INTERVAL_S", "DATABASE__CONNECT_TIMEOUT_S", "DATABASE__HNSW_M",
    "EMBEDDING__NATIVE_PROVIDER", "EMBEDDING__NATIVE_DIM", "EMBEDDING__UNIVERSAL_DIM",
    "EMBEDDING__BATCH_SIZE", "EMBEDDING__NATIVE_BASE_URL", "RERANKER__ENABLED",
    "LLM__ROLES__SYSTEM1", "LLM__ROLES__NOT_A_ROLE", "LLM__PROFILES__LOCAL__PROVIDER",
    "LLM__PROFILES__OPENAI__TEMPERATURE", "LLM__PROFILES__NEW__MAX_TOKENS",
    "LLM__PROFILES__NEW__PROVIDER", "LLM__PROFILES", "LLM__ROLES", "LLM", "RETRY",
    "ENTRY_GATE", "ENTRY_GATE__EXPLICIT_MARKER", "RECALL__TOP_K", "CONTEXT",
    "DATABASE_URL", "NOT_A_SECTION__KEY",
]
ENV_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                   max_size=30)
ENV_VALUES = st.one_of(
    ENV_TEXT, st.integers(-10**6, 10**6).map(str), st.floats().map(str),
    st.sampled_from(["true", "false", "", "{}", "[]", "null", "1e309", "-1", "0", "4001",
                     "openai", "gemini", "local", "heuristic", "nope"]),
    JSON_VALUES.map(json.dumps),
)


def named_in(message: str, keys: list[str], toml: bool = False) -> bool:
    """Whether the error names one of the injected keys (or, for TOML syntax, a line)."""
    low = message.lower()
    parts = {p for key in keys for p in key.lower().split("__") if p}
    return (toml and ("line " in low or "configuration file" in low)) or any(
        p in low for p in parts)


@pytest.fixture
def no_cogd_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No COGD_* or DATABASE_URL from the caller's environment."""
    import os

    for var in [v for v in os.environ if v.startswith("COGD_")] + ["DATABASE_URL"]:
        monkeypatch.delenv(var, raising=False)


TRUE_WORDS = ("1", "true", "yes", "on", "t", "y")  # pydantic's and _coerce's "true"


def same_value(got: Any, want: Any) -> bool:
    """Whether a loaded setting `got` is what the override `want` (env text, or a value
    inside an override's JSON) asked for: compared by the loaded value's type."""
    if isinstance(got, bool):
        return got == (want.strip().lower() in TRUE_WORDS if isinstance(want, str) else want)
    if isinstance(got, int | float):
        number = float(want.strip()) if isinstance(want, str) else float(want)
        return (math.isnan(got) and math.isnan(number)) or float(got) == number
    if isinstance(got, str):
        return got == want
    if got is None:
        return want is None or want == "null"
    if isinstance(got, list):
        items = json.loads(want) if isinstance(want, str) else want
        return len(got) == len(items) and all(map(same_value, got, items))
    # a table (a model or a dict) given whole as JSON: each key it names
    table = json.loads(want) if isinstance(want, str) else want
    return isinstance(table, dict) and all(
        same_value(setting_at(got, [str(k).lower()]), v) for k, v in table.items())


def setting_at(settings: Any, path: list[str]) -> Any:
    obj = settings
    for part in path:
        obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
    return obj


def assert_overrides_applied(loaded: Settings, env: dict[str, str]) -> None:
    """Every accepted COGD_<key> override is the loaded value (none silently ignored);
    keys that overlap (a table and a key inside it) merge, and are not compared."""
    paths = {key: key.lower().split("__") for key in env}
    for key, path in paths.items():
        if path[0] not in Settings.model_fields:
            # not a setting: the COGD_ prefix is shared (COGD_CONFIG, COGD_TEST_HOOK)
            assert not hasattr(loaded, path[0]), key
            continue
        if any(other != key and (o[:len(path)] == path or path[:len(o)] == o)
               for other, o in paths.items()):
            continue
        got = setting_at(loaded, path)
        if env[key].strip() == "null" and isinstance(got, dict | BaseModel):
            # JSON null for a whole table is read as no override: the table keeps what it
            # was without one
            got_default = setting_at(load_settings(data_dir=loaded.data_dir), path)
            assert got == got_default, (key, got)
            continue
        assert same_value(got, env[key]), (key, env[key], got)


def fuzz_env_overrides(tmp_path: Path, keys: list[str], max_size: int,
                       check: Callable[[Settings, dict[str, str]], None],
                       reliability: Reliability, target: str) -> Tally:
    """Set 1..max_size of `keys` (COGD_<key>) to fuzzed text: load_settings accepts
    (then `check` gets the settings and the overrides) or refuses with an error naming a
    key."""
    tally = Tally()

    @FUZZ
    @given(st.dictionaries(st.sampled_from(keys), ENV_VALUES, min_size=1, max_size=max_size))
    def prop(env: dict[str, str]) -> None:
        tally.cases += 1
        with pytest.MonkeyPatch.context() as mp:
            for key, value in env.items():
                mp.setenv(f"COGD_{key}", value)
            try:
                loaded = load_settings(data_dir=tmp_path)
            except ConfigError as exc:
                assert named_in(clear(exc), list(env)), (env, str(exc))
                tally.rejected += 1
                return
        check(loaded, env)
        tally.accepted += 1

    tally.run(prop, reliability, target)
    return tally


@pytest.mark.usefixtures("no_cogd_env")
def test_fuzz_config_env_overrides(tmp_path: Path, reliability: Reliability) -> None:
    target = "config: COGD_* env overrides (load_settings)"
    tally = fuzz_env_overrides(tmp_path, ENV_KEYS, 4, assert_overrides_applied, reliability,
                               target)
    tally.record(reliability, target)


def toml_value(value: Any) -> str:
    """A TOML literal for a JSON-ish value (None has no TOML form: an empty table)."""
    if value is None:
        return "{}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if not isinstance(value, float) or math.isfinite(value) else "nan"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}"
                           for k, v in value.items()) + "}"


SECTIONS = ["retry", "bus", "embedding", "database", "reranker", "llm.roles", "llm.profiles.x",
            "llm.profiles.local", "entry_gate", "process", "nonsense"]
KEYS = ["max_retries", "jitter", "native_dim", "native_provider", "provider", "model",
        "system1", "gate", "enabled", "embedded_shared_buffers", "timeout_s",
        "explicit_marker", "what"]


@pytest.mark.usefixtures("no_cogd_env")
def test_fuzz_config_toml_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                reliability: Reliability) -> None:
    path = tmp_path / "user.toml"
    monkeypatch.setenv("COGD_CONFIG", str(path))
    tally = Tally()
    tables = st.dictionaries(st.sampled_from(SECTIONS),
                             st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=3),
                             min_size=1, max_size=3)

    @FUZZ
    @given(st.one_of(tables.map(lambda t: "\n".join(
        f"[{section}]\n" + "\n".join(f"{k} = {toml_value(v)}" for k, v in body.items())
        for section, body in t.items())), st.text(max_size=200)), st.booleans())
    def prop(text: str, as_bytes_junk: bool) -> None:
        tally.cases += 1
        data = text.encode("utf-8", "surrogatepass")
        path.write_bytes(data + (b"\n\xff\xfe" if as_bytes_junk else b""))
        try:
            loaded = load_settings(data_dir=tmp_path)
        except ConfigError as exc:
            keys = [s.replace(".", "__") for s in SECTIONS] + KEYS
            assert named_in(clear(exc), keys, toml=True), (text, str(exc))
            tally.rejected += 1
            return
        assert isinstance(loaded, Settings)
        tally.accepted += 1

    tally.run(prop, reliability, "config: TOML file (COGD_CONFIG)")
    tally.record(reliability, "config: TOML file (COGD_CONFIG)")


# -- NOTIFY payloads --------------------------------------------------------------------

CHANNELS = st.one_of(st.sampled_from([c.value for c in Channel]), st.text(max_size=20))
PAYLOADS = st.one_of(
    st.text(max_size=100),
    JSON_VALUES.map(json.dumps),
    st.fixed_dictionaries({}, optional={"type": JSON_VALUES, "id": JSON_VALUES,
                                        "extra": JSON_VALUES}).map(json.dumps),
    st.builds(lambda t, i: json.dumps({"type": t, "id": i}), st.text(max_size=20),
              st.text(max_size=20) | st.integers()),
    st.builds(lambda n: '{"type": "x", "id": "' + "y" * n + '"}', st.integers(400, 600)),
    st.builds(lambda n: "[" * n, st.integers(1, 600)),
)


def test_fuzz_notify_payload_parser(reliability: Reliability) -> None:
    tally = Tally()

    @FUZZ
    @given(CHANNELS, PAYLOADS)
    def prop(channel: str, payload: str) -> None:
        tally.cases += 1
        try:
            event = parse(channel, payload)
        except PayloadError as exc:
            clear(exc)
            tally.rejected += 1
            return
        assert isinstance(event, Event) and event.channel.value == channel
        assert isinstance(event.type, str) and event.type and isinstance(event.id, str)
        tally.accepted += 1

    tally.run(prop, reliability, "bus.parse (NOTIFY payloads)")
    tally.record(reliability, "bus.parse (NOTIFY payloads)")


def test_fuzz_notify_round_trip_through_a_real_listener(
    db_url: str, conn: Any, reliability: Reliability
) -> None:
    listener = Listener(lambda: psycopg.connect(db_url, autocommit=True), [Channel.TURN])
    listener.start()
    tally = Tally()
    try:
        @FUZZ
        @given(PAYLOADS.map(lambda p: p.replace("\x00", "")))  # Postgres text holds no NUL
        def prop(payload: str) -> None:
            tally.cases += 1
            try:
                expected: Event | None = parse(Channel.TURN.value, payload)
            except PayloadError:
                expected = None
            before = listener.bad_payloads
            conn.execute("SELECT pg_notify(%s, %s)", (Channel.TURN.value, payload))
            events = listener.wait(10.0)  # returns as soon as the notification arrives
            if expected is None:
                assert events == [] and listener.bad_payloads == before + 1
                tally.rejected += 1
            else:
                assert events == [expected] and listener.bad_payloads == before
                tally.accepted += 1

        tally.run(prop, reliability, "LISTEN round trip (pg_notify → Listener, real db)")
        # after all the junk, a valid event still arrives
        conn.execute("SELECT pg_notify(%s, %s)",
                     (Channel.TURN.value, Event(Channel.TURN, Kind.TURN, "42").payload()))
        assert listener.wait(10.0) == [Event(Channel.TURN, Kind.TURN, "42")]
        assert listener.bad_payloads == tally.rejected and listener.reconnects == 0
    finally:
        listener.close()
    tally.record(reliability, "LISTEN round trip (pg_notify → Listener, real db)")



def _seed_keys() -> list[str]:
    """Every scalar or list key of the seed tables in config/default.toml, as env names."""
    from agent.config import SEED_TABLES, _seed_defaults

    defaults = _seed_defaults()
    return sorted(f"{t.upper()}__{k.upper()}" for t in SEED_TABLES
                  for k, v in defaults.get(t, {}).items() if not isinstance(v, dict))


SEED_KEYS = _seed_keys()


def domain_configs(settings: Settings) -> None:
    """Build every config the workers build from the seed tables."""
    from agent.domain import consolidation, dmn, night_blocks, night_flux, night_salience
    from agent.services.conversation.cognition import CognitionConfig

    CognitionConfig.from_settings(settings)
    consolidation.ConsolidationConfig.from_table(settings.consolidation)
    consolidation.SafetyConfig.from_table(settings.compulsion_safety)
    dmn.DmnConfig.from_table(settings.idle)
    night_flux.FluxConfig.from_table(settings.night_cycle)
    night_blocks.BlockConfig.from_table(settings.night_cycle)
    night_salience.SalienceConfig.from_table(settings.night_cycle)


@pytest.mark.usefixtures("no_cogd_env")
def test_fuzz_seed_table_values(tmp_path: Path, reliability: Reliability) -> None:
    """The seed tables ([recall], [entry_gate], ...) are plain tables: a value of the wrong
    type or sign is refused by load_settings, naming the key, and whatever it accepts
    builds every domain config without error (it used to crash at first use:
    `COGD_RECALL__RRF_K=abc cogd recall x` was an internal error)."""
    assert len(SEED_KEYS) > 100
    domain_configs(load_settings(data_dir=tmp_path))  # the defaults themselves
    target = "config: seed tables via env, then every domain config"
    def check(loaded: Settings, env: dict[str, str]) -> None:
        domain_configs(loaded)
        assert_overrides_applied(loaded, env)

    tally = fuzz_env_overrides(tmp_path, SEED_KEYS, 3, check, reliability, target)
    tally.record(reliability, target)
