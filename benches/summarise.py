"""Summarise the side-by-side bench: medians per job and side, ratios of toolcost to each peer,
and the machine it ran on. `python3 summarise.py runs.csv OUT_DIR [NOTE]` writes
OUT_DIR/summary.json and OUT_DIR/README.md. Every figure is observed on this machine; the
ratios are derived from the medians."""

import csv
import json
import os
import platform
import statistics
import subprocess
import sys
from collections import defaultdict

# Metrics where more is better; the others (seconds, peak_mb, p50_ms) are better when less.
HIGHER_BETTER = {"req_s"}
# The side that serves a fixed answer with no work: the floor of the load runs, not a peer.
FLOOR = "static-bytes"
# The plain reverse proxy in front of the same upstream: what any gateway hop costs at least.
PROXY = "nginx"


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(l.split()[1] for l in f if l.startswith("MemTotal")))
            mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        pass
    def version(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            return ""
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": platform.platform(),
        "node": version(["node", "--version"]),
        "python": platform.python_version(),
        "rustc": version(["rustc", "--version"]),
    }


def main():
    path, out = sys.argv[1], sys.argv[2]
    note = sys.argv[3] if len(sys.argv) > 3 else ""
    runs = defaultdict(list)
    commands = {}
    with open(path) as f:
        rows_in = list(csv.DictReader(f))
    # A load run with failed requests measured failures, not service: it is left out and said.
    failed = {(r["job"], r["side"], r["run"]) for r in rows_in
              if r["metric"] == "errors" and float(r["value"]) > 0}
    if True:
        for r in rows_in:
            if (r["job"], r["side"], r["run"]) in failed:
                continue
            key = (r["job"], r["side"], r["metric"])
            if r["metric"] == "errors":
                continue
            runs[key].append(float(r["value"]))
            # Commands are reported relative to the checkout.
            commands[(r["job"], r["side"])] = r["command"].replace(os.getcwd() + "/", "")
    medians = {k: statistics.median(v) for k, v in runs.items()}
    rows = []
    for (job, side, metric), m in sorted(medians.items()):
        if side in ("toolcost", FLOOR):
            continue
        tc = medians.get((job, "toolcost", metric))
        ratio = None
        if tc is not None and m and tc:
            ratio = tc / m if metric in HIGHER_BETTER else m / tc
        rows.append({"job": job, "metric": metric, "peer": side, "peer_median": m,
                     "toolcost_median": tc, "toolcost_advantage": ratio})
    # `static-bytes` is no peer: the same answer served with no work, so its requests per
    # second are the most a server reaches on this machine through this client. The most a
    # server can be ahead of a peer here is that figure over the peer's.
    ceilings = []
    for (job, side, metric), top in sorted(medians.items()):
        if side != FLOOR or metric not in HIGHER_BETTER:
            continue
        tc = medians.get((job, "toolcost", metric))
        for (j, s, me), m in sorted(medians.items()):
            if j == job and me == metric and s not in ("toolcost", FLOOR):
                ceilings.append({"job": job, "metric": metric, "peer": s, "peer_median": m,
                                 "static_median": top, "toolcost_median": tc,
                                 "toolcost_share": tc / top if tc is not None and top else None,
                                 "ceiling": top / m if m else None})
    # The gateway beside the plain proxy: its share of the proxy's requests per second, and the
    # latency it adds over the proxy's (each side's median).
    proxied = []
    for job in sorted({j for (j, s, _) in medians if s == PROXY}):
        rps = (medians.get((job, "toolcost", "req_s")), medians.get((job, PROXY, "req_s")))
        p50 = (medians.get((job, "toolcost", "p50_ms")), medians.get((job, PROXY, "p50_ms")))
        proxied.append({
            "job": job,
            "toolcost_req_s": rps[0], "proxy_req_s": rps[1],
            "share": rps[0] / rps[1] if None not in rps and rps[1] else None,
            "toolcost_p50_ms": p50[0], "proxy_p50_ms": p50[1],
            "added_p50_ms": p50[0] - p50[1] if None not in p50 else None,
            "toolcost_runs": runs.get((job, "toolcost", "req_s"), []),
            "proxy_runs": runs.get((job, PROXY, "req_s"), []),
        })
    alone = [{"job": j, "metric": me, "toolcost_median": v}
             for (j, s, me), v in sorted(medians.items())
             if s == "toolcost" and not any(r["job"] == j and r["metric"] == me for r in rows)]
    summary = {
        "label": "observed (this machine); ratios derived",
        "note": note,
        "machine": machine(),
        "runs_per_job": max((len(v) for v in runs.values()), default=0),
        "left_out": sorted(f"{j} / {s} / run {r}: requests failed" for j, s, r in failed),
        "comparisons": rows,
        "toolcost_alone": alone,
        "ceilings": ceilings,
        "against_proxy": proxied,
        "commands": {f"{j} / {s}": c for (j, s), c in sorted(commands.items())},
    }
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    m = summary["machine"]
    lines = [
        "# Side-by-side bench",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory']}; {m['os']}; node {m['node']}, "
        f"python {m['python']}, {m['rustc']}.",
        f"Runs per job: {summary['runs_per_job']}, alternated toolcost / peer; medians shown. "
        "Label: observed on this machine; ratios derived (toolcost's advantage: peer/toolcost for "
        "time, memory and latency, toolcost/peer for requests per second).",
    ]
    if note:
        lines += ["", f"**{note}**"]
    if summary["left_out"]:
        lines += ["", "Left out (a load run in which requests failed measures the failures):", ""]
        lines += [f"- {x}" for x in summary["left_out"]]
    lines += ["", "| job | metric | toolcost | peer | peer figure | toolcost's advantage |",
              "|---|---|---:|---|---:|---:|"]
    fmt = lambda v: "" if v is None else (f"{v:,.2f}" if v < 100 else f"{v:,.0f}")
    for r in rows:
        adv = "" if r["toolcost_advantage"] is None else f"{r['toolcost_advantage']:.1f}x"
        lines.append(f"| {r['job']} | {r['metric']} | {fmt(r['toolcost_median'])} | {r['peer']} | "
                     f"{fmt(r['peer_median'])} | {adv} |")
    if ceilings:
        x = lambda v: "" if v is None else f"{v:.1f}x"
        pct = lambda v: "" if v is None else f"{100 * v:.0f}%"
        lines += ["", f"`{FLOOR}` is not a peer: a server that reads each request and answers "
                  "with the same bytes, doing no other work, on every core, through the same "
                  "client. Its requests per second are about the most a server reaches on this "
                  "machine (a share a little over 100% is the noise of single runs), so the "
                  "largest advantage anyone can show here over a peer is about its figure over "
                  "the peer's:", "",
                  f"| job | metric | {FLOOR} | toolcost | toolcost's share | peer | peer figure "
                  "| largest possible advantage |",
                  "|---|---|---:|---:|---:|---|---:|---:|"]
        lines += [f"| {c['job']} | {c['metric']} | {fmt(c['static_median'])} | "
                  f"{fmt(c['toolcost_median'])} | {pct(c['toolcost_share'])} | {c['peer']} | "
                  f"{fmt(c['peer_median'])} | {x(c['ceiling'])} |" for c in ceilings]
    if proxied:
        lines += ["", f"The gateway beside `{PROXY}` (one worker, keep-alive to the same mock "
                  "upstream, request and answer buffered), the plain reverse proxy any gateway hop "
                  "is measured against; toolcost forwards with its log on (one row committed per "
                  "request before the answer is released, with its own estimate of the request):",
                  "", f"| job | toolcost req/s | {PROXY} req/s | share | toolcost p50 ms | "
                  f"{PROXY} p50 ms | added p50 ms |", "|---|---:|---:|---:|---:|---:|---:|"]
        for r in proxied:
            share = "" if r["share"] is None else f"{100 * r['share']:.0f}%"
            added = "" if r["added_p50_ms"] is None else f"{r['added_p50_ms']:+.2f}"
            lines.append(f"| {r['job']} | {fmt(r['toolcost_req_s'])} | {fmt(r['proxy_req_s'])} | "
                         f"{share} | {fmt(r['toolcost_p50_ms'])} | {fmt(r['proxy_p50_ms'])} | "
                         f"{added} |")
    if alone:
        lines += ["", "toolcost alone (no peer does the job):", "", "| job | metric | toolcost |",
                  "|---|---|---:|"]
        lines += [f"| {a['job']} | {a['metric']} | {fmt(a['toolcost_median'])} |" for a in alone]
    families = os.path.join(out, "families.csv")
    if os.path.exists(families):
        with open(families) as f:
            fam = list(csv.DictReader(f))
        lines += ["", "Counting speed per tokenizer family, one core, each text counted on its own "
                  "and nothing remembered, best of the runs (`families.csv`; "
                  "`cargo run --release --example family_speed`). The reference counts the same "
                  "texts: tiktoken-rs for OpenAI's vocabularies, splintr (the crate that ships the "
                  "open families' and Gemma's vocabularies) for the others; Claude's families have "
                  "no reference in Rust. Ratio: toolcost's speed over the reference's on the same texts (texts "
                  "per second, which is tokens per second where both count the same tokens).",
                  "", "| corpus | tokenizer | texts | tokens | toolcost tokens/s | reference | "
                  "reference tokens | reference tokens/s | ratio |",
                  "|---|---|---:|---:|---:|---|---:|---:|---:|"]
        num = lambda v: f"{float(v):,.0f}" if v else ""
        for r in fam:
            lines.append(f"| {r['corpus']} | {r['tokenizer']} | {r['texts']} | {num(r['tokens'])} | "
                         f"{num(r['toolcost_tokens_per_s'])} | {r['reference']} | {num(r['reference_tokens'])} | "
                         f"{num(r['reference_tokens_per_s'])} | {r['ratio']} |")
    lines += ["", "Commands:", ""]
    lines += [f"- {k}: `{v}`" for k, v in summary["commands"].items()]
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
