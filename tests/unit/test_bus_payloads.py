"""NOTIFY payloads: tiny {type, id} JSON; anything else is refused with a reason."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.bus import KINDS, Channel, Event, Kind, PayloadError, parse


def test_round_trip() -> None:
    event = Event(Channel.TURN, Kind.TURN, "42")
    assert parse(Channel.TURN.value, event.payload()) == event
    assert parse(Channel.TURN.value, event.payload()).type is Kind.TURN


def test_every_kind_a_channel_carries_round_trips() -> None:
    for channel, kinds in KINDS.items():
        for kind in kinds:
            assert parse(channel.value, Event(channel, kind, "1").payload()).type is kind


def test_channels_carry_a_version() -> None:
    assert all(c.value.startswith("cogd_") and c.value.endswith("_v1") for c in Channel)


@pytest.mark.parametrize(
    ("channel", "payload", "reason"),
    [
        ("cogd_turn_v1", "not json", "not JSON"),
        ("cogd_turn_v1", "[1, 2]", "not a JSON object"),
        ("cogd_turn_v1", '{"type": "x"}', "needs a string 'type'"),
        ("cogd_turn_v1", '{"type": 3, "id": 1}', "needs a string 'type'"),
        ("cogd_turn_v9", '{"type": "x", "id": 1}', "unknown channel"),
        ("cogd_turn_v1", '{"type": "x", "id": "' + "a" * 600 + '"}', "over 512 bytes"),
        ("cogd_turn_v1", '{"type": "inbox", "id": 1}', "unknown event type 'inbox'"),
        ("cogd_control_v1", '{"type": "reconnectd", "id": 1}', "carries: .*reconnected"),
    ],
)
def test_bad_payloads_are_refused(channel: str, payload: str, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason):
        parse(channel, payload)


@given(st.text(max_size=2000))
def test_any_text_parses_or_is_refused_cleanly(payload: str) -> None:
    try:
        event = parse(Channel.INBOX.value, payload)
    except PayloadError:
        return
    assert event.type and isinstance(event.id, str)


def test_consolidation_counts_turns_not_the_listeners_reconnect_event() -> None:
    """After a reconnect the listener hands back a synthetic CONTROL `reconnected` event;
    it must not shorten consolidation's interval as if a turn had been written."""
    from agent.bus import Channel, Event, Kind
    from agent.config import load_settings
    from agent.workers.consolidate import ConsolidationWorker

    worker = ConsolidationWorker(load_settings(), "postgresql://unused")
    worker.turns_since = 0
    worker.poll = lambda: None  # type: ignore[method-assign]
    worker.handle([Event(Channel.CONTROL, Kind.RECONNECTED, "1"),
                   Event(Channel.TURN, Kind.TURN, "a"), Event(Channel.TURN, Kind.TURN, "b")])
    assert worker.turns_since == 2


def test_a_second_signal_during_the_first_only_sets_the_stop_flag() -> None:
    """The handler logs nothing (a log call re-entered by a second SIGTERM mid-import
    raised into the work and never set the flag); the loop says which signal it was."""
    import os
    import signal as sig
    import threading

    from agent.config import load_settings
    from agent.workers.idle import IdleWorker

    settings = load_settings()
    settings.process.shutdown_grace_s = 0.05
    worker = IdleWorker(settings, "postgresql://unused")
    before = sig.getsignal(sig.SIGTERM)
    try:
        worker.install_signal_handlers()
        os.kill(os.getpid(), sig.SIGTERM)
        os.kill(os.getpid(), sig.SIGTERM)
        assert worker.stop.is_set() and worker.signalled == sig.SIGTERM
        # the shutdown thread gives up without ending this process: run() never started,
        # so nothing is in hand (it once ended the whole test session with status 3)
        shutdown = [t for t in threading.enumerate() if t.name == "idle-shutdown"]
        assert len(shutdown) == 1
        shutdown[0].join(5)
        assert not shutdown[0].is_alive()
    finally:
        sig.signal(sig.SIGTERM, before)
        sig.signal(sig.SIGINT, sig.default_int_handler)


def test_a_supervised_worker_stops_when_its_supervisor_is_gone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The stop comes from a thread that watches the parent, not only from the SIGTERM
    handler (which runs only when the main thread is back in Python): a worker whose
    supervisor (COGD_SUPERVISOR_PID) is not its parent sets its stop within a poll or two;
    one whose supervisor is its parent does not."""
    import os
    import signal as sig
    import time

    from agent.config import load_settings
    from agent.workers.base import SUPERVISOR_PID_ENV
    from agent.workers.idle import IdleWorker

    settings = load_settings()
    settings.process.shutdown_grace_s = 0.05
    before = sig.getsignal(sig.SIGTERM)
    try:
        monkeypatch.setenv(SUPERVISOR_PID_ENV, str(os.getppid()))  # alive: our parent
        kept = IdleWorker(settings, "postgresql://unused")
        kept.install_signal_handlers()
        monkeypatch.setenv(SUPERVISOR_PID_ENV, str(os.getpid()))  # not our parent: gone
        orphan = IdleWorker(settings, "postgresql://unused")
        orphan.install_signal_handlers()
        assert orphan.stop.wait(5) and orphan.signalled == sig.SIGTERM
        time.sleep(1.5)  # more than a poll
        assert not kept.stop.is_set()
        kept.stopped.set()  # ends its watcher
    finally:
        sig.signal(sig.SIGTERM, before)
        sig.signal(sig.SIGINT, sig.default_int_handler)
