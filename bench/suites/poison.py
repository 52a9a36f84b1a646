"""One huge message through the real loop worker (issue 38, finding 3).

    python -m bench poison [--size-mb 1.0] [--timeout 600]

Offline, in a throwaway embedded Postgres (bench/common.py), with a real `cogd loop`
process (every LLM role `heuristic`: the turn's own steps are measured, not a model):

- first: alice sends a message of --size-mb of lower-case words (the worst case of the old
  per-word `text.islower()`: no capital ends the scan early), then bob sends "hi" at once;
  the time from the sends to each reply (or error reply);
- kill: alice sends another such message; the loop is killed (SIGKILL) one second after
  it claimed it, and a new loop is started: the times to both replies again, and the
  message's attempts (the claim counts itself, revision 0020);
- poison: the loop is killed mid-turn every time it claims alice's next huge message, as
  a message that crashes its loop would; after [process] inbox_max_attempts claims the
  next loop marks it failed with the reason and answers with an error, and bob's message
  behind it is answered: the times, and the failed row's reason;
- steps: where one turn's time goes at 256 KiB, 512 KiB and 1 MiB (cProfile of
  LoopWorker.process_one in this process; cumulative seconds of the turn's steps), to
  show each grows linearly; and the old query-name expression against the new one.

Writes bench/results/poison-<date>.md and .json. The machine is shared: other processes
may be using the CPU meanwhile (the report says how busy it was).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import os
import pstats
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import scratch_database
from bench.reports import machine, write_results

WORDS = ("the", "garden", "was", "quiet", "after", "rain", "and", "we", "talked", "about",
         "moving", "to", "porto", "next", "spring", "my", "sister", "said", "she", "would")
# the turn's steps whose cumulative time the profile reports (function name, file suffix)
STEPS = (
    ("write_user_turn", "services/conversation/cognition.py"),
    ("update", "services/conversation/emotion.py"),
    ("run", "services/conversation/rollover.py"), ("recall", "services/memory/recall.py"),
    ("query_context", "services/memory/recall.py"), ("turn", "services/reach/handoff.py"),
    ("user_turn", "services/thinking/foresight.py"),
    ("respond", "services/conversation/cognition.py"),
    ("commit", "services/conversation/cognition.py"), ("entry_gate", "domain/gates.py"),
    ("identity_rewrite_match", "domain/gates.py"), ("monitor", "domain/monitors.py"),
    ("lexicon_signal", "domain/emotion.py"), ("resolve", "domain/timeref.py"),
    ("count", "providers/text.py"), ("embed_texts", "providers/embedding.py"),
)


def huge(size: int, seed: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:size].strip()


def cpu_busy() -> float:
    """Cores busy over the last minute (load average), for the report."""
    return round(os.getloadavg()[0], 2)


class Loop:
    """A `cogd loop` process against the scratch database."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        cogd = str(Path(sys.executable).with_name("cogd"))
        with log.open("a") as out:
            self.proc = subprocess.Popen([cogd, "loop"], env=env, stdout=out,
                                         stderr=subprocess.STDOUT)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def _row(conn: Any, inbox_id: int) -> tuple[str, int, str | None]:
    row = conn.execute("SELECT status, attempts, error FROM inbox WHERE id = %s",
                       (inbox_id,)).fetchone()
    return row[0], int(row[1]), row[2]


def _wait_replies(conn: Any, ids: dict[str, int], t0: float, timeout_s: float,
                  ) -> dict[str, Any]:
    """Seconds from t0 to each message's outbox row (None: none within timeout_s)."""
    got: dict[str, Any] = {}
    while len(got) < len(ids) and time.monotonic() - t0 < timeout_s:
        for name, inbox_id in ids.items():
            if name in got:
                continue
            row = conn.execute("SELECT content, metadata FROM outbox WHERE inbox_id = %s",
                               (inbox_id,)).fetchone()
            if row is not None:
                got[name] = {"s": round(time.monotonic() - t0, 2),
                             "error": bool((row[1] or {}).get("error")),
                             "reply": row[0][:160]}
        time.sleep(0.05)
    return {name: got.get(name) for name in ids}


def _wait_claimed(conn: Any, inbox_id: int, attempts: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, seen, _ = _row(conn, inbox_id)
        if status == "processing" and seen >= attempts:
            return True
        time.sleep(0.02)
    return False


def through_the_loop(settings: Any, url: str, size: int, timeout_s: float,
                     work: Path) -> dict[str, Any]:
    from agent import inbox
    from agent.db.connect import connect
    from agent.services.records.sessions import ensure_session, ensure_user

    env = {k: v for k, v in os.environ.items() if not k.startswith("COGD_")}
    env.update(COGD_DATABASE_URL=url, COGD_DATA_DIR=str(settings.data_dir),
               **{f"COGD_LLM__ROLES__{r}": "heuristic"
                  for r in ("SYSTEM1", "SYSTEM2", "GATE", "CONSOLIDATION", "DMN")})
    log = work / "loop.log"
    max_attempts = int(settings.process.inbox_max_attempts)
    out: dict[str, Any] = {"max_attempts": max_attempts}
    with connect(url, app="cogd-bench", autocommit=True) as conn:
        alice = ensure_session(conn, ensure_user(conn, "alice"), "bench-alice")
        bob = ensure_session(conn, ensure_user(conn, "bob"), "bench-bob")

        def send(n: int, short: str) -> tuple[int, int]:
            """Alice's huge message, then bob's short one right after it."""
            return (inbox.enqueue(conn, alice, huge(size, n), stream=False, key=f"big-{n}"),
                    inbox.enqueue(conn, bob, short, stream=False, key=f"hi-{n}"))

        loop = Loop(env, log)
        try:
            # the loop is up when it answers a first small message
            warm = inbox.enqueue(conn, bob, "hello", stream=False, key="warm")
            if _wait_replies(conn, {"warm": warm}, time.monotonic(), 180)["warm"] is None:
                raise RuntimeError("the loop did not answer: " + log.read_text()[-2000:])

            # first: the huge message, then another user's "hi"
            load0, t0 = cpu_busy(), time.monotonic()
            big, hi = send(1, "hi")
            first = _wait_replies(conn, {"huge": big, "hi": hi}, t0, timeout_s)
            out["first"] = {**first, "load_before": load0, "load_after": cpu_busy(),
                            "huge_row": _row(conn, big)[:2]}

            # kill: the loop killed one second into the huge message's turn, then restarted
            t0 = time.monotonic()
            big, hi = send(2, "hi again")
            if not _wait_claimed(conn, big, 1, 120):
                raise RuntimeError("the huge message was not claimed")
            time.sleep(1.0)
            loop.kill()
            killed_at = round(time.monotonic() - t0, 2)
            loop = Loop(env, log)
            second = _wait_replies(conn, {"huge": big, "hi": hi}, t0, timeout_s)
            out["kill"] = {**second, "killed_at_s": killed_at, "load_after": cpu_busy(),
                           "huge_row": _row(conn, big)[:2]}

            # poison: killed mid-turn at every claim until the limit; then failed, queue moves
            t0 = time.monotonic()
            big, hi = send(3, "are you there?")
            kills = []
            for attempt in range(1, max_attempts + 1):
                if not _wait_claimed(conn, big, attempt, 180):
                    raise RuntimeError(f"claim {attempt} of the poison message never came")
                time.sleep(0.5)
                loop.kill()
                kills.append(round(time.monotonic() - t0, 2))
                loop = Loop(env, log)
            third = _wait_replies(conn, {"huge": big, "hi": hi}, t0, timeout_s)
            status, attempts, error = _row(conn, big)
            out["poison"] = {**third, "kills_at_s": kills, "huge_row": (status, attempts),
                             "reason": error, "load_after": cpu_busy()}
        finally:
            out["last_loop_exit"] = loop.stop()
    return out


def steps(settings: Any, url: str, sizes: list[int]) -> dict[str, Any]:
    """cProfile of one turn per size (in this process), cumulative seconds per step."""
    from agent import inbox
    from agent.db.connect import app_role, connect
    from agent.services.records.sessions import ensure_session, ensure_user
    from agent.workers.loop import LoopWorker

    for role in ("system1", "system2"):
        settings.llm.roles[role] = "heuristic"
    worker = LoopWorker(settings, url)
    worker.conn = connect(worker.url, app=worker.app, autocommit=True,
                          role=app_role(settings))  # as the worker connects
    worker.setup()
    rows: dict[str, Any] = {}
    try:
        conn = worker.conn
        sid = ensure_session(conn, ensure_user(conn, "carol"), "bench-steps")
        inbox.enqueue(conn, sid, "hello there", stream=False, key="steps-warm")
        worker.process_one()
        for size in sizes:
            msg = inbox.enqueue(conn, sid, huge(size, size), stream=False, key=f"steps-{size}")
            prof = cProfile.Profile()
            t0 = time.perf_counter()
            prof.enable()
            worker.process_one()
            prof.disable()
            total = time.perf_counter() - t0
            stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
            found: dict[str, float] = {}
            for (path, _, fn), (_, _, _, cum, _) in stats.items():
                for name, suffix in STEPS:
                    if fn == name and path.endswith(suffix):
                        found[f"{suffix.rsplit('/', 1)[-1][:-3]}.{name}"] = round(
                            found.get(f"{suffix.rsplit('/', 1)[-1][:-3]}.{name}", 0) + cum, 3)
            with connect(url, app="cogd-bench", autocommit=True) as look:
                stored = look.execute(
                    "SELECT length(content) FROM day_table WHERE inbox_id = %s AND "
                    "role = 'user'", (msg,)).fetchone()
            rows[str(size)] = {"total_s": round(total, 2), "steps_s": found,
                               "stored_chars": stored[0] if stored else None,
                               "status": _row(conn, msg)[0]}
    finally:
        worker.teardown()
        worker.conn.close()
        worker.close_pool()
    return rows


def names_expression(words_n: list[int]) -> dict[str, Any]:
    """The old per-word `text.islower()` name filter against the new one (seconds)."""
    from agent.domain import lexical

    out: dict[str, Any] = {}
    for n in words_n:
        text = " ".join(WORDS[i % len(WORDS)] for i in range(n))
        t0 = time.perf_counter()
        old = [w for w in lexical.WORD.findall(text) if len(w) > 1 and not w.isdigit()
               and (w[0].isupper() or text.islower())]
        t1 = time.perf_counter()
        lower = text.islower()
        new = [w for w in lexical.WORD.findall(text) if len(w) > 1 and not w.isdigit()
               and (w[0].isupper() or lower)]
        t2 = time.perf_counter()
        assert old == new
        out[str(n)] = {"old_s": round(t1 - t0, 3), "new_s": round(t2 - t1, 4)}
    return out


def markdown(data: dict[str, Any]) -> str:
    def reply(r: Any) -> str:
        if r is None:
            return f"no reply within {data['timeout_s']:.0f} s"
        return f"{r['s']} s" + (" (error reply)" if r["error"] else "")

    loop = data["loop"]
    lines = [
        f"# One huge message through the real loop ({data['date']})", "",
        f"`python -m bench poison --size-mb {data['size_mb']}`; commit {data['commit']}; "
        f"{data['machine']['cpus']} CPUs. **The machine was shared**: other engineers ran "
        f"test suites on it meanwhile (1-minute load average {data['load_start']} at the "
        "start; each phase's load is in the JSON), so the times are upper bounds of "
        "what an idle machine gives. Every LLM role `heuristic`: the turn's own steps, "
        "not a model. A real `cogd loop` process.", "",
        f"Message: {data['size_chars']:,} characters of lower-case words (the old "
        "per-word `islower()` scanned the whole message for each word).", "",
        "| phase | the huge message | the other user's message sent after it | huge row |",
        "|---|---|---|---|",
        f"| first | {reply(loop['first']['huge'])} | {reply(loop['first']['hi'])} | "
        f"{loop['first']['huge_row']} |",
        f"| loop killed {loop['kill']['killed_at_s']} s in, restarted | "
        f"{reply(loop['kill']['huge'])} | {reply(loop['kill']['hi'])} | "
        f"{loop['kill']['huge_row']} |",
        f"| poison: killed at each of {loop['max_attempts']} claims "
        f"({', '.join(str(k) for k in loop['poison']['kills_at_s'])} s) | "
        f"{reply(loop['poison']['huge'])} | {reply(loop['poison']['hi'])} | "
        f"{loop['poison']['huge_row']} |", "",
        "Times run from the two sends (the huge message first) to each outbox row. The huge "
        "row is (status, attempts): each claim counts itself.", "",
        f"Poison reason recorded: \"{loop['poison']['reason']}\"", "",
        "## Where one turn's time goes (cProfile, in-process loop worker)", "",
    ]
    sizes = list(data["steps"])
    names = sorted({k for s in sizes for k in data["steps"][s]["steps_s"]})
    lines += ["| step (cumulative s) | " + " | ".join(f"{int(s) // 1024} KiB" for s in sizes)
              + " |", "|---|" + "---|" * len(sizes)]
    lines += ["| total turn | " + " | ".join(str(data["steps"][s]["total_s"]) for s in sizes)
              + " |"]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(
            str(data["steps"][s]["steps_s"].get(name, "-")) for s in sizes) + " |")
    lines += ["", "Stored whole: " + ", ".join(
        f"{int(s) // 1024} KiB -> {data['steps'][s]['stored_chars']:,} characters in day_table"
        for s in sizes) + ".", "",
        "## The query-name filter alone (old per-word islower() against once)", "",
        "| words | old s | new s |", "|---|---|---|"]
    lines += [f"| {n} | {v['old_s']} | {v['new_s']} |" for n, v in data["names"].items()]
    lines += ["", f"Wall time {data['wall_s']} s.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    size = int(args.size_mb * 1024 * 1024)
    started = time.perf_counter()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    data: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine(),
                            "commit": commit, "size_mb": args.size_mb, "size_chars": size,
                            "timeout_s": args.timeout, "load_start": cpu_busy()}
    data["names"] = names_expression([2500, 5000, 10000, 20000])
    with scratch_database() as (settings, url):
        work = Path(settings.data_dir)
        data["loop"] = through_the_loop(settings, url, size, args.timeout, work)
        data["steps"] = steps(settings, url, [size // 4, size // 2, size])
    data["wall_s"] = round(time.perf_counter() - started, 1)
    write_results("poison", data, markdown(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
