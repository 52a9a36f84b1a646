"""Speed: NOTIFY latency, recall latency with and without rerank, pipeline/bare ratio, RSS.

    python -m bench speed [--turns 2000] [--seed 7] [--quick] [--rss-seconds 20]

In a throwaway embedded database holding the synthetic conversation of bench/data/synth.py
(imported through the live write path; 600 turns with --quick):

- **NOTIFY**: 200 notifications through agent.bus between two connections: "one hop" is
  `notify()` on one autocommit connection until a `Listener` on another returns the event
  (same thread, same clock); "ping-pong" adds an echo thread that answers each ping with a
  notification of its own (two hops and a thread switch);
- **recall**: every benchmark question through `Runtime(settings).recaller().recall(conn, q,
  log=False)` (top_k from config), once without a reranker and once with FlashRank when its
  model is in the reranker cache dir (set COGD_RERANKER__CACHE_DIR to point at one; cogd
  never downloads it), else "rerank unavailable: <status>";
- **bare**: embed_query + one HNSW query (`recall_dense_day_table`, LIMIT top_k), timed
  interleaved with the pipeline on the same questions: the pipeline/bare ratio;
- **peak RSS**: `cogd loop`, `cogd consolidate` and `cogd idle` started one at a time as
  subprocesses against the same database (DATABASE_URL); each runs at least --rss-seconds
  (20) and until it has done one unit of its work (the loop answers a chat message, which
  loads its LLM; consolidate logs an operation), at most --rss-max-seconds; its VmHWM is
  read from /proc/<pid>/status until it is stopped with SIGINT.

Writes bench/results/speed-<date>.md and .json (speed-quick-<date> with --quick).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.reports import machine, percentile, write_results

N_NOTIFY = 200
WORKERS = ("loop", "consolidate", "idle")
RSS_MESSAGE = "Hi! What do you remember about my sister?"


def stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(percentile(values, 50), 3),
            "p95": round(percentile(values, 95), 3), "mean": round(sum(values) / len(values), 3),
            "max": round(max(values), 3)}


# ---------------------------------------------------------------- storage

def storage(url: str) -> dict[str, Any]:
    """On-disk size of day_table (heap + TOAST, each index) and bytes per row."""
    from agent.db.connect import connect

    with connect(url, app="cogd-bench", autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE day_table")
        rows = int(conn.execute("SELECT count(*) FROM day_table").fetchone()[0])  # type: ignore[index]
        total, table, indexes = conn.execute(
            "SELECT pg_total_relation_size('day_table'), pg_table_size('day_table'), "
            "pg_indexes_size('day_table')").fetchone()  # type: ignore[misc]
        per_index = {str(name): int(size) for name, size in conn.execute(
            "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index "
            "WHERE indrelid = 'day_table'::regclass ORDER BY 2 DESC")}
    per_row = max(1, rows)
    return {"rows": rows, "total_bytes": int(total), "table_bytes": int(table),
            "indexes_bytes": int(indexes), "per_index_bytes": per_index,
            "bytes_per_row": round(int(total) / per_row),
            "table_bytes_per_row": round(int(table) / per_row),
            "hnsw_bytes_per_row": round(sum(v for k, v in per_index.items() if "hnsw" in k)
                                        / per_row)}


# ---------------------------------------------------------------- NOTIFY

def bench_notify(url: str, n: int = N_NOTIFY) -> dict[str, Any]:
    from agent.bus import Channel, Kind, Listener, notify
    from agent.db.connect import connect

    def conn() -> Any:
        return connect(url, app="cogd-bench-bus", autocommit=True)

    one_hop: list[float] = []
    lost = 0
    with conn() as sender, Listener(conn, [Channel.CONTROL]) as listener:
        for i in range(n + 10):  # the first 10 warm up
            t0 = time.perf_counter()
            notify(sender, Channel.CONTROL, Kind.PING, i)
            got = _wait_for(listener, Kind.PING, str(i))
            if got is None:
                lost += 1
            elif i >= 10:
                one_hop.append((got - t0) * 1000)

    stop = threading.Event()
    ready = threading.Event()

    def echo() -> None:
        with conn() as back, Listener(conn, [Channel.CONTROL]) as ear:
            ready.set()
            while not stop.is_set():
                for e in ear.wait(0.2):
                    if e.type == Kind.PING:
                        notify(back, Channel.THOUGHT, Kind.PONG, e.id)

    thread = threading.Thread(target=echo, name="bench-echo", daemon=True)
    thread.start()
    ready.wait(10)
    ping_pong: list[float] = []
    with conn() as sender, Listener(conn, [Channel.THOUGHT]) as listener:
        for i in range(n + 10):
            t0 = time.perf_counter()
            notify(sender, Channel.CONTROL, Kind.PING, i)
            got = _wait_for(listener, Kind.PONG, str(i))
            if got is None:
                lost += 1
            elif i >= 10:
                ping_pong.append((got - t0) * 1000)
    stop.set()
    thread.join(5)
    return {"one_hop_ms": stats(one_hop), "ping_pong_ms": stats(ping_pong), "lost": lost}


def bench_gate(settings: Any, n: int = 2000) -> dict[str, Any]:
    """The entry gate on one long message (seed 003 §Memory Gate: ~1 ms per call), and on a
    one-line one: pure rules, no database (moved here from a timed unit test)."""
    from agent.domain.gates import EntryGateConfig, entry_gate

    cfg = EntryGateConfig.from_table(settings.entry_gate)
    texts = {"long (1,600 chars)": "I decided that my sister Alice will visit on March 14 "
             "because she loves Porto! " * 20,
             "one line": "Remember this: my locker code is 4512."}
    out: dict[str, Any] = {}
    for label, text in texts.items():
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            entry_gate(text, "user", cfg)
            times.append((time.perf_counter() - t0) * 1000)
        out[label] = stats(times)
    return out


def _wait_for(listener: Any, typ: str, ident: str, timeout: float = 5.0) -> float | None:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        for e in listener.wait(max(0.0, deadline - time.perf_counter())):
            if e.type == typ and e.id == ident:
                return time.perf_counter()
    return None


# ---------------------------------------------------------------- recall

def bench_recall(settings: Any, url: str, questions: list[str]) -> dict[str, Any]:
    from agent.db.connect import connect
    from agent.db.queries import query, vector_text
    from agent.providers import factory
    from agent.providers.rerank import reranker_status
    from agent.runtime import Runtime

    plain = Runtime(settings).recaller()
    plain.reranker = None
    status = reranker_status(settings)
    ranked = None
    if status.startswith("enabled"):
        ranked = Runtime(settings).recaller()
        ranked.reranker = factory.build_reranker(settings)
    k = int(plain.cfg.top_k)
    out: dict[str, list[float]] = {"pipeline": [], "pipeline_rerank": [], "bare": [],
                                   "bare_sql": [], "embed": []}
    with connect(url, app="cogd-bench", autocommit=True) as conn:
        for q in questions[:5]:  # warm-up: ONNX sessions, plans, caches
            plain.recall(conn, q, log=False)
            if ranked is not None:
                ranked.recall(conn, q, log=False)
        for q in questions:
            t0 = time.perf_counter()
            plain.recall(conn, q, log=False)
            out["pipeline"].append((time.perf_counter() - t0) * 1000)
            if ranked is not None:
                t0 = time.perf_counter()
                ranked.recall(conn, q, log=False)
                out["pipeline_rerank"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            vec = vector_text(plain.embedder.embed_query(q))
            t1 = time.perf_counter()
            conn.execute(query("recall_dense_day_table"),
                         {"query": vec, "k": k, "user_id": None, "judge": vec,
                          "goal": None}).fetchall()
            t2 = time.perf_counter()
            out["bare"].append((t2 - t0) * 1000)
            out["bare_sql"].append((t2 - t1) * 1000)
            out["embed"].append((t1 - t0) * 1000)
        plan = conn.execute("EXPLAIN " + query("recall_dense_day_table"),
                            {"query": (x := vector_text(plain.embedder.embed_query("x"))),
                             "k": k, "user_id": None, "judge": x, "goal": None}).fetchall()
    res: dict[str, Any] = {name: stats(v) for name, v in out.items()}
    res["top_k"] = k
    res["candidates_per_list"] = k * int(plain.cfg.rerank_candidate_multiplier)
    res["reranker"] = status
    res["rerank_available"] = ranked is not None
    res["hnsw_used"] = any("hnsw" in str(r[0]).lower() for r in plan)
    for pct in ("p50", "p95"):
        res[f"ratio_{pct}"] = round(res["pipeline"][pct] / res["bare"][pct], 2)
        if ranked is not None:
            res[f"rerank_ratio_{pct}"] = round(res["pipeline_rerank"][pct] / res["bare"][pct], 2)
    return res


# ---------------------------------------------------------------- peak RSS

def _status(pid: int) -> dict[str, int]:
    """VmHWM and VmRSS in kB from /proc/<pid>/status ({} when the process is gone)."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                out[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            kids += [int(x) for x in text]
    except OSError:
        return kids
    return kids + [g for k in kids for g in _children(k)]


def _cogd() -> list[str]:
    script = Path(sys.executable).parent / "cogd"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from agent.cli import main; main()"]


def bench_rss(settings: Any, url: str, seconds: float, max_seconds: float,
              grace_s: float = 60.0) -> dict[str, Any]:
    """Each worker alone, one after the other, against the bench database: at least
    `seconds`, and until it has done one unit of its work (loop: answered a chat message,
    which loads its LLM; consolidate: logged a consolidation operation), at most
    `max_seconds`; then SIGINT. Peak RSS is the kernel's VmHWM of the process."""
    with tempfile.TemporaryDirectory(prefix="cogd-bench-rss-") as tmp:
        out = {name: _one_worker(settings, url, name, seconds, max_seconds, grace_s, Path(tmp))
               for name in WORKERS}
    return {"min_seconds": seconds, "max_seconds": max_seconds, "grace_s": grace_s,
            "processes": out, "command": " ".join(_cogd()) + " <worker>"}


def _one_worker(settings: Any, url: str, name: str, seconds: float, max_seconds: float,
                grace_s: float, logdir: Path) -> dict[str, Any]:
    from agent.bus import Channel, Kind, notify
    from agent.db.connect import connect
    from agent.services.records.sessions import ensure_session, ensure_user

    env = {**os.environ, "DATABASE_URL": url, "COGD_DATA_DIR": str(settings.data_dir)}
    with (logdir / f"{name}.log").open("wb") as log:
        proc = subprocess.Popen([*_cogd(), name], env=env, stdout=log, stderr=subprocess.STDOUT)
    peak: dict[str, Any] = {"pid": proc.pid, "VmHWM_kB": 0, "VmRSS_max_kB": 0, "children": {}}
    started = time.monotonic()
    info: dict[str, Any] = {"running_after_s": None, "done_after_s": None}
    inbox: int | None = None
    try:
        with connect(url, app="cogd-bench", autocommit=True) as conn:
            before = _activity(conn)
            while True:
                elapsed = time.monotonic() - started
                if info["running_after_s"] is None:
                    row = conn.execute("SELECT state FROM process_heartbeats WHERE name = %s "
                                       "AND pid = %s", (name, proc.pid)).fetchone()
                    if row and row[0] == "running":
                        info["running_after_s"] = round(elapsed, 1)
                if name == "loop" and inbox is None and info["running_after_s"] is not None:
                    sid = ensure_session(conn, ensure_user(conn, "bench"), None)
                    got = conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, %s) "
                                       "RETURNING id", (sid, RSS_MESSAGE)).fetchone()
                    assert got is not None
                    inbox = int(got[0])
                    notify(conn, Channel.INBOX, Kind.INBOX, inbox)
                if info["done_after_s"] is None and _done(conn, name, inbox, before):
                    info["done_after_s"] = round(elapsed, 1)
                _sample(proc, peak)
                if ((elapsed >= seconds and (info["done_after_s"] is not None or name == "idle"))
                        or elapsed >= max_seconds or proc.poll() is not None):
                    break
                time.sleep(0.5)
            after = _activity(conn)
            info["activity"] = _delta(before, after)
            info["window_s"] = round(time.monotonic() - started, 1)
    finally:
        stopping = time.monotonic()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        while proc.poll() is None and time.monotonic() - stopping < grace_s:
            _sample(proc, peak)
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
            peak["exit_code"] = f"SIGKILL after {grace_s:g} s ({proc.wait()})"
        else:
            peak["exit_code"] = proc.returncode
            peak["stop_s"] = round(time.monotonic() - stopping, 1)
    said = (logdir / f"{name}.log").read_text(errors="replace").strip().splitlines()
    peak["log_tail"] = [x for x in said if "XDG_RUNTIME_DIR" not in x
                        and "user_runtime_dir" not in x][-5:]
    peak["VmHWM_MiB"] = round(peak["VmHWM_kB"] / 1024, 1)
    return {**peak, **info}


def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, dict):
            old = old or {}
            out[key] = {role: {"calls": v["calls"] - old.get(role, {}).get("calls", 0),
                               "seconds": round(v["seconds"]
                                                - old.get(role, {}).get("seconds", 0.0), 1)}
                        for role, v in value.items()
                        if v["calls"] != old.get(role, {}).get("calls", 0)}
        else:
            out[key] = None if value is None or old is None else value - old
    return out


def _done(conn: Any, name: str, inbox: int | None, before: dict[str, Any]) -> bool:
    if name == "loop":
        return inbox is not None and conn.execute(
            "SELECT 1 FROM outbox WHERE inbox_id = %s", (inbox,)).fetchone() is not None
    if name == "consolidate":
        now = _activity(conn)["consolidation_log_rows"]
        return now is not None and now > (before["consolidation_log_rows"] or 0)
    return False


def _sample(proc: subprocess.Popen[bytes], peak: dict[str, Any]) -> None:
    st = _status(proc.pid)
    if st:
        peak["VmHWM_kB"] = max(peak["VmHWM_kB"], st.get("VmHWM", 0))
        peak["VmRSS_max_kB"] = max(peak["VmRSS_max_kB"], st.get("VmRSS", 0))
    for kid in _children(proc.pid):
        ks = _status(kid)
        if ks:
            peak["children"][str(kid)] = max(peak["children"].get(str(kid), 0),
                                             ks.get("VmHWM", 0))


def _activity(conn: Any) -> dict[str, Any]:
    """What the workers did in the window (so the RSS figure has its context)."""
    def count(sql: str) -> int | None:
        try:
            row = conn.execute(sql).fetchone()
            return None if row is None else int(row[0])
        except Exception:
            return None

    return {"replies": count("SELECT count(*) FROM outbox"),
            "consolidation_log_rows": count("SELECT count(*) FROM consolidation_log"),
            "thoughts": count("SELECT count(*) FROM thoughts"),
            "heartbeats": count("SELECT count(*) FROM process_heartbeats"),
            "llm_calls": _llm_calls(conn)}


def _llm_calls(conn: Any) -> dict[str, Any]:
    """LLM calls per role in the window: count and total seconds (where the time went)."""
    try:
        rows = conn.execute("SELECT role, count(*), round(sum(latency_ms)::numeric / 1000, 1) "
                            "FROM llm_calls GROUP BY role ORDER BY role").fetchall()
    except Exception:
        return {}
    return {str(r): {"calls": int(n), "seconds": float(sec)} for r, n, sec in rows}


# ---------------------------------------------------------------- report

def run(turns: int, seed: int, quick: bool, rss_seconds: float,
        rss_max_seconds: float) -> dict[str, Any]:
    from bench.common import import_corpus, scratch_database
    from bench.data.synth import generate

    started = time.perf_counter()
    corpus = generate(n_turns=turns, seed=seed)
    data: dict[str, Any] = {"date": dt.date.today().isoformat(), "quick": quick, "turns": turns,
                            "seed": seed, "machine": machine()}
    with scratch_database() as (settings, url):
        print(f"importing {turns} turns", flush=True)
        data["import"] = import_corpus(settings, url, corpus)
        data["load_average_1min"] = [round(os.getloadavg()[0], 2)]
        data["storage"] = storage(url)
        print("NOTIFY", flush=True)
        data["notify"] = bench_notify(url)
        data["entry_gate"] = bench_gate(settings)
        print(f"recall x {len(corpus.questions)} questions", flush=True)
        data["recall"] = bench_recall(settings, url, [q.text for q in corpus.questions])
        data["load_average_1min"].append(round(os.getloadavg()[0], 2))
        print(f"workers for {rss_seconds:g}-{rss_max_seconds:g} s", flush=True)
        data["rss"] = bench_rss(settings, url, rss_seconds, rss_max_seconds,
                                grace_s=20.0 if quick else 60.0)
        data["load_average_1min"].append(round(os.getloadavg()[0], 2))
    data["wall_s"] = round(time.perf_counter() - started, 1)
    return data


def headline(data: dict[str, Any]) -> dict[str, Any]:
    r, n = data["recall"], data["notify"]
    return {
        "notify_one_hop_ms": [n["one_hop_ms"].get("p50"), n["one_hop_ms"].get("p95")],
        "notify_ping_pong_ms": [n["ping_pong_ms"].get("p50"), n["ping_pong_ms"].get("p95")],
        "recall_ms": [r["pipeline"]["p50"], r["pipeline"]["p95"]],
        "recall_rerank_ms": ([r["pipeline_rerank"]["p50"], r["pipeline_rerank"]["p95"]]
                             if r["rerank_available"] else f"unavailable: {r['reranker']}"),
        "bare_ms": [r["bare"]["p50"], r["bare"]["p95"]],
        "ratio": [r["ratio_p50"], r["ratio_p95"]],
        "peak_rss_MiB": {k: v["VmHWM_MiB"] for k, v in data["rss"]["processes"].items()},
        "loop_answered": data["rss"]["processes"]["loop"]["done_after_s"] is not None,
    }


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _pp(s: dict[str, Any]) -> str:
    return f"{s['p50']} / {s['p95']}" if s.get("n") else "-"


def markdown(data: dict[str, Any]) -> str:
    m, r, nt, rss = data["machine"], data["recall"], data["notify"], data["rss"]
    st = data["storage"]
    cmd = "python -m bench speed" + (" --quick" if data["quick"] else
                                    f" --turns {data['turns']}") + f" --seed {data['seed']}"
    rerank = (f"{_pp(r['pipeline_rerank'])} ms (ratio to bare {r['rerank_ratio_p50']} / "
              f"{r['rerank_ratio_p95']})" if r["rerank_available"]
              else f"rerank unavailable: {r['reranker']}")
    lines = [
        f"# Speed, {data['date']}", "",
        f"`{cmd}` on {m['cpus']} CPUs ({m['processor']}), Python {m['python']}, "
        f"{m['platform']}; wall time {data['wall_s']} s. Database: embedded Postgres with "
        f"{data['import']['inserted']} day-table turns of the synthetic conversation (imported "
        f"in {data['import']['seconds']} s). 1-minute load average after the import / after "
        f"recall / after the workers: {' / '.join(str(x) for x in data['load_average_1min'])}.",
        "",
        "## Summary (milliseconds unless stated)", "",
        "| measure | p50 / p95 |", "| --- | --- |",
        f"| NOTIFY one hop (notify() → Listener on another connection returns), n "
        f"{nt['one_hop_ms'].get('n')} | {_pp(nt['one_hop_ms'])} |",
        f"| NOTIFY ping-pong (two hops via an echo thread), n {nt['ping_pong_ms'].get('n')} | "
        f"{_pp(nt['ping_pong_ms'])} |",
        f"| recall pipeline, no rerank (top_k {r['top_k']}, {r['candidates_per_list']} "
        f"candidates per list), n {r['pipeline']['n']} | {_pp(r['pipeline'])} |",
        f"| recall pipeline, with rerank | {rerank} |",
        f"| bare: embed_query + HNSW top {r['top_k']} on day_table | {_pp(r['bare'])} |",
        f"| of which embed_query | {_pp(r['embed'])} |",
        f"| of which the HNSW query | {_pp(r['bare_sql'])} |",
        f"| **pipeline / bare ratio** | {r['ratio_p50']} / {r['ratio_p95']} |",
        *(f"| entry gate, {label} message, n {g.get('n')} | {_pp(g)} |"
          for label, g in data.get("entry_gate", {}).items()),
        "",
        f"Storage: day_table with {st['rows']} rows takes {_mib(st['total_bytes'])} "
        f"({st['bytes_per_row']} bytes per turn: heap + TOAST {st['table_bytes_per_row']}, "
        f"HNSW indexes {st['hnsw_bytes_per_row']}); per index: "
        + ", ".join(f"{k} {_mib(v)}" for k, v in st["per_index_bytes"].items()) + ".", "",
        f"NOTIFY: {nt['lost']} notification(s) not received within 5 s. HNSW index used by "
        f"the bare query: {r['hnsw_used']}. Reranker status: {r['reranker']}.", "",
        "## Peak RSS per process", "",
        f"Each worker started alone as `{rss['command']}` with DATABASE_URL set to the bench "
        f"database, one after the other; each runs at least {rss['min_seconds']:g} s and "
        "until it has done one unit of work (loop: answered one chat message, which loads its "
        "LLM; consolidate: logged one consolidation operation), at most "
        f"{rss['max_seconds']:g} s; then SIGINT ({rss['grace_s']:g} s grace, then SIGKILL). "
        "Peak RSS is the kernel's VmHWM from /proc/<pid>/status, read every 0.5 s.", "",
        "| process | peak RSS (VmHWM) | max VmRSS sampled | window | running after | "
        "work done after | stopped after SIGINT | exit |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, p in rss["processes"].items():
        kids = (" (+ children " + ", ".join(f"{round(v / 1024, 1)} MiB"
                                            for v in p["children"].values()) + ")"
                if p["children"] else "")
        done = ("n/a (no unit)" if name == "idle" else
                f"{p['done_after_s']} s" if p["done_after_s"] is not None else "not within")
        lines.append(
            f"| cogd {name} | **{p['VmHWM_MiB']} MiB**{kids} | "
            f"{round(p['VmRSS_max_kB'] / 1024, 1)} MiB | {p.get('window_s', '-')} s | "
            f"{p['running_after_s']} s | {done} | {p.get('stop_s', '-')} s | {p['exit_code']} |")
    lines += ["", "What each did in its window (row deltas; LLM calls: count and seconds):", ""]
    for name, p in rss["processes"].items():
        lines.append(f"- {name}: {p.get('activity')}; last log line: "
                     + (p["log_tail"][-1].strip()[:160] if p["log_tail"] else "(none)"))
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="600 turns")
    parser.add_argument("--rss-seconds", type=float, default=20.0,
                        help="run the workers at least this long")
    parser.add_argument("--rss-max-seconds", type=float, default=None,
                        help="...and until the loop answered its message, at most this long "
                        "(default 120, 45 with --quick)")
    args = parser.parse_args(argv)
    turns = 600 if args.quick else args.turns
    cap = args.rss_max_seconds or (45.0 if args.quick else 120.0)
    data = run(turns, args.seed, args.quick, args.rss_seconds, cap)
    stem = write_results("speed", data, markdown(data), quick=args.quick)
    data["files"] = [f"{stem.name}.md", f"{stem.name}.json"]
    return data


if __name__ == "__main__":
    main()
