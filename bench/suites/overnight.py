"""Overnight thinking (night cycle stage 10, seed 000 §9.5-9.6): how many items a night
produces per kind, and how many were later shown, cited or confirmed, offline.

    python -m bench overnight          # 600 turns over 12 days, one night

A throwaway embedded Postgres and cortex; bench.synth's conversation for one user
(imported through the live write path), plus what the thinking phase works on: two
contradicting memory pairs, two user-submitted problems, and three off-corpus questions
asked as turns and recalled (their recall_log verdict decides whether they are open
questions). One `night-cycle` run with the night_cycle role on `--llm` (heuristic by
default: every item is the named heuristic's, confidence 0.2). Then the user's next
session start (agent/services/reach/handoff.py's Continuity.turn, as the loop calls it).

"Later cited or confirmed": a thought id among recall_log items, in memory_citations, or
among the handoff's shown items (thoughts.injected_at). No model reply is generated here,
so nothing can be cited: the figure counts what the next session was shown.
Writes bench/results/overnight-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import time
from typing import Any

from bench.common import scratch_database
from bench.reports import machine, write_results

QUESTIONS = ("What is the capital of Mongolia?", "How many moons does Neptune have?",
             "Who wrote the Tale of Genji?")
CONTRADICTIONS = (("The team stand-up is at nine every morning.",
                   "The team stand-up moved to eleven."),
                  ("The budget for the trip is 2000 euros.",
                   "The trip budget is 3500 euros now."))
PROBLEMS = ("How should I plan the next two weeks around the release?",
            "Why do my runs feel harder on Mondays?")


def corpus(turns: int, days: int, now: dt.datetime) -> str:
    from bench.data.synth import generate

    start = now - dt.timedelta(days=days) + dt.timedelta(hours=2)
    out = io.StringIO()
    for t in generate(turns, 7, start.isoformat(), days, n_facts=40).turns:
        row = json.loads(t.as_json())
        if row["role"] == "user":
            row["speaker"] = "nora"
        out.write(json.dumps(row) + "\n")
    for i, q in enumerate(QUESTIONS):
        at = now - dt.timedelta(hours=3 - i * 0.1)
        out.write(json.dumps({"session": "asked", "speaker": "nora", "role": "user",
                              "content": q, "timestamp": at.isoformat(),
                              "external_id": f"asked-{i}"}) + "\n")
    return out.getvalue()


def run(turns: int, days: int, llm: str) -> dict[str, Any]:
    import psycopg

    from agent.providers.text import default_counter
    from agent.runtime import Runtime
    from agent.services.access.importer import Importer, ImportReport, read_lines
    from agent.services.records.sessions import ensure_user
    from agent.services.thinking import problems
    from night_cycle.runner import NightCycle

    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    with scratch_database() as (settings, url):
        settings.llm.roles["night_cycle"] = llm
        writer = Runtime(settings).turn_writer()
        with psycopg.connect(url, autocommit=True) as conn:
            ensure_user(conn, "nora", "elder")
            report = ImportReport()
            Importer(conn, writer, "nora", 256).run(
                read_lines(io.StringIO(corpus(turns, days, now)), "nora", report, False),
                report)
            user = conn.execute("SELECT user_id FROM users WHERE handle = 'nora'").fetchone()[0]  # type: ignore[index]
            recaller = Runtime(settings).recaller()
            verdicts = []
            for entry, session, text in conn.execute(
                    "SELECT entry_id, session_id, content FROM day_table "
                    "WHERE external_id LIKE 'asked-%' ORDER BY created_at").fetchall():
                out = recaller.recall(conn, text, entry_id=entry, session_id=session,
                                      user_id=user, reconsolidate=False,
                                      recent_ids={f"day_table:{entry}"})  # as the loop does
                verdicts.append(out.result.verdict)
            for a, b in CONTRADICTIONS:
                ids = [conn.execute("INSERT INTO memories (user_id, content, memory_type) "
                                    "VALUES (%s, %s, 'fact') RETURNING memory_id",
                                    (user, t)).fetchone()[0] for t in (a, b)]  # type: ignore[index]
                conn.execute("INSERT INTO memory_links (source_id, target_id, link_type) "
                             "VALUES (%s, %s, 'contradicts')", ids)
            for p in PROBLEMS:
                problems.add(conn, user, p)
        t0 = time.perf_counter()
        result = NightCycle(settings, url).run()
        night_s = time.perf_counter() - t0
        stage = result["stages"]["10"]
        cont = Runtime(settings).continuity(default_counter().count)
        with psycopg.connect(url, autocommit=True) as conn:
            session = conn.execute("INSERT INTO sessions (user_id) VALUES (%s) "
                                   "RETURNING session_id", (user,)).fetchone()[0]  # type: ignore[index]
            text = "Good morning, where were we?"
            entry = conn.execute(
                "INSERT INTO day_table (session_id, user_id, role, content) "
                "VALUES (%s, %s, 'user', %s) RETURNING entry_id", (session, user, text)
            ).fetchone()[0]  # type: ignore[index]
            reach = cont.turn(conn, session_id=session, user_id=user, entry_id=entry,
                              content=text, query_text=text)
            rows = conn.execute(
                "SELECT t.kind, count(*), count(t.injected_at), "
                "count(*) FILTER (WHERE EXISTS (SELECT 1 FROM memory_citations c "
                "  WHERE c.cited_id = t.thought_id) OR EXISTS (SELECT 1 FROM recall_log r "
                "  WHERE r.items::text LIKE '%%' || t.thought_id::text || '%%')), "
                "round(avg(t.confidence)::numeric, 2) "
                "FROM thoughts t WHERE t.kind IN ('overnight', 'creative_drift') "
                "GROUP BY t.kind ORDER BY t.kind").fetchall()
    kinds = {k: {"produced": n, "shown_in_handoff": shown, "cited": cited,
                 "mean_confidence": float(conf) if conf is not None else None}
             for k, n, shown, cited, conf in rows}
    items = (reach.metadata.get("handoff") or {}).get("items", [])
    return {
        "date": dt.date.today().isoformat(), "turns": report.inserted, "days": days,
        "llm": llm, "night_seconds": round(night_s, 1),
        "stage10_seconds": stage["seconds"], "queued": stage["queued"],
        "worked": stage["worked"], "worked_by": stage["worked_by"], "drift": stage["drift"],
        "model": stage["model"], "question_verdicts": verdicts, "kinds": kinds,
        "handoff_items": [i["kind"] for i in items],
        "clusters_by_level": result["stages"]["8"]["clusters_by_level"],
        "migrated": result["stages"]["7"]["migrated"],
        "machine": machine(),
    }


def markdown(d: dict[str, Any]) -> str:
    lines = [f"# Overnight thinking, {d['date']}", "",
             f"{d['turns']} synthetic turns of one user over {d['days']} days, two "
             "contradicting memory pairs, two user-submitted problems, three off-corpus "
             f"questions (recall verdicts {d['question_verdicts']}); one night, night_cycle "
             f"role `{d['llm']}` ({d['model']}).", "",
             "| measure | value |", "| --- | --- |",
             f"| night cycle, all stages | {d['night_seconds']} s |",
             f"| stage 10 (overnight thinking) | {d['stage10_seconds']} s |",
             f"| queued by the night | {d['queued']} |",
             f"| problems worked (by) | {d['worked']} ({d['worked_by']}) |",
             f"| creative-drift pairs | {d['drift']} (RAPTOR clusters by level "
             f"{d['clusters_by_level']}, {d['migrated']} blocks migrated) |",
             f"| next session's handoff items | {d['handoff_items']} |", "",
             "| kind | produced | shown in the next handoff | cited | mean confidence |",
             "| --- | --- | --- | --- | --- |"]
    for kind, k in d["kinds"].items():
        lines.append(f"| {kind} | {k['produced']} | {k['shown_in_handoff']} | {k['cited']} | "
                     f"{k['mean_confidence']} |")
    lines += ["", "Cited: a thought id in memory_citations or recall_log items; no model "
              "reply is generated here, so 0 is expected offline."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench overnight", description=__doc__)
    ap.add_argument("--turns", type=int, default=600)
    ap.add_argument("--days", type=int, default=12)
    ap.add_argument("--llm", default="heuristic", help="profile for the night_cycle role")
    args = ap.parse_args(argv)
    data = run(args.turns, args.days, args.llm)
    write_results("overnight", data, markdown(data), indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
