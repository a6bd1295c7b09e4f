#!/usr/bin/env python3
"""Many client connections held open against one HTTP server on 127.0.0.1, for
bench/resolver-scale.sh.

    conns.py PORT PATH --connections N [--seconds D] [--pid PID] [--keepalive S]
             [--timeout T] [--connect-timeout C] [--open-at-once M] [--reopen K]
             [--reopen-extra E]

1. open: N connections (at most M connecting at once, default 256), each sending
   `GET PATH` and reading the answer. A connection that has its answer sends another
   request every S seconds (default 4: the resolver closes a connection idle 10 s) until
   every one of the N has had its first answer or failed. *held* is the number open with
   an answer at that moment; the others were refused (the server closed them: end of
   file, reset, or a failed write), hung (no answer within T) or failed to connect.
2. load: for D seconds (default 10; 0: none) every held connection sends its requests
   back to back, the next as soon as an answer is read, as `wrk -cN` does. A connection
   that fails is counted and not reopened, so *held_end* says how many lasted.
3. reopen (--reopen K): K held connections are closed and K + E (default 10) new ones
   opened: with the server at its connection limit, K should be answered and E refused.

With --pid, the server's VmRSS and VmHWM (kB, /proc/PID/status) and its open descriptors
are read once the N are held, every second under load (the largest kept) and at the end.
Answers are counted by status code; errors as wrk names them (connect, read: end of file
or reset, write, timeout; and garbled, an answer that is not HTTP). Prints one JSON
object on standard output. Only 127.0.0.1.
"""
import argparse
import asyncio
import collections
import json
import os
import sys
import time


def proc_status(pid):
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    kb = lambda k: int(fields[k].split()[0])  # noqa: E731
    return {"VmRSS": kb("VmRSS"), "VmHWM": kb("VmHWM"), "fds": fds}


class Failure(Exception):
    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind  # eof, reset, write, timeout, garbled (not HTTP)


async def exchange(reader, writer, request, timeout):
    """One request and its answer; returns the status code or raises Failure."""
    try:
        writer.write(request)
    except (ConnectionError, OSError):
        raise Failure("write")

    async def answer():
        try:
            await writer.drain()
        except (ConnectionError, OSError):
            raise Failure("write")
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            raise Failure("eof")
        except (ConnectionResetError, BrokenPipeError):
            raise Failure("reset")
        except (ConnectionError, OSError, asyncio.LimitOverrunError):
            raise Failure("reset")
        lines = head.split(b"\r\n")
        length, chunked = 0, False
        try:
            status = int(lines[0].split()[1])
            for h in lines[1:]:
                name, _, value = h.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"transfer-encoding" and b"chunked" in value.lower():
                    chunked = True
        except (ValueError, IndexError):
            raise Failure("garbled")
        try:
            if chunked:
                while True:
                    size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                    await reader.readexactly(size + 2)
                    if size == 0:
                        break
            elif length:
                await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            raise Failure("eof")
        except (ConnectionError, OSError):
            raise Failure("reset")
        except (ValueError, asyncio.LimitOverrunError):
            raise Failure("garbled")
        return status

    try:
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(timeout):
                return await answer()
        return await asyncio.wait_for(answer(), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        raise Failure("timeout")


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("port", type=int)
    ap.add_argument("path")
    ap.add_argument("--connections", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--pid", type=int, default=0)
    ap.add_argument("--keepalive", type=float, default=4)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--connect-timeout", type=float, default=30)
    ap.add_argument("--open-at-once", type=int, default=256)
    ap.add_argument("--reopen", type=int, default=0)
    ap.add_argument("--reopen-extra", type=int, default=10)
    a = ap.parse_args()
    request = f"GET {a.path} HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\n\r\n".encode()

    out = {"connections": a.connections, "path": a.path}
    first = collections.Counter()        # the first request: answered / eof / reset / …
    close_ms = []                        # connection → refusal seen, for the refused ones
    # Answers and failures of held connections, by phase: open (keep-alive while the
    # others connect), load, after (keep-alive during the reopen phase).
    status = {p: collections.Counter() for p in ("open", "load", "after")}
    errors = {p: collections.Counter() for p in ("open", "load", "after")}
    phase = ["open"]
    held = {}                            # id -> (reader, writer)
    finished_first = [0]
    under_load = [0]
    all_first = asyncio.Event()
    load_go = asyncio.Event()
    stop = asyncio.Event()
    deadline = [0.0]
    connecting = asyncio.Semaphore(a.open_at_once)

    async def first_request(counter, times):
        """Connects and asks once; returns (reader, writer, status) or None."""
        try:
            async with connecting:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", a.port), a.connect_timeout)
        except (OSError, asyncio.TimeoutError, TimeoutError):
            counter["connect"] += 1
            return None
        t0 = time.monotonic()
        try:
            code = await exchange(reader, writer, request, a.timeout)
        except Failure as f:
            kind = "hung" if f.kind == "timeout" else f.kind
            counter[kind] += 1
            if kind != "hung":
                times.append((time.monotonic() - t0) * 1e3)
            writer.close()
            return None
        counter["answered"] += 1
        return reader, writer, code

    async def keep_alive(reader, writer, until):
        while not until.is_set():
            try:
                await asyncio.wait_for(until.wait(), a.keepalive)
            except (asyncio.TimeoutError, TimeoutError):
                status[phase[0]][await exchange(reader, writer, request, a.timeout)] += 1

    async def one(ident):
        got = None
        try:
            got = await first_request(first, close_ms)
            if got is not None:
                status["open"][got[2]] += 1
                held[ident] = got[:2]
        finally:
            finished_first[0] += 1
            if finished_first[0] == a.connections:
                all_first.set()
        if got is None:
            return
        reader, writer = got[:2]
        try:
            await keep_alive(reader, writer, all_first)
            await load_go.wait()
            under_load[0] += 1
            try:
                while time.monotonic() < deadline[0]:
                    status["load"][await exchange(reader, writer, request, a.timeout)] += 1
            finally:
                under_load[0] -= 1
            await keep_alive(reader, writer, stop)
        except Failure as f:
            errors[phase[0]][f.kind] += 1
            held.pop(ident, None)
            writer.close()

    def sample(peak):
        s = proc_status(a.pid)
        for k, v in (s or {}).items():
            peak[k] = max(peak.get(k, 0), v)
        return s

    started = time.monotonic()
    tasks = [asyncio.ensure_future(one(i)) for i in range(a.connections)]
    if a.connections:
        await all_first.wait()
    out["open_seconds"] = round(time.monotonic() - started, 2)
    out["held"] = len(held)
    out["first"] = dict(first)
    out["refused_close_ms_max"] = round(max(close_ms), 1) if close_ms else None
    peak = {}
    out["at_held"] = sample(peak)

    # Load: back to back until the deadline, then the answers still under way.
    phase[0] = "load"
    deadline[0] = time.monotonic() + a.seconds
    load_go.set()
    await asyncio.sleep(0)
    while time.monotonic() < deadline[0]:
        await asyncio.sleep(min(1.0, max(0.0, deadline[0] - time.monotonic())))
        sample(peak)
    while under_load[0] and time.monotonic() < deadline[0] + a.timeout + 1:
        await asyncio.sleep(0.05)
    phase[0] = "after"
    load_n = sum(status["load"].values())
    out["load"] = {
        "seconds": a.seconds,
        "requests": load_n,
        "per_second": round(load_n / a.seconds) if a.seconds else 0,
        "status": {str(k): v for k, v in sorted(status["load"].items())},
        "errors": dict(errors["load"]),
    }
    out["held_end"] = len(held)
    out["peak"] = peak
    out["at_end"] = proc_status(a.pid)

    # Reopen: close K held connections, open K + E new ones.
    if a.reopen:
        victims = list(held)[:a.reopen]
        for ident in victims:
            tasks[ident].cancel()
            held.pop(ident)[1].close()
        await asyncio.sleep(0.5)
        counter, times, conns = collections.Counter(), [], []

        async def again():
            got = await first_request(counter, times)
            if got is not None:
                conns.append(got[1])

        await asyncio.gather(*(again() for _ in range(len(victims) + a.reopen_extra)))
        out["reopen"] = {"closed": len(victims), "opened": len(victims) + a.reopen_extra,
                         "outcome": dict(counter),
                         "refused_close_ms_max": round(max(times), 1) if times else None}
        for w in conns:
            w.close()

    out["open_status"] = {str(k): v for k, v in sorted(status["open"].items())}
    out["open_errors"] = dict(errors["open"])
    out["after_errors"] = dict(errors["after"])
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for _, w in list(held.values()):
        w.close()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
