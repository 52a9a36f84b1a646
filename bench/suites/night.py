"""Night-cycle throughput: turns per minute through every stage (the nine of seed 001 and
the overnight thinking), offline.

    python -m bench night            # 10,000 turns (the issue #6 figure)
    python -m bench night --quick    # 2,000 turns

A throwaway embedded Postgres and cortex; bench.synth's conversation (three users:
normal, meso, elder), imported through the live write path (timed apart), then one
`night-cycle` run. The night_cycle LLM role is the heuristic extractive fallback unless
`--llm local` (SmolLM2 summaries: much slower). Writes bench/results/night-<date>.md and
.json (night-quick-<date> with --quick) and prints a summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import time
from typing import Any

from bench.common import scratch_database
from bench.reports import machine, write_results

HANDLES = {0: ("nora", "normal"), 1: ("mia", "meso"), 2: ("eli", "elder")}
STAGE_NAMES = {"1": "flux detection", "2": "block formation", "3": "salience",
               "4": "compression", "5": "dual embedding", "6": "storage",
               "7": "cortex migration", "8": "RAPTOR clustering", "9": "day-table cleanup"}


def corpus(turns: int, days: int, now: dt.datetime) -> str:
    from bench.data.synth import generate

    start = now - dt.timedelta(days=days) + dt.timedelta(hours=2)
    out = io.StringIO()
    for t in generate(turns, 7, start.isoformat(), days, n_facts=40).turns:
        row = json.loads(t.as_json())
        if row["role"] == "user":
            row["speaker"] = HANDLES[int(row["session"].rsplit("-s", 1)[1]) % 3][0]
        out.write(json.dumps(row) + "\n")
    return out.getvalue()


def run(turns: int, days: int, llm: str) -> dict[str, Any]:
    import psycopg

    from agent.runtime import Runtime
    from agent.services.access.importer import Importer, ImportReport, read_lines
    from agent.services.records.sessions import ensure_user
    from night_cycle.runner import NightCycle

    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    text = corpus(turns, days, now)
    with scratch_database() as (settings, url):
        settings.llm.roles["night_cycle"] = llm
        writer = Runtime(settings).turn_writer()
        t0 = time.perf_counter()
        with psycopg.connect(url, autocommit=True) as conn:
            for handle, tier in HANDLES.values():
                ensure_user(conn, handle, tier)
            report = ImportReport()
            Importer(conn, writer, "nora", 256).run(
                read_lines(io.StringIO(text), "nora", report, False), report)
        import_s = time.perf_counter() - t0
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        result = NightCycle(settings, url).run()
        night_s = time.perf_counter() - t0
        load = max(load, os.getloadavg()[0])
    stages = result["stages"]
    return {
        "date": dt.date.today().isoformat(), "turns": report.inserted, "days": days,
        "llm": llm, "import_seconds": round(import_s, 1),
        "import_turns_per_min": round(report.inserted / import_s * 60),
        "night_seconds": round(night_s, 1),
        "turns_per_min": round(report.inserted / night_s * 60),
        "stage_seconds": {k: v["seconds"] for k, v in stages.items()},
        "blocks": stages["2"]["blocks"], "arc_blocks": stages["2"]["arc_blocks"],
        "live_zones": stages["4"]["live_zones"], "summarizer": stages["4"]["summarizer"],
        "migrated": stages["7"]["migrated"], "clusters_by_level": stages["8"][
            "clusters_by_level"], "deleted_by_tier": stages["9"]["deleted_by_tier"],
        "load_average_max": round(load, 2), "machine": machine(),
    }


def markdown(d: dict[str, Any]) -> str:
    lines = [f"# Night-cycle throughput, {d['date']}", "",
             f"{d['turns']} synthetic turns over {d['days']} days, three users (normal, meso, "
             f"elder); night_cycle LLM role: `{d['llm']}` ({d['summarizer']}).", "",
             "| measure | value |", "| --- | --- |",
             f"| night cycle, all stages | {d['night_seconds']} s |",
             f"| **throughput** | **{d['turns_per_min']} turns/min** |",
             f"| import (live write path, for scale) | {d['import_seconds']} s, "
             f"{d['import_turns_per_min']} turns/min |",
             f"| blocks (arc) / live zones | {d['blocks']} ({d['arc_blocks']}) / "
             f"{d['live_zones']} |",
             f"| migrated to the cortex | {d['migrated']} |",
             f"| RAPTOR clusters by level | {d['clusters_by_level']} |",
             f"| day-table rows deleted by tier | {d['deleted_by_tier']} |",
             f"| load average (max seen) | {d['load_average_max']} on "
             f"{d['machine']['cpus']} CPUs |", "",
             "| stage | seconds |", "| --- | --- |"]
    lines += [f"| {k}. {STAGE_NAMES[k]} | {v} |" for k, v in d["stage_seconds"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench night", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="2,000 turns instead of 10,000")
    ap.add_argument("--turns", type=int, default=None)
    ap.add_argument("--days", type=int, default=None)
    ap.add_argument("--llm", default="heuristic", help="profile for the night_cycle role")
    args = ap.parse_args(argv)
    turns = args.turns or (2000 if args.quick else 10000)
    days = args.days or (14 if args.quick else 42)
    data = run(turns, days, args.llm)
    write_results("night", data, markdown(data), quick=args.quick, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
