#!/usr/bin/env python3
"""The reports of bench/resolver.sh, from the records it writes while it runs.

    resolver_report.py --results TSV --serial TSV --extra DIR --machine FILE --out FILE
                       --runs N --duration D --conns C --timeout T --dormant-after N
                       --slow S --command CMD [--bench-md FILE]
    resolver_report.py --check-bench-md FILE

Writes the detailed report (--out: per K and Archive kind, the medians over runs, every
run, the misses one after the other, what the resolvers saw of the misbehaving Archives)
and, with --bench-md, the summary table between the marker lines of BENCHMARKS.md (the
section "## The resolver at scale", made after "## Summary" when the markers are
missing). --check-bench-md only checks that the file has both markers or neither.

Every ratio (÷ ceiling, p99 ÷ without) and difference (+p50, +p99 over the floor) is
taken within one run; the tables give the median over runs of each figure.
"""
import argparse
import csv
import datetime
import os
import statistics
import sys

BEGIN = "<!-- resolver-bench:begin -->"
END = "<!-- resolver-bench:end -->"
SECTION = "## The resolver at scale"

FIELDS = ["kind", "K", "run", "case", "c", "rps", "p50", "p99", "n", "url", "ack",
          "non3xx", "err", "load", "expect", "note"]

# Cases in the order of the tables: (case, at -c1 too?)
NORMAL = ["floor", "fan-out", "remembered", "miss"]
PEER_CASES = ["fan-out+silent", "remembered+silent", "fan-out+silent-dormant",
              "miss+silent-dormant", "fan-out+slow", "remembered+slow", "miss+slow"]
KIND_LABEL = {"serve": "`ibi-archive serve`", "lighttpd": "CGI under lighttpd"}


def case_label(case, c, conns):
    peer = {
        "fan-out+silent": "fan-out, + a silent Archive (not dormant)",
        "remembered+silent": "remembered, + a silent Archive",
        "fan-out+silent-dormant": "fan-out, + a silent Archive (dormant)",
        "miss+silent-dormant": "miss, + a silent Archive (dormant)",
        "fan-out+slow": "fan-out, + a slow Archive",
        "remembered+slow": "remembered, + a slow Archive",
        "miss+slow": "miss, + a slow Archive",
    }
    if case in peer:
        return f"{peer[case]}, -c{c}"
    if case == "floor":
        return f"floor (urlRequest to the holder), -c{c}" + (" = capacity" if c == conns else "")
    return f"{case}, -c{c}"


def need(case, k):
    """Archive requests one resolution needs (the ceiling's divisor)."""
    base = case.split("+")[0]
    return {"floor": 1, "fan-out": k + 1, "remembered": 2, "miss": k}[base]


def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def load_results(path):
    rows = []
    with open(path, newline="") as f:
        for rec in csv.reader(f, delimiter="\t"):
            if not rec:
                continue
            rec += [""] * (len(FIELDS) - len(rec))
            r = dict(zip(FIELDS, rec))
            for key in ("K", "run", "c", "n", "url", "ack", "non3xx", "err"):
                r[key] = int(float(r[key] or 0))
            for key in ("rps", "p50", "p99", "load"):
                r[key] = float(r[key])
            rows.append(r)
    return rows


def load_serial(path):
    out = []
    if os.path.exists(path):
        with open(path, newline="") as f:
            for rec in csv.reader(f, delimiter="\t"):
                if len(rec) >= 7:
                    kind, k, run, peer, resolver, ms, paid = rec[:7]
                    out.append({"kind": kind, "K": int(k), "run": int(run), "peer": peer,
                                "resolver": resolver, "ms": ms, "paid": int(paid)})
    return out


def derive(rows, conns):
    """Per (kind, K): {run: {(case, c): figures}}, each figure taken within its run."""
    configs = {}
    for r in rows:
        configs.setdefault((r["kind"], r["K"]), {}).setdefault(r["run"], {})[(r["case"], r["c"])] = r
    derived = {}
    for (kind, k), runs in configs.items():
        out = {}
        for run, cases in runs.items():
            floor_at = {c: cases.get(("floor", c)) for c in (1, conns)}
            cap = floor_at[conns]["rps"] if floor_at[conns] else None
            d = {}
            for (case, c), r in cases.items():
                n = r["n"]
                # No resolution within the measurement (each slower than it): no latency.
                x = {"rps": r["rps"], "p50": r["p50"] if n else None,
                     "p99": r["p99"] if n else None, "load": r["load"], "n": n,
                     "note": r["note"]}
                x["url"] = r["url"] / n if n else None
                x["ack"] = r["ack"] / n if n else None
                x["ceiling"] = x["ratio"] = None
                if c == conns and case != "floor" and cap:
                    x["ceiling"] = cap / need(case, k)
                    x["ratio"] = r["rps"] / x["ceiling"]
                x["add50"] = x["add99"] = None
                if case != "floor" and floor_at.get(c) and n:
                    x["add50"] = r["p50"] - floor_at[c]["p50"]
                    x["add99"] = r["p99"] - floor_at[c]["p99"]
                x["without"] = x["p99_without"] = None
                if "+" in case:
                    base = cases.get((case.split("+")[0], c))
                    if base and base["p99"] and base["n"] and n:
                        x["p99_without"] = base["p99"]
                        x["without"] = r["p99"] / base["p99"]
                bad = r["non3xx"] if r["expect"] == "3xx" else r["n"] - r["non3xx"]
                problems = []
                if bad:
                    problems.append(f"{bad} answers not {'3xx' if r['expect'] == '3xx' else '404'}")
                if r["err"]:
                    problems.append(f"{r['err']} socket errors")
                if not n:
                    problems.append("no resolution ended within the measurement")
                if r["note"]:
                    problems.append(r["note"])
                x["problems"] = "; ".join(problems)
                d[(case, c)] = x
            out[run] = d
        derived[(kind, k)] = out
    return derived


def medians(runs):
    """{(case, c): median figures} over the runs of one configuration."""
    keys = []
    for d in runs.values():
        for key in d:
            if key not in keys:
                keys.append(key)
    out = {}
    for key in keys:
        xs = [d[key] for d in runs.values() if key in d]
        m = {f: med([x[f] for x in xs]) for f in
             ("rps", "p50", "p99", "url", "ack", "ceiling", "ratio", "add50", "add99",
              "without", "p99_without", "load")}
        m["runs"] = len(xs)
        m["problems"] = sum(1 for x in xs if x["problems"])
        out[key] = m
    return out


def ordered_keys(d, conns):
    keys = []
    for c in (1, conns):
        for case in NORMAL:
            keys.append((case, c))
    for case in PEER_CASES:
        keys.append((case, conns))
    return [k for k in keys if k in d]


def req_res(x):
    if x.get("url") is None:
        return "-"
    return f"{x['url']:.2f} + {x['ack']:.2f}"


def ceiling_cell(x, case, k):
    return "-" if x.get("ceiling") is None else f"{x['ceiling']:.0f} (÷{need(case, k)})"


def paid_median(serial, kind, k, resolver):
    v = [s["paid"] for s in serial if s["kind"] == kind and s["K"] == k
         and s["peer"] == "silent" and s["resolver"] == resolver]
    return med(v)


def targets(case, c, k, x, conns, serial_paid, timeout):
    """The issue's targets for this row: [(text, met?)]."""
    t = []
    if case == "remembered" and c == conns:
        t.append(("≥ 0.8 × ceiling", x["ratio"] is not None and x["ratio"] >= 0.8))
    if case == "remembered" and c == 1 and k == 100:
        t.append(("+p50 ≤ 1 ms", x["add50"] is not None and x["add50"] <= 1000))
        t.append(("+p99 ≤ 5 ms", x["add99"] is not None and x["add99"] <= 5000))
    if case == "remembered":
        t.append(("1 Archive urlRequest per resolution",
                  x["url"] is not None and round(x["url"], 2) == 1.0))
    if case == "fan-out" and c == conns and k == 100:
        t.append(("≥ 0.8 × ceiling", x["ratio"] is not None and x["ratio"] >= 0.8))
    if k == 100 and case in ("fan-out+silent", "remembered+silent", "fan-out+silent-dormant"):
        t.append(("p99 ≤ 1.2 × without", x["without"] is not None and x["without"] <= 1.2))
    if k == 100 and case == "miss+silent-dormant":
        paid = "?" if serial_paid is None else f"{serial_paid:g}"
        t.append((f"normal speed once dormant (p99 ≤ 1.2 × without); {paid} misses paid "
                  f"the {timeout} s timeout before", x["without"] is not None and x["without"] <= 1.2))
    return t


def summary_table(derived, serial, a):
    lines = [
        "| case | K | Archive kind | req/s | ceiling req/s | ÷ ceiling | p50 µs | p99 µs "
        "| +p50 µs | +p99 µs | p99 ÷ without | Archive req/resolution (url + ack) | target | met? |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    flagged = False
    for (kind, k), runs in derived.items():
        m = medians(runs)
        paid = paid_median(serial, kind, k, "mem")
        for key in ordered_keys(m, a.conns):
            case, c = key
            x = m[key]
            label = case_label(case, c, a.conns)
            if x["problems"]:
                label += " ‡"
                flagged = True
            t = targets(case, c, k, x, a.conns, paid, a.timeout)
            tcell = "; ".join(s for s, _ in t) if t else "-"
            mcell = "; ".join("yes" if ok else "**no**" for _, ok in t) if t else "-"
            lines.append(
                f"| {label} | {k} | {KIND_LABEL.get(kind, kind)} | {x['rps']:.0f} "
                f"| {ceiling_cell(x, case, k)} | {fmt(x['ratio'], '.2f')} | {fmt(x['p50'], '.0f')} "
                f"| {fmt(x['p99'], '.0f')} | {fmt(x['add50'], '+.0f')} | {fmt(x['add99'], '+.0f')} "
                f"| {fmt(x['without'], '.2f')} | {req_res(x)} | {tcell} | {mcell} |")
    return lines, flagged


def serial_lines(serial, kind, k, a):
    out = []
    names = {"off": "memory-off resolver", "mem": "memory-on resolver"}
    for peer, resolver in (("silent", "off"), ("silent", "mem"), ("slow", "mem")):
        ss = [s for s in serial if s["kind"] == kind and s["K"] == k and s["peer"] == peer
              and s["resolver"] == resolver]
        if not ss:
            continue
        runs = "; ".join(f"run {s['run']}: {s['ms'].replace(',', ', ')} ms ({s['paid']} paid "
                         f"the {a.timeout} s timeout)" for s in ss)
        out.append(f"- {peer} Archive, {names[resolver]}: {runs}")
    return out


def misses_paid_sentence(derived, serial, a):
    parts = []
    for (kind, k) in derived:
        off = paid_median(serial, kind, k, "off")
        mem = paid_median(serial, kind, k, "mem")
        if off is None and mem is None:
            continue
        parts.append(f"K = {k} {KIND_LABEL.get(kind, kind)}: {fmt(off, 'g')} (memory off), "
                     f"{fmt(mem, 'g')} (memory on)")
    if not parts:
        return []
    return [f"Misses one after the other that paid the {a.timeout} s timeout before the silent "
            f"Archive was dormant (dormant_after = {a.dormant_after}; median over runs): "
            + "; ".join(parts) + ". The misses after those answered at normal speed "
            "(every time is in the detailed report)."]


def method_lines(a):
    c = a.conns
    return [
        f"Each case is `wrk --latency` for {a.duration} s at -c1 (`-t1`) and -c{c} (`-t2`); "
        "wrk does not follow redirects, so a request is one resolution. *floor*: the "
        "holding Archive asked directly with the urlRequest the resolver sends; at "
        f"-c{c} its req/s is one Archive's capacity. *fan-out*: a first resolution (the "
        "resolver without location memory, the item one Archive of K holds); *remembered*: "
        "the resolver with the memory; *miss*: an IBI nobody holds. *Ceiling* = capacity ÷ "
        "the Archive requests one resolution needs, acknowledgment included (remembered 2, "
        "fan-out K + 1, miss K): all Archives share the machine's CPUs with the resolver "
        "and wrk. *+p50*, *+p99*: latency added over the floor at the same -c. *Archive "
        "req/resolution*: the Archives' own request logs over the measurement ÷ wrk's "
        "resolutions (urlRequests + acknowledgments); requests still under way when wrk "
        "stops are in the logs but not in wrk's count, which inflates the slowest rows "
        "(a miss beside the slow Archive above all). *silent*: an Archive included beside "
        "the K that accepts connections and never answers; *slow*: one that answers "
        f"(nothing) after {a.slow:g} s — one at a time, never together. *p99 ÷ without*: "
        "p99 over the same case's p99 without it in the same run. Resolvers: [archives] "
        f"timeout = \"{a.timeout}s\", dormant_after = {a.dormant_after}.",
        "",
        f"Every figure is the median over {a.runs} run{'s' if a.runs != 1 else ''} "
        "(with an even count, the mean of the middle two); ratios and differences are taken "
        "within each run first, then their median. The runs of one K and kind follow one "
        "another over the same Archives and resolvers.",
    ]


def render_report(derived, serial, a):
    out = []
    out.append(f"# ibi-resolver benchmarks, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ}")
    out.append("")
    out.append(f"`{a.command}`")
    out.append("")
    out.extend(open(a.machine).read().rstrip("\n").split("\n"))
    out.append("")
    out.extend(method_lines(a))
    out.append("")
    out.append("## Summary (the table written into BENCHMARKS.md)")
    out.append("")
    table, flagged = summary_table(derived, serial, a)
    out.extend(table)
    out.append("")
    if flagged:
        out.append("‡ In at least one run: answers not of the expected status, socket errors "
                   "or a note (see *Every run* below).")
        out.append("")
    out.extend(misses_paid_sentence(derived, serial, a))
    out.append("")
    for (kind, k), runs in derived.items():
        m = medians(runs)
        out.append(f"## K = {k} Archives, {KIND_LABEL.get(kind, kind)}")
        out.append("")
        cap = m.get(("floor", a.conns), {}).get("rps")
        out.append(f"Capacity (floor at -c{a.conns}): {fmt(cap, '.0f')} req/s of one Archive "
                   f"(median of {len(runs)} runs).")
        out.append("")
        out.append(f"### Medians over {len(runs)} run{'s' if len(runs) != 1 else ''}")
        out.append("")
        out.append("| case | -c | req/s | ceiling req/s | ÷ ceiling | p50 µs | p99 µs | +p50 µs "
                   "| +p99 µs | p99 without µs | p99 ÷ without | Archive req/res (url + ack) | runs with a note |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for key in ordered_keys(m, a.conns):
            case, c = key
            x = m[key]
            out.append(
                f"| {case} | {c} | {x['rps']:.0f} | {ceiling_cell(x, case, k)} "
                f"| {fmt(x['ratio'], '.2f')} | {fmt(x['p50'], '.0f')} | {fmt(x['p99'], '.0f')} "
                f"| {fmt(x['add50'], '+.0f')} | {fmt(x['add99'], '+.0f')} "
                f"| {fmt(x['p99_without'], '.0f')} | {fmt(x['without'], '.2f')} | {req_res(x)} "
                f"| {x['problems'] or ''} |")
        out.append("")
        sl = serial_lines(serial, kind, k, a)
        if sl:
            out.append("Misses one after the other, with the misbehaving Archive included "
                       "(before the measurements under wrk that name it dormant):")
            out.append("")
            out.extend(sl)
            out.append("")
        out.append("### Every run")
        out.append("")
        out.append("| run | case | -c | req/s | ceiling req/s | ÷ ceiling | p50 µs | p99 µs "
                   "| +p50 µs | +p99 µs | p99 ÷ without | Archive req/res (url + ack) | load | note |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for run in sorted(runs):
            d = runs[run]
            for key in ordered_keys(d, a.conns):
                case, c = key
                x = d[key]
                out.append(
                    f"| {run} | {case} | {c} | {x['rps']:.0f} | {ceiling_cell(x, case, k)} "
                    f"| {fmt(x['ratio'], '.2f')} | {fmt(x['p50'], '.0f')} | {fmt(x['p99'], '.0f')} "
                    f"| {fmt(x['add50'], '+.0f')} | {fmt(x['add99'], '+.0f')} "
                    f"| {fmt(x['without'], '.2f')} | {req_res(x)} | {x['load']:.2f} | {x['problems']} |")
        out.append("")
        seen = []
        for peer in ("silent", "slow"):
            p = os.path.join(a.extra, f"{kind}-{k}", f"{peer}.txt")
            if os.path.exists(p):
                seen.append(open(p).read().rstrip("\n"))
        if seen:
            out.append("What both resolvers' `/metrics` and `ibi-resolver archives` (memory-on) "
                       "said at the end of the misbehaving cases, last run:")
            out.append("")
            out.append("```")
            out.append("\n\n".join(seen))
            out.append("```")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def render_block(derived, serial, a):
    table, flagged = summary_table(derived, serial, a)
    out = [BEGIN,
           "<!-- Written by bench/resolver.sh and replaced by each run of it: change the script, "
           "not this block. -->",
           "",
           f"`{a.command}`, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC:",
           ""]
    out.extend(open(a.machine).read().rstrip("\n").split("\n"))
    out.append("")
    method = method_lines(a)
    method[-1] += (" Every run is in the detailed report (`bench/resolver-results.md` by "
                   "default), the method in `bench/README.md`.")
    out.extend(method)
    out.append("")
    out.extend(table)
    out.append("")
    if flagged:
        out.append("‡ In at least one run: answers not of the expected status, socket errors "
                   "or a note (see the detailed report).")
        out.append("")
    out.extend(misses_paid_sentence(derived, serial, a))
    out.append(END)
    return out


def bench_md_state(text):
    lines = text.split("\n")
    b = [i for i, l in enumerate(lines) if l.strip() == BEGIN]
    e = [i for i, l in enumerate(lines) if l.strip() == END]
    if not b and not e:
        return lines, None
    if len(b) == 1 and len(e) == 1 and b[0] < e[0]:
        return lines, (b[0], e[0])
    raise ValueError(f"it must hold the lines {BEGIN} and {END} once each, in that order, or neither")


def write_bench_md(path, block):
    text = open(path).read()
    lines, span = bench_md_state(text)
    if span:
        lines[span[0]:span[1] + 1] = block
    else:
        section = [SECTION, ""] + block + [""]
        at = None
        for i, l in enumerate(lines):
            if l.strip() == "## Summary":
                at = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("## ")), None)
                break
        if at is None:
            if lines and lines[-1] == "":
                lines.pop()
            lines += [""] + section
        else:
            lines[at:at] = section
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--check-bench-md")
    p.add_argument("--results")
    p.add_argument("--serial")
    p.add_argument("--extra")
    p.add_argument("--machine")
    p.add_argument("--out")
    p.add_argument("--bench-md")
    p.add_argument("--runs", type=int)
    p.add_argument("--duration", type=int)
    p.add_argument("--conns", type=int)
    p.add_argument("--timeout", type=int)
    p.add_argument("--dormant-after", type=int)
    p.add_argument("--slow", type=float)
    p.add_argument("--command")
    a = p.parse_args()
    if a.check_bench_md:
        try:
            bench_md_state(open(a.check_bench_md).read())
        except (OSError, ValueError) as e:
            sys.exit(f"resolver_report.py: {a.check_bench_md}: {e}")
        return
    rows = load_results(a.results)
    serial = load_serial(a.serial)
    derived = derive(rows, a.conns)
    report = render_report(derived, serial, a)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(report)
    os.replace(tmp, a.out)
    if a.bench_md:
        if not derived:
            sys.exit("resolver_report.py: nothing measured: BENCHMARKS.md left as it is")
        write_bench_md(a.bench_md, render_block(derived, serial, a))


if __name__ == "__main__":
    main()
