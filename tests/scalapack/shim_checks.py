#!/usr/bin/env python3
"""Runs shim_checks (linked with libcala_scalapack before -lscalapack-mpich) on 4 processes.

Beyond the program's own checks (exit status 0, "all checks passed"), checks its output:
PXERBLA's line on every process for each illegal call, with ScaLAPACK's parameter numbers; the
calls going through cala (CALA_VERBOSE), the first-block case going to ScaLAPACK. With
--cholesky (the program built with CALA_SHIM_CHOLESKY), the same for p?potrf and p?potrs.

  shim_checks.py --mpiexec mpiexec.mpich --exe .../shim_checks
"""

import argparse
import os
import re
import sys

# The finalize guard of the network path (tests/network/net_path.py): over UCX's TCP transport a
# job can hang in MPI_Finalize after its last check (openucx/ucx#8738).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "network"))
from net_path import FINALIZE_GRACE_S, SKIP, run_job  # noqa: E402

DONE = "shim_checks: all checks passed"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--cholesky", action="store_true", help="the program checks p?potrf and p?potrs too")
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
    for position in (1, 8, 1402, 1911):
        n = len(re.findall(rf"On entry to PDGEMM parameter number\s+{position} had an illegal value", out))
        if n != 4:
            errors.append(f"{n} PXERBLA lines for parameter {position}, expected one per process (4)")
    through = len(re.findall(r"cala_scalapack: P[SDCZ]GEMM\(.*-> cala:", out))
    if through != 9:
        errors.append(f"{through} calls through cala, expected 9")
    if len(re.findall(r"-> ScaLAPACK: an operand has no cala layout", out)) != 1:
        errors.append("the first-block case did not go to ScaLAPACK")
    tran = len(re.findall(r"cala_scalapack: P[SDCZ]TRAN[UC]?\(.*-> cala: redistribute", out))
    if tran != 3:
        errors.append(f"{tran} p?tran calls through cala, expected 3")
    if args.cholesky:
        for routine, position in (("PDPOTRF", 1), ("PDPOTRF", 4), ("PDPOTRF", 606), ("PDPOTRF", 609),
                                  ("PDPOTRS", 9), ("PDPOTRS", 1106)):
            n = len(re.findall(rf"On entry to {routine} parameter number\s+{position} had an illegal value", out))
            if n != 4:
                errors.append(f"{n} PXERBLA lines for {routine} parameter {position}, expected 4")
        potrf = len(re.findall(r"cala_scalapack: P[SDCZ]POTRF\(.*-> cala:", out))
        potrs = len(re.findall(r"cala_scalapack: P[SDCZ]POTRS\(.*-> cala:", out))
        if (potrf, potrs) != (8, 6):
            errors.append(f"{potrf} p?potrf and {potrs} p?potrs calls through cala, expected 8 and 6")
        if re.search(r"cala_scalapack: P[SDCZ]PO(TR[FS]|SV)\(.*-> ScaLAPACK", out):
            errors.append("a p?potrf, p?potrs or p?posv call went to ScaLAPACK")
        posv = len(re.findall(r"cala_scalapack: P[SDCZ]POSV\(.*-> cala:", out))
        if posv != 5:
            errors.append(f"{posv} p?posv calls through cala, expected 5")
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    if rc is None:
        # Every check above passed on the whole output, the program's own included (rank 0 prints
        # DONE after reducing every rank's result); only MPI_Finalize did not return.
        print(f"shim_checks.py: SKIPPED: the checks passed, then the job hung in MPI_Finalize for "
              f"{FINALIZE_GRACE_S} s (UCX TCP teardown, openucx/ucx#8738) and was killed")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
