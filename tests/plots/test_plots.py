#!/usr/bin/python3
"""scripts/plots on sample cala-bench output (tests/plots/data) and on synthetic traces and
hetero lines: every
picture is written as a PNG (signature, non-trivial size) and an SVG (well-formed, with the
labels the picture must carry), and an input with nothing to draw is an error.

  test_plots.py SOURCE_DIR
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("test_plots: python3-matplotlib is not installed (scripts/setup installs it)")
    sys.exit(77)  # meson: SKIP, not a pass

SRC = sys.argv[1]
PLOTS = os.path.join(SRC, "scripts", "plots")
DATA = os.path.join(SRC, "tests", "plots", "data")
failures = []


def synthetic_trace(path):
    """2 ranks x 2 threads of a made-up Cholesky step loop: the Trace Event Format cala-bench
    --trace writes (complete events, µs), with thread_name metadata on rank 0 only."""
    ev, kinds = [], ["potrf", "trsm", "syrk", "gemm", "bcast"]
    for pid in range(2):
        for tid in range(2):
            t = 100.0 * pid
            for step in range(12):
                kind = kinds[(step + tid + pid) % len(kinds)]
                dur = 50.0 + 10 * ((step * 7 + tid) % 5)
                ev.append({"name": f"{kind} {step}", "cat": kind, "ph": "X", "ts": t, "dur": dur,
                           "pid": pid, "tid": tid, "args": {"step": step}})
                t += dur + 5
    ev.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": 1, "args": {"name": "worker 1"}})
    ev.append({"name": "counter", "ph": "C", "ts": 0, "pid": 0, "args": {"x": 1}})  # ignored
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "displayTimeUnit": "ms"}, f)


def synthetic_hetero(path):
    """The fields scripts/plots hetero reads of cala-bench hetero lines: five strategies of one
    configuration, made-up numbers, and a line of another bench that is ignored."""
    with open(path, "w") as f:
        for i, s in enumerate(["nrrp-rounded-effective", "nrrp-precise-static", "columns-effective", "dmda", "cyclic"]):
            f.write(json.dumps({"bench": "hetero", "strategy": s, "m": 512, "n": 512, "k": 512, "tile": 128,
                                "devices": "cpu,host,host,host", "speeds": [1, 4, 4, 8], "runs": 3,
                                "seconds": 0.2 + 0.05 * i, "best_s": 0.18 + 0.05 * i, "tiles_moved": 150 + 40 * i,
                                "steals": i}) + "\n")
        f.write(json.dumps({"bench": "gemm", "m": 512}) + "\n")


def synthetic_node_trace(path):
    """A node runtime trace as cala-bench hetero --trace writes it: units cpu, host, host; unit u's
    tasks (one stolen by the cpu unit) and C moves on track u, the devices' prefetches on 3 + u."""
    ev, g = [], 3
    for u in range(g):
        t = 0.0
        for k in range(6):
            name = "stolen task" if (u, k) == (0, 5) else "task"
            ev.append({"name": name, "cat": "gemm", "ph": "X", "ts": t, "dur": 40.0, "pid": 0, "tid": u})
            if u > 0:
                ev.append({"name": "h2d", "cat": "transfer", "ph": "X", "ts": t + 1, "dur": 3.0, "pid": 0, "tid": u})
                ev.append({"name": "h2d", "cat": "transfer", "ph": "X", "ts": t + 2, "dur": 5.0, "pid": 0,
                           "tid": g + u})
            t += 45
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "displayTimeUnit": "ms"}, f)


def run(args, stdin=None):
    return subprocess.run([PLOTS, *args], input=stdin, capture_output=True, text=True, timeout=300)


def check_picture(kind, base, labels):
    png, svg = base + ".png", base + ".svg"
    for p in (png, svg):
        if not os.path.isfile(p) or os.path.getsize(p) < 5000:
            failures.append(f"{kind}: {p} missing or under 5 kB")
            return
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            failures.append(f"{kind}: {png} is not a PNG")
    root = ET.parse(svg).getroot()
    if not root.tag.endswith("svg"):
        failures.append(f"{kind}: {svg} root is {root.tag}")
    text = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    for label in labels:
        if label not in text:
            failures.append(f"{kind}: label {label!r} not in {svg}")


def main():
    out = tempfile.mkdtemp(prefix="cala_plots.")
    trace = os.path.join(out, "trace.json")
    synthetic_trace(trace)
    hetero, node_trace = os.path.join(out, "hetero.jsonl"), os.path.join(out, "node_trace.json")
    synthetic_hetero(hetero)
    synthetic_node_trace(node_trace)
    d = lambda f: os.path.join(DATA, f)  # noqa: E731
    cases = [  # kind, inputs, labels the SVG must show
        ("rate", [d("gemm.jsonl"), d("potrf.jsonl")], ["ScaLAPACK, 1x2, 1 thr", "cala C, 1x2, 1 thr",
                                                       "reference (all cores at once), 1x2, 1 thr",
                                                       "single-core BLAS x cores, 1x2, 1 thr", "cala-bench potrf"]),
        ("words", [d("model.jsonl"), d("gemm.jsonl")], ["model: summa2d-C", "model: summa3d", "model: 2d",
                                                        "lower bound, memory-independent", "P (ranks)"]),
        ("roofline", [d("stencil.jsonl")], ["roof: copy", "halo depth s", "model"]),
        ("mw", [d("mw.jsonl")], ["Het", "ODDOML", "predicted"]),
        ("trace", [trace], ["rank 0 / worker 1", "rank 1 / thread 0", "potrf", "bcast", "48 tasks on 4 rows"]),
        ("hetero", [hetero], ["nrrp-rounded-effective", "dmda", "cyclic", "3 steals", "seconds (median)",
                              "tiles moved", "best run", "units cpu,host,host,host, speeds 1,4,4,8"]),
        ("node-trace", [node_trace, "--units", "cpu,host,host"],
         ["unit 0 (cpu): 1 stolen", "unit 2 (host) prefetch", "stolen task", "18 tasks on 3 units, 1 stolen"]),
    ]
    for kind, inputs, labels in cases:
        base = os.path.join(out, kind)
        r = run([kind, *inputs, "-o", base])
        if r.returncode != 0:
            failures.append(f"{kind}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        if r.stdout.split() != [base + ".png", base + ".svg"]:
            failures.append(f"{kind}: printed {r.stdout!r}, expected the two paths")
        check_picture(kind, base, labels)
    # stdin, with a line that is not JSON (a table on a terminal) in the middle
    with open(d("stencil.jsonl")) as f:
        r = run(["roofline", "-o", os.path.join(out, "stdin")], stdin="case  GF/s\n" + f.read())
    if r.returncode != 0 or "skipped 1 line" not in r.stderr:
        failures.append(f"stdin: exit {r.returncode}, stderr {r.stderr!r}")
    # all: one picture per kind the lines allow
    files = [d(f) for f in ("gemm.jsonl", "model.jsonl", "stencil.jsonl", "mw.jsonl")]
    r = run(["all", *files, "-o", os.path.join(out, "all")])
    if r.returncode != 0 or len(r.stdout.split()) != 8:
        failures.append(f"all: exit {r.returncode}, wrote {r.stdout.split()}")
    # nothing to draw: an error naming what is missing
    r = run(["mw", d("stencil.jsonl"), "-o", os.path.join(out, "none")])
    if r.returncode == 0 or "no cala-bench mw line" not in r.stderr:
        failures.append(f"no data: exit {r.returncode}, stderr {r.stderr!r}")
    r = run(["node-trace", trace, "-o", os.path.join(out, "none")])
    if r.returncode == 0 or "no node task" not in r.stderr:
        failures.append(f"node-trace, no node task: exit {r.returncode}, stderr {r.stderr!r}")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures) + f"\n(pictures kept in {out})")
        return 1
    shutil.rmtree(out)
    print(f"plots: {len(cases)} kinds, stdin, all and the no-data error checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
