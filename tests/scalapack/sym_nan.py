#!/usr/bin/env python3
"""Runs sym_nan (linked with libcala_scalapack before -lscalapack-mpich) on 4 processes with
CALA_VERBOSE=1 and CALA_SCALAPACK_THRESHOLD=0: the program's own checks pass ("all checks
passed"), and cala computed every call (one "-> cala:" line per call, two per case: C NaN, C 0).

  sym_nan.py --mpiexec mpiexec.mpich --exe .../sym_nan
"""

import argparse
import os
import re
import sys

import mpirun

CALLS = {"PDSYMM": 4, "PDSYRK": 4, "PDSYR2K": 2, "PZHERK": 2, "PZHER2K": 2}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe", required=True)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", CALA_VERBOSE="1", CALA_SCALAPACK_THRESHOLD="0")
    env.pop("LD_PRELOAD", None)
    run = mpirun.run([args.mpiexec, "-n", "4", args.exe], os.getcwd(), env, 240, os.path.basename(args.exe))
    out = run.out
    print(out, end="")
    errors = [] if run.rc == 0 and "sym_nan: all checks passed" in out else [
        f"the program failed (exit status {run.rc})" + (": hung in " + "; ".join(run.where()) if run.hung else "")]
    for routine, want in CALLS.items():
        got = len(re.findall(rf"cala_scalapack: {routine}\(.*-> cala:", out))
        if got != want:
            errors.append(f"{got} {routine} calls through cala, expected {want}")
    if "-> ScaLAPACK" in out:
        errors.append("a call went to ScaLAPACK")
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
