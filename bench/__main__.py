"""Run cogd's benchmarks: `python -m bench all [--quick]` or `python -m bench <suite> [args]`.

    python -m bench all            # quality, speed, then loop and night when present
    python -m bench all --quick    # the same, smaller (a few minutes)
    python -m bench quality --turns 600
    python -m bench <suite> ...    # any suite of bench/suites: calibrate, providers...
    python -m bench <suite> --help # its options
    python -m bench synth|convo --out DIR ...   # write a generated corpus (bench/data)

`all` runs each suite in turn; a suite whose module is missing or fails is recorded as such
in the summary instead of stopping the run. It writes bench/results/summary-<date>.md and
.json (summary-quick-<date> with --quick): the machine, each suite's status and wall time,
its headline numbers and its result files.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import importlib
import inspect
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from bench.data import GENERATORS
from bench.reports import RESULTS, machine, write_results
from bench.reports.summary import headline, markdown
from bench.suites import SUITES

ALL = ("quality", "speed", "loop", "night")


def module_name(part: str) -> str | None:
    """The module that runs `python -m bench <part>`: a suite, or a corpus generator."""
    if part in SUITES:
        return f"bench.suites.{part}"
    if part in GENERATORS:
        return f"bench.data.{part}"
    return None


def call_main(module: Any, part: str, argv: list[str]) -> Any:
    """module.main(argv), or main() with sys.argv set when it takes no arguments."""
    main = module.main
    saved = sys.argv
    sys.argv = [f"python -m bench {part}", *argv]
    try:
        if inspect.signature(main).parameters:
            return main(argv)
        return main()
    finally:
        sys.argv = saved


def run_part(part: str, argv: list[str]) -> dict[str, Any]:
    """Run one part; never raises: {"status": ok | missing | failed, ...}."""
    started = time.time()
    out: dict[str, Any] = {"part": part, "argv": argv}
    name = module_name(part) or f"bench.suites.{part}"
    path = name.replace(".", "/") + ".py"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            return {**out, "status": "failed", "error": f"import: {exc}", "wall_s": 0.0}
        return {**out, "status": "missing", "error": f"no module {path}",
                "wall_s": 0.0}
    except Exception as exc:
        return {**out, "status": "failed", "error": f"import: {type(exc).__name__}: {exc}",
                "wall_s": 0.0}
    if not hasattr(module, "main"):
        return {**out, "status": "failed", "error": f"{path} has no main()",
                "wall_s": 0.0}
    quick = "--quick" in argv
    kept = _full_results(part) if quick else {}
    try:
        data = call_main(module, part, argv)
        status, error = "ok", None
    except SystemExit as exc:
        data = None
        status = "ok" if exc.code in (0, None) else "failed"
        error = None if status == "ok" else f"exit status {exc.code}"
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        data, status = None, "failed"
        error = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc()[-3000:]
    out.update(status=status, error=error, wall_s=round(time.time() - started, 1))
    files = sorted(p.name for p in RESULTS.glob(f"{part}*")
                   if p.is_file() and p.stat().st_mtime >= started - 1)
    if quick:
        files = _keep_full_results(part, files, kept)
    out["files"] = files
    if not isinstance(data, dict):  # the part returned no results (None, an exit code): read
        # the JSON it wrote
        data = _newest_json(files)
    out["headline"] = headline(module, part, data) if data is not None else None
    return out


def _full_results(part: str) -> dict[str, bytes]:
    """The part's existing full-run results (no "quick" in the name), to restore if a quick
    run writes over them (a part that names its quick results like its full ones)."""
    return {p.name: p.read_bytes() for p in RESULTS.glob(f"{part}-*")
            if p.is_file() and "quick" not in p.name}


def _keep_full_results(part: str, files: list[str], kept: dict[str, bytes]) -> list[str]:
    """A quick run never replaces a full result: move what it wrote under a full result's
    name to <part>-quick-..., and put the full result back."""
    out = []
    for name in files:
        if "quick" in name:
            out.append(name)
            continue
        quick_name = name.replace(f"{part}-", f"{part}-quick-", 1)
        (RESULTS / name).replace(RESULTS / quick_name)
        if name in kept:
            (RESULTS / name).write_bytes(kept[name])
        out.append(quick_name)
    return out


def _newest_json(files: list[str]) -> Any:
    for name in reversed(files):
        if name.endswith(".json"):
            try:
                return json.loads((RESULTS / name).read_text())
            except (OSError, ValueError):
                return None
    return None



def run_all(quick: bool, parts: tuple[str, ...] = ALL) -> dict[str, Any]:
    started = time.perf_counter()
    load = [round(os.getloadavg()[0], 2)]
    argv = ["--quick"] if quick else []
    results = []
    for part in parts:
        print(f"== bench {part} {' '.join(argv)}", flush=True)
        res = run_part(part, argv)
        print(f"== bench {part}: {res['status']}"
              + (f" ({res['error']})" if res.get("error") else ""), flush=True)
        results.append(res)
    load.append(round(os.getloadavg()[0], 2))
    data = {"date": dt.date.today().isoformat(), "quick": quick, "machine": machine(),
            "command": "python -m bench all" + (" --quick" if quick else ""),
            "wall_s": round(time.perf_counter() - started, 1), "load_average_1min": load,
            "parts": results}
    write_results("summary", data, markdown(data), quick=quick)
    return data


def listing() -> str:
    """Each suite and corpus generator with its docstring's first line (read, not imported)."""
    lines = []
    for title, package, names in (("suites", "suites", SUITES), ("corpora", "data", GENERATORS)):
        lines += ["", f"{title}:"]
        for part in names:
            source = (Path(__file__).parent / package / f"{part}.py").read_text()
            doc = ast.get_docstring(ast.parse(source)) or ""
            lines.append(f"    {part:<18} {doc.splitlines()[0] if doc else ''}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__ + listing())
        return 0
    part, rest = args[0], args[1:]
    if part == "all":
        parser = argparse.ArgumentParser(prog="python -m bench all")
        parser.add_argument("--quick", action="store_true")
        ns = parser.parse_args(rest)
        data = run_all(ns.quick)
        return 0 if all(p["status"] != "failed" for p in data["parts"]) else 1
    name = module_name(part)
    if name is None:
        print(f"no benchmark named {part!r}; suites: all, {', '.join(sorted(SUITES))}; "
              f"corpora: {', '.join(GENERATORS)}", file=sys.stderr)
        return 2
    call_main(importlib.import_module(name), part, rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
