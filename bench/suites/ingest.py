"""Bulk import throughput: `cogd import` of a generated history, against the embedder's ceiling.

    python -m bench ingest                      # 10,000 and 100,000 turns (hours on 2 cores)
    python -m bench ingest --turns 10000        # one size
    python -m bench ingest --turns 2000 --no-night --sweep-turns 200   # a smoke run

For each size: bench/data/history.py writes one person's two years of conversations as
cogd JSONL and as ChatGPT's conversations.json (the same messages); each file is imported
by the real `cogd import FILE --json` (a subprocess: process start and model load
included) into a fresh embedded Postgres; the report gives turns/s, the import process's
peak RSS (its VmHWM, read while it runs: the Postgres server's memory is not in it) and, on the cogd
import's result, the time of one `night-cycle` run (NightCycle in-process; the night_cycle
LLM role: the heuristic extractive fallback unless --llm).

The ceiling: the universal embedder alone on the same texts the import embeds (each turn's
content and its contextual index text, as TurnWriter builds them), on a sample of the
history's turns, for several batch sizes and onnxruntime intra-op thread counts; a turn
costs two texts, so the ceiling in turns/s is half the texts/s (a little more where
texts repeat). The import's own setting (the configured embedder) is the row marked
`import`. The load average is recorded: on a machine shared with other work every figure
is lower than alone, and the report says so.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import scratch_database
from bench.reports import machine, write_results

GOALS = {"turns_per_s": 250.0, "chatgpt_within": 0.20, "rss_mb": 1536.0, "night_s": 900.0}
SWEEP = ((64, 0), (256, 0), (256, 1), (256, 2), (512, 2))  # (batch, threads; 0: onnx default)


def ceiling(turns: list[dict[str, Any]], settings: Any) -> list[dict[str, Any]]:
    """Texts/s and turns/s of the universal embedder alone on the sample's texts."""
    from agent.domain.contextual import Said, turn_text
    from agent.providers.local import LocalEmbedder
    from agent.runtime import Runtime

    runtime = Runtime(settings)
    cfg = runtime.index_config
    texts: list[str] = []
    last: dict[str, Said] = {}
    for t in turns:
        said = Said(t["content"], t["role"], t["speaker"],
                    dt.datetime.fromisoformat(t["timestamp"]))
        texts += [t["content"], turn_text(said, last.get(t["session"]), cfg)]
        last[t["session"]] = said
    unique = list(dict.fromkeys(texts))
    rows = []
    configured = runtime.universal
    for batch, threads in (*SWEEP, (None, None)):
        if batch is None:  # the import's own embedder, as configured
            embedder: Any = configured
        else:
            embedder = LocalEmbedder(batch_size=batch, threads=threads or None)
        embedder.embed_documents(unique[:64])  # load and warm
        load = os.getloadavg()[0]
        start = time.perf_counter()
        embedder.embed_documents(unique)
        seconds = time.perf_counter() - start
        rows.append({"batch": batch if batch is not None else embedder.batch_size,
                     "threads": "import" if batch is None else (threads or "default"),
                     "texts": len(unique), "texts_per_s": round(len(unique) / seconds, 1),
                     "turns_per_s": round(len(turns) / seconds, 1),
                     "load": round(max(load, os.getloadavg()[0]), 2)})
        print(f"ceiling {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def cogd_import(settings: Any, url: str, path: Path, fmt: str, batch: int
                ) -> dict[str, Any]:
    """`cogd import PATH --format FMT --json` as a subprocess: its summary, wall time and
    peak RSS."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGD_")}
    env.pop("DATABASE_URL", None)
    env.update(COGD_DATABASE_URL=url, COGD_DATA_DIR=str(settings.data_dir))
    cogd = Path(sys.executable).with_name("cogd")
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([str(cogd), "import", str(path), "--format", fmt, "--json",
                                 "--batch-size", str(batch)], stdout=out, stderr=err, env=env)
        peak = 0  # kB: the process's VmHWM (its own high-water mark since its exec)
        while proc.poll() is None:
            peak = max(peak, _hwm_kb(proc.pid))
            time.sleep(0.2)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"cogd import failed ({proc.returncode}): {err.read()[-2000:]}")
        summary = json.loads(out.read().strip().splitlines()[-1])
    return {"format": fmt, "inserted": summary["inserted"], "duplicates": summary["duplicates"],
            "errors": summary["errors"], "skipped": summary.get("skipped", {}),
            "seconds": round(seconds, 1),
            "turns_per_s": round(summary["inserted"] / seconds, 1),
            "peak_rss_mb": round(peak / 1024, 1),
            "load": round(max(load, os.getloadavg()[0]), 2)}


def _hwm_kb(pid: int) -> int:
    """Peak resident memory of a running process (kB), from /proc; 0 once it is gone.
    Not getrusage: a child forked from this process (which holds the models and the
    night cycle by then) reports this process's size as its own maximum."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def night(settings: Any, url: str, llm: str) -> dict[str, Any]:
    from night_cycle.runner import NightCycle

    settings.llm.roles["night_cycle"] = llm
    load = os.getloadavg()[0]
    start = time.perf_counter()
    result = NightCycle(settings, url).run()
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 1), "llm": llm,
            "stage_seconds": {k: v.get("seconds") for k, v in result["stages"].items()},
            "load": round(max(load, os.getloadavg()[0]), 2)}


def run_size(n: int, args: argparse.Namespace, work: Path, out: dict[str, Any],
             save: Any) -> None:
    """Measure one size into `out`, calling save() after each step (a long run stopped
    midway still leaves its report)."""
    from bench.data.history import chatgpt_export, cogd_jsonl

    end = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(hours=1)
    jsonl = work / f"history-{n}.jsonl"
    with jsonl.open("w") as f:
        for line in cogd_jsonl(n, args.seed, end=end):
            f.write(line + "\n")
    export = work / f"conversations-{n}.json"
    export.write_text(json.dumps(chatgpt_export(n, args.seed, end=end)))
    out.update({"turns": n, "files_mb": {
        "cogd": round(jsonl.stat().st_size / 2**20, 1),
        "chatgpt": round(export.stat().st_size / 2**20, 1)}})
    with scratch_database() as (settings, url):
        if args.sweep_turns:
            with jsonl.open() as f:
                sample = [json.loads(next(f)) for _ in range(min(n, args.sweep_turns))]
            out["ceiling"] = ceiling(sample, settings)
            save()
        out["cogd"] = cogd_import(settings, url, jsonl, "cogd", args.batch_size)
        print(f"{n}: cogd {out['cogd']}", file=sys.stderr, flush=True)
        save()
        if args.night:
            out["night"] = night(settings, url, args.llm)
            print(f"{n}: night {out['night']}", file=sys.stderr, flush=True)
            save()
    if "chatgpt" in args.formats:
        with scratch_database() as (settings, url):
            out["chatgpt"] = cogd_import(settings, url, export, "chatgpt", args.batch_size)
            print(f"{n}: chatgpt {out['chatgpt']}", file=sys.stderr, flush=True)
            save()


def verdicts(size: dict[str, Any]) -> dict[str, str]:
    """Each goal: met, not met, or not measured."""
    def say(ok: bool | None) -> str:
        return "not measured" if ok is None else ("met" if ok else "not met")

    cogd, gpt = size.get("cogd"), size.get("chatgpt")
    rss = max((r["peak_rss_mb"] for r in (cogd, gpt) if r), default=None)
    if size["turns"] < 100000:  # the goals are set at 100k turns
        return dict.fromkeys(("turns_per_s", "chatgpt_within_20pct", "peak_rss", "night_cycle"),
                             "not measured at 100k")
    return {k: v for k, v in {
        "turns_per_s": say(None if not cogd else cogd["turns_per_s"] >= GOALS["turns_per_s"]),
        "chatgpt_within_20pct": say(None if not (cogd and gpt) else
                                    gpt["turns_per_s"] >= cogd["turns_per_s"]
                                    * (1 - GOALS["chatgpt_within"])),
        "peak_rss": say(None if rss is None else rss <= GOALS["rss_mb"]),
        "night_cycle": say(None if "night" not in size else
                           size["night"]["seconds"] <= GOALS["night_s"]),
    }.items()}


def markdown(d: dict[str, Any]) -> str:
    lines = [f"# Bulk import throughput, {d['date']}", "",
             f"`{d['command']}` at commit {d['commit']}, {d['machine']['cpus']} CPUs "
             f"({d['machine']['processor']}). Generated history (bench/data/history.py, seed "
             f"{d['seed']}): conversations of 6-60 messages, user 6-30 words, assistant 15-70. "
             "Each file imported by `cogd import FILE --json` (a subprocess: start and model "
             "load included) into a fresh embedded Postgres. Peak RSS: the import process's "
             "VmHWM (polled every 0.2 s), not the Postgres server's.", ""]
    for size in d["sizes"]:
        n = size["turns"]
        lines += [f"## {n:,} turns", "", "| measure | value | goal |", "| --- | --- | --- |"]
        v = verdicts(size)
        for fmt in ("cogd", "chatgpt"):
            r = size.get(fmt)
            if r is None:
                lines.append(f"| {fmt} import | not measured | |")
                continue
            goal = (f"≥ {GOALS['turns_per_s']:.0f} turns/s at 100k: {v['turns_per_s']}"
                    if fmt == "cogd" else f"within 20 % of cogd: {v['chatgpt_within_20pct']}")
            lines.append(f"| {fmt} import ({size.get('files_mb', {}).get(fmt)} MB) | "
                         f"{r['inserted']} turns in {r['seconds']} s: **{r['turns_per_s']} "
                         f"turns/s** (load {r['load']}) | {goal} |")
            lines.append(f"| {fmt} import peak RSS | {r['peak_rss_mb']} MB | ≤ 1.5 GB: "
                         f"{v['peak_rss']} |")
            if r.get("skipped"):
                lines.append(f"| {fmt} messages skipped | {r['skipped']} | |")
        if "night" in size:
            nc = size["night"]
            lines.append(f"| night cycle on the cogd import | {nc['seconds']} s (LLM role "
                         f"`{nc['llm']}`, load {nc['load']}) | ≤ 15 min at 100k: "
                         f"{v['night_cycle']} |")
        if size.get("ceiling"):
            best = max(size["ceiling"], key=lambda r: r["texts_per_s"])
            mine = next(r for r in size["ceiling"] if r["threads"] == "import")
            share = size["cogd"]["turns_per_s"] / mine["turns_per_s"] if size.get("cogd") else 0
            reached = (f"the import reached {share:.0%} of it" if size.get("cogd")
                       else "the import: not measured yet")
            lines += ["", f"Embedder alone on {size['ceiling'][0]['texts']} distinct texts of "
                      "the history (content and contextual text of each turn): the ceiling. "
                      f"The import's embedder: {mine['turns_per_s']} turns/s; {reached}. "
                      f"Best setting here: batch {best['batch']}, threads "
                      f"{best['threads']}, {best['turns_per_s']} turns/s.", "",
                      "| batch | intra-op threads | texts/s | turns/s | load |",
                      "| --- | --- | --- | --- | --- |"]
            lines += [f"| {r['batch']} | {r['threads']} | {r['texts_per_s']} | "
                      f"{r['turns_per_s']} | {r['load']} |" for r in size["ceiling"]]
        if "night" in size:
            lines += ["", "Night-cycle stages (s): " + ", ".join(
                f"{k}: {s}" for k, s in size["night"]["stage_seconds"].items())]
        lines.append("")
    if d.get("notes"):
        lines += ["## Notes", "", *d["notes"], ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench ingest", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", default="10000,100000",
                    help="comma-separated history sizes [default: 10000,100000]")
    ap.add_argument("--formats", default="cogd,chatgpt",
                    help="cogd and/or chatgpt [default: both]")
    ap.add_argument("--batch-size", type=int, default=256, help="cogd import --batch-size")
    ap.add_argument("--sweep-turns", type=int, default=500,
                    help="turns in the embedder-ceiling sample (0: no ceiling) [500]")
    ap.add_argument("--no-night", dest="night", action="store_false",
                    help="skip the night cycle on the cogd import")
    ap.add_argument("--llm", default="heuristic", help="profile for the night_cycle role")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--name", default="ingest", help="report name [ingest]")
    args = ap.parse_args(argv)
    args.formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    sizes = [int(x) for x in args.turns.split(",") if x.strip()]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"
    data: dict[str, Any] = {
        "date": dt.date.today().isoformat(), "seed": args.seed, "commit": commit,
        "command": "python -m bench ingest " + " ".join(argv if argv is not None
                                                        else sys.argv[1:]),
        "goals": GOALS, "machine": machine(), "sizes": []}
    def save() -> None:
        for size in data["sizes"]:
            size["verdicts"] = verdicts(size)
        write_results(args.name, data, markdown(data), indent=2)

    with tempfile.TemporaryDirectory(prefix="cogd-ingest-") as work:
        for n in sizes:
            data["sizes"].append({"turns": n})
            run_size(n, args, Path(work), data["sizes"][-1], save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
