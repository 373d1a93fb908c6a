#!/usr/bin/env python3
"""Words per rank of one PDGETRF: ScaLAPACK's, measured by intercepting its MPI calls (mpi_words.c,
LD_PRELOAD, cala's counting convention), beside cala::getrf's model (getrf_cost, lu_words_model)
for the same n, nb and grid. Issue 31 asks for cala's LU at <= 0.5x ScaLAPACK's words at P = 16
and 64.

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


def measure(args, p, q, runs):
    exe = os.path.join(args.build, "tests", "scalapack")
    cmd = [args.mpiexec, "-n", str(p * q), "-genv", "OMP_NUM_THREADS", "1", "-genv", "LD_PRELOAD",
           os.path.abspath(os.path.join(exe, "libmpi_words.so")), os.path.join(exe, "abi_solve"), "getrf",
           str(args.n), "1", str(args.nb), str(p), str(q), str(runs)]
    print("+", " ".join(cmd), flush=True)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=args.timeout).stdout
    got = {int(m.group(1)): tuple(int(m.group(i)) for i in range(2, 6)) for m in LINE.finditer(out)}
    if len(got) != p * q:
        sys.exit(f"{len(got)} mpi_words lines, expected {p * q}:\n{out}")
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--nb", type=int, default=64)
    ap.add_argument("--grid", default="4x4")
    ap.add_argument("--single", action="store_true", help="one run with one call (no difference of two runs)")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args()
    p, q = (int(x) for x in args.grid.split("x"))
    one = measure(args, p, q, 1)
    two = one if args.single else measure(args, p, q, 2)
    words, msgs = [], []
    for r in range(p * q):
        a, b = one[r], two[r]
        words.append((a[0] + a[1]) / 8 if args.single else (b[0] + b[1] - a[0] - a[1]) / 8)
        msgs.append(a[2] + a[3] if args.single else b[2] + b[3] - a[2] - a[3])
    model = json.loads(subprocess.run([os.path.join(args.build, "tests", "scalapack", "lu_words_model"),
                                       str(args.n), str(args.nb), str(p), str(q)],
                                      stdout=subprocess.PIPE, text=True, check=True).stdout)
    sl_max, sl_mean = max(words), sum(words) / len(words)
    print(json.dumps({"n": args.n, "nb": args.nb, "grid": args.grid, "scalapack_words_max": sl_max,
                      "scalapack_words_mean": round(sl_mean, 1), "scalapack_msgs_max": max(msgs),
                      "cala_model_words_max": model["words_max"], "cala_model_words_mean": model["words_mean"],
                      "cala_model_msgs_max": model["msgs_max"], "ratio_max": round(model["words_max"] / sl_max, 3),
                      "ratio_mean": round(model["words_mean"] / sl_mean, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
