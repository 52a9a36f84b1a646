"""`cogd hook` latency: one Python process per prompt, as Claude Code runs it (issue 42
item 5).

    python -m bench hook [--prompts 40] [--per-session 10] [--turns 600] [--seed 7]
                         [--db DATA_DIR] [--keep]

In a throwaway embedded database (or --db: a data dir holding an import of
bench.data.synth's conversation of --turns turns, reused as it is; the
suite adds its rows to it): the synthetic conversation imported, a correction of the
user's with its fails-when/fine-when, and then --prompts prompts (the corpus's questions)
in Claude Code sessions of --per-session prompts each (so each session's first prompt
builds the handoff). Before every third prompt a pending DMN thought for the session is
written (what the idle DMN writes for a watch-imported turn), so the hook has one to
print. Each prompt is `cogd --data-dir DIR hook --user sam` (the account the import
gives the conversation) with Claude Code's
UserPromptSubmit JSON on stdin ({session_id, transcript_path, cwd, hook_event_name,
prompt}); the clock runs from the spawn to the exit (Python start, imports, the embedder's
load, the database work, the printed block). Reports p50 / p95 / max over all prompts,
over the first prompts of sessions and over the others, with what the block held.

Writes bench/results/hook-latency-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench.reports import machine, percentile, write_results

COGD = str(Path(sys.executable).with_name("cogd"))
CORRECTION = ("Answering a date question from the summary alone is wrong when the user "
              "said the exact day; it is fine when only the month was ever said.")
# Claude Code's documented default for a command hook, and what README's example sets
CLAUDE_DEFAULT_TIMEOUT_S = 60
README_TIMEOUT_S = 15
PIECES = ("correction", "handoff", "dmn", "workflow", "recall", "goal")


def stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(percentile(values, 50), 1),
            "p95": round(percentile(values, 95), 1), "max": round(max(values), 1),
            "mean": round(sum(values) / len(values), 1)}


def setup(settings: Any, url: str, user: str) -> None:
    """The user's correction (as consolidation leaves one: parsed fails-when/fine-when)."""
    from agent.db.connect import connect
    from agent.db.queries import vector_text
    from agent.runtime import Runtime
    from agent.services.records.sessions import ensure_user

    vec = Runtime(settings).universal.embed_documents([CORRECTION],
                                                      memory_type="correction")[0]
    with connect(url, app="cogd-bench", autocommit=True) as conn:
        uid = ensure_user(conn, user)
        conn.execute(
            "INSERT INTO memories (memory_type, content, universal_embedding, user_id, "
            "fails_when, fine_when) VALUES ('correction', %s, %s::vector, %s, %s, %s)",
            (CORRECTION, vector_text(vec), uid, "the user said the exact day",
             "only the month was ever said"))


def dmn_thought(url: str, user: str, session: str, text: str) -> None:
    """A pending proactive_recall thought for the Claude Code session, as the idle DMN
    writes one for a watch-imported task-completion turn."""
    from agent.db.connect import connect
    from agent.services.access.transcripts import claude_session
    from agent.services.records.sessions import ensure_session, ensure_user

    with connect(url, app="cogd-bench", autocommit=True) as conn, conn.transaction():
        sid = ensure_session(conn, ensure_user(conn, user), claude_session(session),
                             channel="import")
        conn.execute(
            "INSERT INTO thoughts (kind, content, theme, source_ids, session_id, user_id) "
            "VALUES ('proactive_recall', %s, 'task_completion', %s::jsonb, %s, "
            "(SELECT user_id FROM sessions WHERE session_id = %s))",
            (f"Earlier: {text}", json.dumps([f"bench:{uuid.uuid4()}",
                                             {"trigger_detector": "bench"}]), sid, sid))


def prompt(data_dir: Path, user: str, session: str,
           text: str) -> tuple[float, dict[str, Any] | None, str]:
    """Wall ms of one `cogd hook --json` (spawn to exit), its answer (None: it printed
    nothing, past its --timeout), its stderr."""
    payload = {"session_id": session, "transcript_path": f"/tmp/{session}.jsonl",
               "cwd": "/tmp", "hook_event_name": "UserPromptSubmit", "prompt": text}
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGD_")}
    start = time.perf_counter()
    proc = subprocess.run([COGD, "--data-dir", str(data_dir), "hook", "--user", user,
                           "--json"],
                          input=json.dumps(payload), env=env, capture_output=True,
                          text=True, check=False)
    wall = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"cogd hook failed ({proc.returncode}): {proc.stderr}")
    return wall, (json.loads(proc.stdout) if proc.stdout.strip() else None), proc.stderr


def run(n_prompts: int, per_session: int, turns: int, seed: int, db: Path | None,
        keep: bool) -> dict[str, Any]:
    from bench.common import import_corpus, scratch_database
    from bench.data.synth import generate

    corpus = generate(n_turns=turns, seed=seed)
    texts = list(dict.fromkeys(q.text for q in corpus.questions))
    while len(texts) < n_prompts:
        texts += texts
    texts = texts[:n_prompts]
    facts = [t.content for t in corpus.turns if t.role == "user"][:n_prompts]
    # the account the import gives the conversation: its user turns' speaker
    user = next(t.speaker for t in corpus.turns if t.role == "user")
    data: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine(),
                            "load_before": os.getloadavg(), "prompts": n_prompts,
                            "per_session": per_session, "turns": turns, "seed": seed}

    def measure(settings: Any, url: str) -> None:
        from agent.providers.text import default_counter
        from agent.services.access.hook import render

        count = default_counter().count
        setup(settings, url, user)
        data_dir = Path(settings.data_dir)
        rows: list[dict[str, Any]] = []
        session = ""
        for i, text in enumerate(texts):
            if i % per_session == 0:
                session = str(uuid.uuid4())
            if i % 3 == 1:
                dmn_thought(url, user, session, facts[i % len(facts)])
            wall, out, err = prompt(data_dir, user, session, text)
            items = out["items"] if out else []
            rows.append({"i": i, "first": i % per_session == 0, "ms": round(wall, 1),
                         "work_ms": out["ms"] if out else None,
                         "chars": len(render(items)), "tokens": count(render(items)),
                         "pieces": sorted({x["piece"] for x in items}),
                         "timed_out": "no answer within" in err})
        data["rows"] = rows

    if db is not None:
        from agent.config import load_settings
        from agent.db.connect import resolve

        settings = load_settings(data_dir=db)
        data["import"] = {"reused": str(db)}
        measure(settings, resolve(settings).url)
    else:
        with scratch_database(keep=keep) as (settings, url):
            data["import"] = import_corpus(settings, url, corpus)
            measure(settings, url)
    data["load_after"] = os.getloadavg()
    rows = data["rows"]
    data["all"] = stats([r["ms"] for r in rows])
    data["first"] = stats([r["ms"] for r in rows if r["first"]])
    data["later"] = stats([r["ms"] for r in rows if not r["first"]])
    data["work"] = stats([r["work_ms"] for r in rows if r["work_ms"] is not None])
    data["printed"] = {p: sum(p in r["pieces"] for r in rows) for p in PIECES}
    data["max_tokens_printed"] = max(r["tokens"] for r in rows)
    data["empty"] = sum(r["chars"] == 0 for r in rows)
    data["timed_out"] = sum(r["timed_out"] for r in rows)
    data["user"] = user
    data["mean_chars"] = round(sum(r["chars"] for r in rows) / len(rows))
    return data


def markdown(data: dict[str, Any], command: str) -> str:
    m = data["machine"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "?"

    def row(name: str, s: dict[str, Any]) -> str:
        return (f"| {name} | {s['n']} | {s['p50']:.0f} | {s['p95']:.0f} | {s['max']:.0f} | "
                f"{s['mean']:.0f} |" if s["n"] else f"| {name} | 0 | | | | |")

    p95 = data["all"]["p95"]
    lines = [
        f"# `cogd hook` latency, one process per prompt ({data['date']})", "",
        f"Command: `{command}` at commit {commit}. Machine: {m['cpus']} cores, Python "
        f"{m['python']}, {m['platform']}. Load average before {data['load_before'][0]:.1f}, "
        f"after {data['load_after'][0]:.1f} (the machine is shared with other work: wall "
        "times are noisy).", "",
        f"Corpus: bench.data.synth, {data['turns']} turns, seed {data['seed']} "
        f"({json.dumps(data['import'])}), plus one correction. {data['prompts']} prompts in "
        f"Claude Code sessions of {data['per_session']}; a pending DMN thought before every "
        "third. Wall time from the spawn of `cogd hook` to its exit, Claude Code's JSON on "
        "stdin.", "",
        "| prompts | n | p50 ms | p95 ms | max ms | mean ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        row("all", data["all"]), row("a session's first (handoff)", data["first"]),
        row("later in a session", data["later"]),
        row("the hook's own work (in the process, after its start)", data["work"]), "",
        "What the blocks held (prompts that printed each piece): "
        + ", ".join(f"{p} {n}" for p, n in data["printed"].items())
        + f"; {data['empty']} prompts printed nothing, {data['timed_out']} of them because "
        f"the hook's own --timeout (10 s) passed; {data['mean_chars']} characters a prompt "
        f"on average, at most {data['max_tokens_printed']} tokens (the budget: 400).", "",
        f"p95 {p95 / 1000:.2f} s against Claude Code's limits: the `timeout` README's "
        f"settings.json example sets ({README_TIMEOUT_S} s), the documented default for a "
        f"command hook ({CLAUDE_DEFAULT_TIMEOUT_S} s), and `cogd hook --timeout` (10 s: "
        "past it, the hook prints nothing and commits nothing).", "",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--per-session", type=int, default=10)
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--db", type=Path, default=None,
                        help="a data dir holding the synth import already (rows are added)")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway data dir")
    args = parser.parse_args(argv)
    data = run(max(1, args.prompts), max(1, args.per_session), args.turns, args.seed,
               args.db, args.keep)
    command = "python -m bench hook " + " ".join(argv if argv is not None else sys.argv[1:])
    stem = write_results("hook-latency", data, markdown(data, command.strip()))
    data["files"] = [f"{stem.name}.md", f"{stem.name}.json"]
    return data
