"""A chunked upload over `cogd serve`'s body limit: how much the client got to send
before it was refused, and how much the server's memory grew (issue 38, finding 4).

    python -m bench body_limit [--mib 300] [--route /v1/recall --route /v1/import]

Offline, in a throwaway embedded Postgres (bench/common.py): `cogd serve` runs as its
own process and one bearer token is made. For each route, a raw socket sends a POST with
`Transfer-Encoding: chunked` (no Content-Length, so the old gate's check never applied)
of `--mib` MiB in 1 MiB chunks, stopping when the server answers or closes. The server's
RSS (VmRSS of its pid, /proc) is sampled every 20 ms on a thread from before the upload
until the answer; the report gives the peak growth over the idle RSS, the bytes the
client sent before the answer, and the answer's status line. Before issue 38's fix a
chunked body was read whole before it was parsed (RSS +895 MiB for 300 MiB in the
issue's report). Writes bench/results/body-limit-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import select
import socket
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import scratch_database
from bench.reports import machine, write_results
from bench.suites.api import start_serve, wait_until_serving

MIB = 1 << 20


def chunked_upload(host: str, port: int, path: str, token: str, total: int,
                   piece: int = MIB, timeout_s: float = 120) -> tuple[bytes, int]:
    """POST `total` bytes to `path` as 1 MiB chunks, stopping as soon as the server
    answers or closes: (what the server answered, bytes of body sent before that)."""
    chunk = b"%x\r\n" % piece + b"x" * piece + b"\r\n"
    sent = 0
    answer = b""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
                     f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        try:
            while sent < total:
                if select.select([sock], [], [], 0)[0]:
                    break  # the server answered (or closed) before the body's end
                sock.sendall(chunk)
                sent += piece
            else:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # refused mid-body: the answer, if any, is in the receive buffer
        try:
            while not _complete(answer) and (got := sock.recv(65536)):
                answer += got
        except (ConnectionResetError, TimeoutError):
            pass
    return answer, sent


def _complete(answer: bytes) -> bool:
    """Whether `answer` holds a whole response: its headers, and the body its
    Content-Length gives."""
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False  # no length: the server's close ends it


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _sampled(pid: int, stop: threading.Event, peak: list[int]) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], _rss_kib(pid))
        time.sleep(0.02)


def run(mib: int, routes: list[str]) -> dict[str, Any]:
    from agent.commands.serve import MAX_BODY_BYTES
    from agent.db.connect import connect
    from agent.services.access.tokens import create
    from agent.services.records.sessions import ensure_user

    data: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine(),
                            "upload_mib": mib, "limit_bytes": MAX_BODY_BYTES, "routes": {}}
    started = time.perf_counter()
    with scratch_database() as (settings, url):
        with connect(url, app="cogd-bench", autocommit=True) as conn:
            token = create(conn, ensure_user(conn, "bench"), "bench", "bench.body_limit",
                           "bench")["token"]
        server, port = start_serve(settings, url)
        try:
            wait_until_serving(server, f"http://127.0.0.1:{port}")
            for route in routes:
                time.sleep(1.0)  # let the last upload's buffers go
                idle = _rss_kib(server.pid)
                peak, stop = [idle], threading.Event()
                sampler = threading.Thread(target=_sampled, args=(server.pid, stop, peak))
                sampler.start()
                t0 = time.perf_counter()
                answer, sent = chunked_upload("127.0.0.1", port, route, token, mib * MIB)
                seconds = time.perf_counter() - t0
                time.sleep(0.2)  # one more sample after the answer
                stop.set()
                sampler.join()
                data["routes"][route] = {
                    "status_line": answer.split(b"\r\n", 1)[0].decode(errors="replace"),
                    "sent_mib": round(sent / MIB, 1),
                    "sent_over_limit_mib": round((sent - MAX_BODY_BYTES) / MIB, 1),
                    "rss_idle_mib": round(idle / 1024, 1),
                    "rss_peak_mib": round(peak[0] / 1024, 1),
                    "rss_growth_mib": round((peak[0] - idle) / 1024, 1),
                    "seconds": round(seconds, 2)}
        finally:
            server.terminate()
            server.wait(60)
    data["wall_s"] = round(time.perf_counter() - started, 1)
    return data


def markdown(data: dict[str, Any]) -> str:
    rows = [f"| `{route}` | {r['status_line']} | {r['sent_mib']} | {r['sent_over_limit_mib']} "
            f"| {r['rss_idle_mib']} | {r['rss_peak_mib']} | {r['rss_growth_mib']} "
            f"| {r['seconds']} |" for route, r in data["routes"].items()]
    limit_mib = data["limit_bytes"] / MIB
    return "\n".join([
        f"# A chunked upload over the body limit ({data['date']})", "",
        f"`cogd serve` (limit {limit_mib:.0f} MiB) in its own process on 127.0.0.1; each "
        f"route gets one POST of {data['upload_mib']} MiB with `Transfer-Encoding: chunked` "
        "(no Content-Length) over a raw socket, in 1 MiB chunks, until the server answers "
        f"or closes. Machine: {data['machine']['cpus']} cores, Python "
        f"{data['machine']['python']}. RSS: the server's VmRSS, sampled every 20 ms.", "",
        "| route | answer | sent MiB | sent past the limit MiB | RSS idle MiB "
        "| RSS peak MiB | RSS growth MiB | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |", *rows, "",
        "- sent: body bytes the client had written to its socket when the answer came "
        "(what the server read, plus what the kernel's socket buffers held).",
        "- The server counts the body as it reads it (agent/commands/serve.py BodyLimit) "
        "and answers 413 with `Connection: close` at the first read past the limit; the "
        "body is never parsed. Before the fix the whole body was read first (the issue's "
        "report: RSS +895 MiB for 300 MiB to /v1/recall).",
        f"Wall time {data['wall_s']} s.", ""])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench body_limit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=300, help="the upload's size")
    parser.add_argument("--route", action="append", default=None,
                        help="a POST route (repeatable); default: /v1/recall and /v1/import")
    args = parser.parse_args(argv)
    data = run(args.mib, args.route or ["/v1/recall", "/v1/import"])
    write_results("body-limit", data, markdown(data))


if __name__ == "__main__":
    main()
