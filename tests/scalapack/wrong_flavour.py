#!/usr/bin/env python3
"""Preloading the shim of the wrong MPI flavour fails clearly (issue 33): a plain ScaLAPACK
program (examples/scalapack_dropin.c) built against the OTHER flavour's MPI and ScaLAPACK, run with
this build's shim in LD_PRELOAD, must exit non-zero before main, with one line naming the shim to
use instead -- not crash inside MPI. The same program without the shim runs (so the failure is the
shim's check, not a broken build).

  wrong_flavour.py --shim .../libcala_scalapack.so --flavour mpich --source examples/scalapack_dropin.c
"""

import argparse
import os
import subprocess
import sys
import tempfile

OTHER = {"mpich": ("openmpi", "ompi-c", "scalapack-openmpi", "mpiexec.openmpi"),
         "openmpi": ("mpich", "mpich", "scalapack-mpich", "mpiexec.mpich")}
SHIM_TO_USE = {"mpich": "libcala_scalapack_openmpi.so", "openmpi": "libcala_scalapack.so"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim", required=True)
    ap.add_argument("--flavour", required=True, choices=sorted(OTHER))
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    other, pc, scalapack, launcher = OTHER[args.flavour]
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", pc], capture_output=True, text=True)
    if flags.returncode != 0:
        print(f"FAILED: pkg-config {pc}: the {other} development files are missing (scripts/setup installs them)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, f"dropin_{other}")
        cc = ["cc", "-O1", args.source, *flags.stdout.split(), f"-l{scalapack}", "-lm", "-o", exe]
        build = subprocess.run(cc, capture_output=True, text=True)
        if build.returncode != 0:
            print(" ".join(cc), build.stdout, build.stderr, sep="\n")
            print(f"FAILED: building the {other} program")
            return 1
        env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        env.pop("LD_PRELOAD", None)
        # The control: the program alone (1 rank, a 1x1 grid) runs to its end.
        plain = subprocess.run([launcher, "-n", "1", exe, "64", "16", "1", "1", "R", "1"], env=env,
                               capture_output=True, text=True, timeout=120)
        print(f"--- {other} program, no shim: rc {plain.returncode}\n{plain.stdout[-600:]}{plain.stderr[-600:]}")
        if plain.returncode != 0:
            print(f"FAILED: the {other} program does not run by itself")
            return 1
        wrong = subprocess.run([exe, "64", "16", "1", "1", "R", "1"], env=dict(env, LD_PRELOAD=os.path.abspath(args.shim)),
                               capture_output=True, text=True, timeout=120)
        out = wrong.stdout + wrong.stderr
        print(f"--- {other} program, {os.path.basename(args.shim)} preloaded: rc {wrong.returncode}\n{out[-1200:]}")
        if wrong.returncode == 0:
            print("FAILED: the wrong flavour's shim was accepted")
            return 1
        if wrong.returncode < 0:
            print(f"FAILED: killed by signal {-wrong.returncode}, not a clear exit")
            return 1
        if SHIM_TO_USE[args.flavour] not in out or "cala_scalapack: this shim is built for" not in out:
            print(f"FAILED: no message naming {SHIM_TO_USE[args.flavour]}")
            return 1
    print(f"wrong_flavour: the {args.flavour} shim in a {other} program exits with the flavour to use")
    return 0


if __name__ == "__main__":
    sys.exit(main())
