#!/usr/bin/env python3
"""Runs decline (tests/scalapack/decline.c) on 4 processes with the default threshold: a call the
shim declines makes no MPI call and starts no thread of its own (issue 33, item 5).

First checks that the program counts every MPI function libcala and the shim import (`nm -D
--undefined-only` of both; a function added to cala later and missing from decline.c's list
fails here), then runs it with OMP_NUM_THREADS=2 (cala would start threads) and
BLIS_NUM_THREADS=1 (ScaLAPACK's BLIS does not): exit status 0, "all checks passed", and one
"declined" line per routine.

  decline.py --mpiexec mpiexec.mpich --exe .../decline --lib .../libcala.so --lib .../libcala_scalapack.so
"""

import argparse
import os
import re
import subprocess
import sys

# Called only before the first or after the last measurement (decline.c does not count them), or
# to end the job (MPI_Abort: the shim's answer to a failure on one rank alone; no call returns).
UNCOUNTED = {"MPI_Init_thread", "MPI_Finalize", "MPI_Abort"}


def imported_mpi(lib):
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], check=True, capture_output=True, text=True).stdout
    return {m.group(1) for m in re.finditer(r"\b(P?MPI_\w+)", out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--lib", action="append", required=True, help="libcala.so, libcala_scalapack.so")
    ap.add_argument("--cholesky", action="store_true", help="the program checks p?potrf, p?potrs, p?posv too")
    args = ap.parse_args()
    errors = []
    wrapped = set(subprocess.run([args.exe, "--list"], check=True, capture_output=True, text=True).stdout.split())
    for lib in args.lib:
        missing = imported_mpi(lib) - wrapped - UNCOUNTED
        if missing:
            errors.append(f"{os.path.basename(lib)} imports MPI functions decline.c does not count: "
                          f"{' '.join(sorted(missing))}")
    env = dict(os.environ, OMP_NUM_THREADS="2", BLIS_NUM_THREADS="1")
    for var in ("LD_PRELOAD", "CALA_SCALAPACK_THRESHOLD", "CALA_SHIM", "CALA_VERBOSE"):
        env.pop(var, None)
    cmd = [args.mpiexec, "-n", "4", args.exe]
    print("+", " ".join(cmd), flush=True)
    try:
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        out, rc = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode() + (e.stderr or b"").decode(), None
        errors.append("the program hung (240 s)")
    print(out, end="")
    if rc != 0 or "decline: all checks passed" not in out:
        errors.append(f"the program failed (exit status {rc})")
    routines = ["gemm", "trsm", "trmm", "symm", "syrk", "syr2k", "geadd", "tran"]
    if args.cholesky:
        routines += ["potrf", "potrs", "posv"]
    for r in routines:
        if not re.search(rf"^pd{r}_ n=24 declined: ", out, re.M):
            errors.append(f"no line for the declined pd{r}_")
    if not re.search(r"^pdgemm_ n=136 through cala: ", out, re.M):
        errors.append("no line for the p?gemm that cala computes")
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
