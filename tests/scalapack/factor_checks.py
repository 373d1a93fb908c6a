#!/usr/bin/env python3
"""Runs factor_checks (linked with libcala_scalapack before -lscalapack-mpich) on 4 processes.

Beyond the program's own checks (exit status 0, "all checks passed"), checks its output:
PXERBLA's line on every process for each illegal call, with ScaLAPACK's parameter numbers, and
the calls cala computed (CALA_VERBOSE "-> cala:" lines from grid process (0, 0)).

  factor_checks.py --mpiexec mpiexec.mpich --exe .../factor_checks
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "network"))
from net_path import FINALIZE_GRACE_S, SKIP, run_job  # noqa: E402

DONE = "factor_checks: all checks passed"
# (routine, parameter number) of each illegal call factor_checks.c makes
ILLEGAL = [("PDGETRF", 4), ("PDGETRF", 606), ("PDGETRF", 609), ("PDGETRS", 1), ("PDGETRS", 10),
           ("PDGETRS", 1206), ("PDGETRS", 1202), ("PDGESV", 1102), ("PDGESV", 4), ("PDGEQRF", 9), ("PDORMQR", 16)]
# calls cala computed (workspace queries, "cala: nothing to do", not counted): p?getrf 5 solves + 3
# IPIV + 1 across + 3 singular/NaN; p?getrs 5 + 1; p?gesv 3 solves + 3 singular/NaN; p?geqrf 5
# (2 with zero columns); p?ormqr/p?unmqr 5 x (N, T or C) x (SIDE = L, R)
THROUGH = {"GETRF": 12, "GETRS": 6, "GESV": 6, "GEQRF": 5, "(ORMQR|UNMQR)": 20, r"(ORMQR|UNMQR)\(R": 10}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe", required=True)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", CALA_VERBOSE="1", CALA_SCALAPACK_THRESHOLD="0")
    env.pop("LD_PRELOAD", None)
    cmd = [args.mpiexec, "-n", "4", args.exe]
    print("+", " ".join(cmd), flush=True)
    rc, out = run_job(cmd, env, done=DONE, echo=False)
    print(out, end="")
    errors = []
    if rc not in (0, None) or DONE not in out:
        errors.append(f"the program failed (exit status {rc})")
    for routine, position in ILLEGAL:
        n = len(re.findall(rf"On entry to {routine} parameter number\s+{position} had an illegal value", out))
        if n != 4:
            errors.append(f"{n} PXERBLA lines for {routine} parameter {position}, expected one per process (4)")
    for stem, expected in THROUGH.items():
        n = len(re.findall(rf"cala_scalapack: P[SDCZ]{stem}\b.*-> cala: (?!nothing)", out))
        if n != expected:
            errors.append(f"{n} P?{stem} calls through cala, expected {expected}")
    if re.search(r"cala_scalapack: P[SDCZ](GETR[FS]|GESV|GEQRF|ORMQR|UNMQR)\b.*-> ScaLAPACK", out):
        errors.append("a p?getrf, p?getrs, p?gesv, p?geqrf or p?ormqr call went to ScaLAPACK")
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    if rc is None:
        print(f"factor_checks.py: SKIPPED: the checks passed, then the job hung in MPI_Finalize for "
              f"{FINALIZE_GRACE_S} s (UCX TCP teardown, openucx/ucx#8738) and was killed")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
