#!/usr/bin/env python3
"""fdatasync calls per acknowledgment, under `ibi-archive serve` or as CGI processes.

    bench/ack_syncs.py --bin PATH [--kind serve|cgi] [--acks N] [--concurrency C]
                       [--sync-interval VALUE] [--strace FILE] [--serve-log FILE] [--keep]

A copy of sample-archive/ in a temporary directory (with `[acknowledgments]
sync_interval = VALUE` added to its archive.toml when given); N urlRequests issue N keys
(each for the one URL of its answer); then the N acknowledgments of those keys are sent C
at a time, and `perf stat -e syscalls:sys_enter_fdatasync` counts the log's syncs:
attached to `serve` (-p PID) over the acknowledgments alone, or around
`xargs -P C` running one CGI process per acknowledgment. Every acknowledgment must be
counted (a line per key in var/acknowledgments.log). The counts do not depend on the
machine's load; the seconds printed beside them do. --strace FILE counts with
`strace -f -c` instead (every system call, FILE its summary; slower calls, so fewer
acknowledgments share a sync).

Needs perf (with access to the syscalls tracepoints) and python3.
"""

import argparse
import http.client
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVICE = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
IBIS = [
    "LK47B6W/362SFKH",
    "8JMKD3MGP8W/35MME4E",
    "8JMKD3MGP7W/3EPGUE5",
    "sid.inpe.br/mtc-m18@80/2009/08.25.19.43",
    "urlib.net/www/2014/03.25.23.20",
    "8JMKD3MGP8W/3C9EP6P",
]


def pair(text, name):
    for line in text.split("\r\n"):
        if line.startswith(name + " "):
            return line[len(name) + 1 :]
    sys.exit(f"no {name} in {text!r}")


def url_request(i):
    return (
        "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175"
        f"&parsedibiurl.ibi={IBIS[i % len(IBIS)]}"
    )


def acknowledgment(answer):
    ibi = pair(answer, "ibi").strip("{}").replace(" ", "%20")
    return (
        "servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175"
        f"&contenttype=Data&ibi={ibi}&url={pair(answer, 'url')}&urlkey={pair(answer, 'urlkey')}"
    )


def pair_of_query(query, name="urlkey"):
    return dict(p.split("=", 1) for p in query.split("&"))[name]


def cgi_env(root, query):
    return {
        "GATEWAY_INTERFACE": "CGI/1.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REQUEST_METHOD": "GET",
        "QUERY_STRING": query,
        "PATH_INFO": "",
        "SCRIPT_NAME": "/" + SERVICE,
        "REMOTE_ADDR": "127.0.0.1",
        "IBI_ARCHIVE_ROOT": root,
    }


def cgi_body(out):
    return out.split(b"\r\n\r\n", 1)[1].decode() if b"\r\n\r\n" in out else out.split(b"\n\n", 1)[1].decode()


def counter(args, target):
    """The command that counts the system calls of `target` (["-p", PID] or ["--", ...])."""
    if args.strace:
        return ["strace", "-f", "-c", "-o", args.strace] + target
    return ["perf", "stat", "-e", "syscalls:sys_enter_fdatasync"] + target


def fdatasyncs(args, stderr):
    """The fdatasync calls counted: perf's line on stderr, or strace's summary file (with
    the total of every system call beside them)."""
    if args.strace:
        text = open(args.strace).read()
        syncs = total = 0
        for line in text.splitlines():
            f = line.split()
            if f and f[-1] == "fdatasync":
                syncs = int(f[3])
            if f and f[-1] == "total":
                total = int(f[3])
        return syncs, total
    for line in stderr.splitlines():
        if "sys_enter_fdatasync" in line:
            return int(line.split()[0].replace(",", "")), None
    sys.exit(f"perf said nothing of fdatasync:\n{stderr}")


def run_serve(args, root):
    serve = subprocess.Popen(
        [args.bin, "serve", "--root", root, "--listen", "127.0.0.1:0", "--no-inclusion"],
        stdout=subprocess.PIPE,
        stderr=open(args.serve_log, "w") if args.serve_log else subprocess.DEVNULL,
        text=True,
    )
    line = serve.stdout.readline()
    host, port = line.split(" on http://")[1].split("/")[0].rsplit(":", 1)

    def send(conn, query):
        conn.request("GET", f"/{SERVICE}?{query}")
        r = conn.getresponse()
        return r.status, r.read().decode()

    def get(conn, query):
        status, body = send(conn, query)
        if status != 200:
            sys.exit(f"{status}: {body}")
        return body

    conn = http.client.HTTPConnection(host, int(port))
    acks = [acknowledgment(get(conn, url_request(i))) for i in range(args.acks)]
    conn.close()
    perf = subprocess.Popen(
        counter(args, ["-p", str(serve.pid)]),
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)  # perf attaches before the first acknowledgment
    queue = list(reversed(acks))
    lock = threading.Lock()

    failures = []

    def client():
        try:
            c = http.client.HTTPConnection(host, int(port))
            while True:
                with lock:
                    if not queue:
                        break
                    q = queue.pop()
                for _ in range(100):
                    try:
                        status, body = send(c, q)
                    except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                        # serve closes a connection after 100 requests: this one was not
                        # read; sent again on a new connection.
                        status, body = None, ""
                    if status == 200:
                        break
                    # Refused (503: the connection just closed still counted among the 16
                    # of this address), or closed: again, on a new connection.
                    c.close()
                    time.sleep(0.05)
                    c = http.client.HTTPConnection(host, int(port))
                assert (status, body) == (200, "notice {acknowledgment received}"), body
            c.close()
        except BaseException as e:
            failures.append(e)
            raise

    began = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - began
    if failures:
        sys.exit(f"a client failed: {failures[0]!r}")
    perf.send_signal(signal.SIGINT)
    _, err = perf.communicate()
    serve.send_signal(signal.SIGTERM)
    serve.wait()
    return fdatasyncs(args, err), seconds, len(set(pair_of_query(a) for a in acks))


def run_cgi(args, root):
    acks = []
    for i in range(args.acks):
        out = subprocess.run(
            [args.bin], env=cgi_env(root, url_request(i)), capture_output=True, check=True
        ).stdout
        acks.append(acknowledgment(cgi_body(out)))
    env = cgi_env(root, "")
    del env["QUERY_STRING"]
    # One process per acknowledgment, C at a time; QUERY_STRING from each line.
    command = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + ["QUERY_STRING={}", args.bin]
    began = time.monotonic()
    run = subprocess.run(
        counter(args, ["--", "xargs", "-d", "\n", "-P", str(args.concurrency), "-I{}"] + command),
        input="\n".join(acks) + "\n",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.monotonic() - began
    if run.returncode != 0:
        sys.exit(run.stderr)
    return fdatasyncs(args, run.stderr), seconds, len(set(pair_of_query(a) for a in acks))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--kind", choices=["serve", "cgi"], default="serve")
    p.add_argument("--acks", type=int, default=800)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--sync-interval")
    p.add_argument(
        "--strace",
        metavar="FILE",
        help="count with strace -f -c (its summary to FILE, every call) rather than perf",
    )
    p.add_argument("--keep", action="store_true", help="keep the Archive (its path on stderr)")
    p.add_argument("--serve-log", help="where serve's request log goes (default: nowhere)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "archive")
        if args.keep:
            root = tempfile.mkdtemp(prefix="ack-syncs.")
            os.rmdir(root)
            print(f"the Archive: {root}", file=sys.stderr)
        shutil.copytree(os.path.join(REPO, "sample-archive"), root, symlinks=True)
        if args.sync_interval is not None:
            with open(os.path.join(root, "archive.toml"), "a") as f:
                f.write(f'\n[acknowledgments]\nsync_interval = "{args.sync_interval}"\n')
        (syncs, calls), seconds, keys = (run_serve if args.kind == "serve" else run_cgi)(
            args, root
        )
        with open(os.path.join(root, "var", "acknowledgments.log")) as f:
            lines = sum(1 for _ in f)
    # Two answers in one second for one URL with the same 6-digit nonce are one key: its
    # second acknowledgment is answered alike and not counted.
    if lines != keys:
        sys.exit(f"{lines} lines in the log for {keys} keys ({args.acks} acknowledgments)")
    print(
        f"{args.kind}: {syncs} fdatasync / {args.acks} acknowledgments = {syncs / args.acks:.3f}"
        f" ({args.concurrency} at a time, {seconds:.1f} s, {args.acks / seconds:.0f}/s;"
        f" load average {os.getloadavg()[0]:.1f})"
        + (f"; {calls} system calls in all, {calls / args.acks:.1f} each" if calls else "")
    )


if __name__ == "__main__":
    main()
