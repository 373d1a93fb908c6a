#!/usr/bin/env python3
"""Runs sym_route (linked with libcala_scalapack before -lscalapack-mpich) on --np processes with
CALA_SHIM=log and CALA_SCALAPACK_THRESHOLD=0: the program's own checks pass ("all checks passed"),
and CALA_SHIM=log's line for each call names the route the program's model said ("route: NAME
FORCE ROUTE" on stdout, "route=ROUTE (FORCE)" in the log), ran=cala; a forced route that did not
fit says so ("does not fit").

  sym_route.py --mpiexec mpiexec.mpich --exe .../sym_route --np 6
"""

import argparse
import os
import re
import sys

import mpirun


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--np", type=int, required=True)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", CALA_SHIM="log", CALA_SCALAPACK_THRESHOLD="0")
    env.pop("LD_PRELOAD", None)
    env.pop("CALA_SHIM_SYMMETRIC", None)
    run = mpirun.run([args.mpiexec, "-n", str(args.np), args.exe], os.getcwd(), env, 240, os.path.basename(args.exe))
    out = run.out
    print(out, end="")
    errors = [] if run.rc == 0 and "all checks passed" in out else [
        f"the program failed (exit status {run.rc})" + (": hung in " + "; ".join(run.where()) if run.hung else "")]
    want = re.findall(r"^route: (P\w+)\(.*force=(\w+) (.+)$", out, re.M)
    got = re.findall(r"^cala_scalapack log: (P\w+) .* ran=(\S+) .* route=(.+?) \((\w+)\) predicted(.*)$", out, re.M)
    if len(want) != 80 or len(got) != len(want):
        errors.append(f"{len(want)} calls announced (80 expected), {len(got)} log lines with a route")
    for (rout, force, route), (lrout, ran, lroute, lforce, rest) in zip(want, got):
        if (rout, force, route) != (lrout, lforce, lroute) or ran != "cala":
            errors.append(f"program: {rout} {force} -> {route}; log: {lrout} {lforce} -> {lroute} ran={ran}")
        if force in ("sbc", "tbc") and not route.startswith(force) and "does not fit" not in rest:
            errors.append(f"{rout} forced {force} ran {route} and the log does not say why")
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors[:20]))
        return 1
    print(f"sym_route.py: {len(got)} log lines name the routes the model chose")
    return 0


if __name__ == "__main__":
    sys.exit(main())
