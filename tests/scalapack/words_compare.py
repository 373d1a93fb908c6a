#!/usr/bin/env python3
"""Words per rank of one PDGETRF, ScaLAPACK's and cala's, both measured by intercepting their MPI
calls (mpi_words.c, LD_PRELOAD, cala's counting convention): ScaLAPACK alone, and the same program
with the shim preloaded and every call sent to cala (CALA_SCALAPACK_THRESHOLD=0), so that cala's
count includes what the shim adds (argument agreement, the pivots' conversion). Issue 31 asks for
cala's LU at <= 0.5x ScaLAPACK's words at P = 16 and 64. cala's own counters equal getrf_cost
given the pivots (tests/lu), which depend on the matrix; lu_words_model prints the model's upper
bound (every step's interchanges at their most) beside the measurements.

abi_solve runs PDGETRF `runs` times in one program (plus BLACS setup, barriers and a checksum):
one PDGETRF's words are the difference between a run with 2 calls and a run with 1, per rank
(--single: the run with 1 call alone, whose extra traffic is a few words: measured 2 words per
rank at P = 16). Oversubscribed on a small machine is fine for counts, not for time.

  words_compare.py --mpiexec mpiexec.mpich --build build --n 1024 --nb 64 --grid 4x4
"""

import argparse
import json
import os
import re
import subprocess
import sys

LINE = re.compile(r"mpi_words rank=(\d+) bytes_sent=(\d+) bytes_recv=(\d+) msgs_sent=(\d+) msgs_recv=(\d+)")


def measure(args, p, q, runs, cala):
    exe = os.path.join(args.build, "tests", "scalapack")
    preload = os.path.abspath(os.path.join(exe, "libmpi_words.so"))
    extra = []
    if cala:
        preload += " " + os.path.abspath(os.path.join(args.build, "lib", "scalapack", "libcala_scalapack.so"))
        extra = ["-genv", "CALA_SCALAPACK_THRESHOLD", "0", "-genv", "CALA_SHIM", "log"]
    cmd = [args.mpiexec, "-n", str(p * q), "-genv", "OMP_NUM_THREADS", "1", "-genv", "LD_PRELOAD", preload] + extra + [
        os.path.join(exe, "abi_solve"), "getrf", str(args.n), "1", str(args.nb), str(p), str(q), str(runs)]
    print("+", " ".join(cmd), flush=True)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    # stdout, then stderr: read apart, so that a shim log line cannot split an mpi_words line
    ran = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         timeout=args.timeout)
    out = ran.stdout + ran.stderr
    got = {int(m.group(1)): tuple(int(m.group(i)) for i in range(2, 6)) for m in LINE.finditer(out)}
    if len(got) != p * q:
        sys.exit(f"{len(got)} mpi_words lines, expected {p * q}:\n{out}")
    if cala and "getrf" not in out.lower():
        sys.exit(f"no CALA_SHIM=log line for getrf: the shim did not compute it:\n{out}")
    return got


def per_call(args, p, q, cala):
    one = measure(args, p, q, 1, cala)
    two = one if args.single else measure(args, p, q, 2, cala)
    words, msgs = [], []
    for r in range(p * q):
        a, b = one[r], two[r]
        words.append((a[0] + a[1]) / 8 if args.single else (b[0] + b[1] - a[0] - a[1]) / 8)
        msgs.append(a[2] + a[3] if args.single else b[2] + b[3] - a[2] - a[3])
    return words, msgs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--nb", type=int, default=64)
    ap.add_argument("--grid", default="4x4")
    ap.add_argument("--single", action="store_true", help="one run with one call (no difference of two runs)")
    ap.add_argument("--side", choices=["both", "cala", "scalapack"], default="both",
                    help="measure one side only (64 oversubscribed ranks take minutes per run)")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args()
    p, q = (int(x) for x in args.grid.split("x"))
    sw, sm = per_call(args, p, q, False) if args.side != "cala" else ([0.0], [0])
    cw, cm = per_call(args, p, q, True) if args.side != "scalapack" else ([0.0], [0])
    bound = json.loads(subprocess.run([os.path.join(args.build, "tests", "scalapack", "lu_words_model"),
                                       str(args.n), str(args.nb), str(p), str(q)],
                                      stdout=subprocess.PIPE, text=True, check=True).stdout)
    mean = lambda v: round(sum(v) / len(v), 1)
    print(json.dumps({"n": args.n, "nb": args.nb, "grid": args.grid,
                      "scalapack_words_max": max(sw), "scalapack_words_mean": mean(sw), "scalapack_msgs_max": max(sm),
                      "cala_words_max": max(cw), "cala_words_mean": mean(cw), "cala_msgs_max": max(cm),
                      "cala_bound_words_max": bound["words_max"],
                      "ratio_max": round(max(cw) / max(sw), 3) if args.side == "both" else None,
                      "ratio_mean": round(mean(cw) / mean(sw), 3) if args.side == "both" else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
