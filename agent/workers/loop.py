"""The cognitive loop worker: inbox → one turn of agent/services/conversation/cognition.py → outbox.

The protocol (claim under a lease, renewal, partial replies, the reply committed only
while the claim is still ours, failures answered with a clear error) is agent/inbox.py;
this worker runs it: it claims, and hands the turn `inbox.delivery(msg)`, which holds and
completes the row inside the turn's commit; it fails what the turn could not answer.
The user turn is committed to day_table with its embeddings before any model runs and is
keyed by inbox_id (unique with the role), so a takeover continues the turn instead of
writing it twice.
"""

from __future__ import annotations

import logging
import os
import threading
import time

import psycopg

from agent import inbox
from agent.bus import Channel
from agent.errors import CogdError, InputError
from agent.testhooks import fault_hook
from agent.workers.base import EXIT_STUCK, Worker

logger = logging.getLogger(__name__)


class LoopWorker(Worker):
    name = "loop"
    channels = (Channel.INBOX,)
    turn_since: float | None = None  # monotonic start of the turn in hand

    def setup(self) -> None:
        self.runtime.record_calls()
        # recall's largest dense list runs on a pooled connection beside the others
        self.cognition = self.runtime.cognition(side=self.pool.connection)
        self.lease_s = float(self.settings.process.inbox_lease_s)
        self.max_attempts = int(self.settings.process.inbox_max_attempts)
        self.keeper = inbox.LeaseKeeper(self.pool.connection, self.lease_s,
                                        name=f"{self.app}-lease")
        self.publisher = inbox.PartialPublisher(self.pool.connection)

    def run(self) -> int:
        """The worker's loop, with the recall warm-up beside it ([recall] warm_queries);
        as a process of its own (`cogd loop`), also the turn watchdog."""
        threading.Thread(target=self.warm, name=f"{self.name}-warm", daemon=True).start()
        if threading.current_thread() is threading.main_thread():
            threading.Thread(target=self.watch_turns, name=f"{self.name}-turns",
                             daemon=True).start()
        return super().run()

    def watch_turns(self) -> None:
        """A turn running past [process] turn_timeout_s ends the process, as a crash
        would: its claim dies with its connection, the next loop (`cogd up` restarts this
        one) takes the message over with its attempt counted, and past [process]
        inbox_max_attempts the message is failed. An in-process loop (`cogd chat`,
        `cogd serve`) has no watchdog: a thread cannot be stopped from outside."""
        limit = float(self.settings.process.turn_timeout_s)
        while not self.stopped.wait(1.0):
            since = self.turn_since
            if since is not None and time.monotonic() - since > limit:
                logger.error("loop: a turn ran past [process] turn_timeout_s (%.0f s); "
                             "exiting, as a crash would (the message is taken over, its "
                             "attempt counted)", limit)
                logging.shutdown()
                os._exit(EXIT_STUCK)

    def warm(self) -> None:
        """Read memories' HNSW index into shared_buffers once, on a connection of its own
        (agent/services/memory/recall.py's warm): turns are answered meanwhile. A failure only
        costs the warm-up."""
        from agent.db.connect import app_role, application_name, connect
        from agent.domain.recall import RecallConfig
        from agent.services.memory.recall import warm

        cfg = RecallConfig.from_table(self.settings.recall)
        if cfg.warm_queries <= 0:
            return
        started = time.monotonic()
        try:
            with connect(self.url, app=application_name(self.settings, f"{self.name}-warm"),
                         autocommit=True, role=app_role(self.settings)) as conn:
                done = warm(conn, cfg)
        except (psycopg.Error, CogdError) as exc:
            logger.warning("loop: recall warm-up skipped: %s", exc)
            return
        logger.info("loop: recall warm-up: %d searches of memories' HNSW index in %.1f s",
                    done, time.monotonic() - started)

    def teardown(self) -> None:
        keeper = getattr(self, "keeper", None)  # absent when setup failed before it
        if keeper is not None:
            keeper.close()

    def poll(self) -> None:
        while not self.stop.is_set() and self.process_one():
            pass

    def process_one(self) -> bool:
        """Answer one inbox message; False when none is waiting."""
        assert self.conn is not None
        # "cogd-loop@host os=<pid> pid=<backend pid>": which process holds a message
        msg = inbox.claim(self.conn, f"{self.app} os={os.getpid()}", self.lease_s)
        if msg is None:
            return False
        if msg.attempts > self.max_attempts:  # a poison message: failed, not tried again
            if inbox.give_up(self.conn, msg, self.max_attempts):
                logger.error("loop: inbox %s failed: its turn was started %d times and never "
                             "finished ([process] inbox_max_attempts = %d)", msg.id,
                             msg.attempts - 1, self.max_attempts)
            self.items_done += 1
            return True
        self.keeper.hold(msg.id, msg.claim)
        self.turn_since = time.monotonic()
        try:
            fault_hook("loop-turn")  # tests: kill or stall a loop mid-turn
            self.cognition.answer(self.conn, msg.session_id, msg.content, inbox_id=msg.id,
                                  on_partial=self.publisher.start(msg.id) if msg.stream
                                  else None, deliver=inbox.delivery(msg))
        except (psycopg.OperationalError, psycopg.InterfaceError):
            raise  # the row stays claimed and is reclaimed once this connection is gone
        except inbox.LostClaim as exc:
            logger.warning("loop: %s", exc)  # another loop answers it; nothing written here
        except Exception as exc:
            if not isinstance(exc, InputError):
                logger.exception("loop: inbox %s failed", msg.id)
            if not inbox.fail(self.conn, msg, exc):  # taken over meanwhile: the owner answers
                logger.warning("loop: inbox %s failed here but is no longer ours", msg.id)
        finally:
            self.turn_since = None
            self.keeper.release()
        self.items_done += 1
        return True
