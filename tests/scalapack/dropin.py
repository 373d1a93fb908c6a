#!/usr/bin/env python3
"""The drop-in example, built once against ScaLAPACK only, run without and with the shim preloaded.

Every run prints a checksum of C = A·B (the same global A and B whatever the grid); all must agree
with the run without the shim to a relative 1e-10. With the shim, CALA_VERBOSE=1 must show where
each call went: cala for the large-enough calls, ScaLAPACK's own PDGEMM below the threshold.
CALA_SHIM: off leaves every call to ScaLAPACK (no line from the shim, the same checksum); log
prints one line per call on rank 0 (routine, sizes, who ran it, seconds, words cala moved on
rank 0); an unknown value is reported and read as on.

  dropin.py --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so --exe .../scalapack_dropin
"""

import argparse
import os
import re
import subprocess
import sys

CHECKSUM = re.compile(r"checksum=(\S+) norm2=(\S+)")


def run(args, np, prog_args, shim=False, threshold=None, mode=None):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("LD_PRELOAD", None)
    cmd = [args.mpiexec, "-n", str(np)]
    if shim:
        cmd += ["-genv", "LD_PRELOAD", os.path.abspath(args.shim), "-genv", "CALA_VERBOSE", "1"]
        if threshold is not None:
            cmd += ["-genv", "CALA_SCALAPACK_THRESHOLD", str(threshold)]
        if mode is not None:
            cmd += ["-genv", "CALA_SHIM", mode]
    cmd += [args.exe] + [str(a) for a in prog_args]
    print("+", " ".join(cmd), flush=True)
    # stdout, then stderr: read apart, so that a shim log line cannot split the checksum line
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    out = r.stdout + r.stderr
    print(out, end="", flush=True)
    m = CHECKSUM.search(out)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"exit status {r.returncode}, checksum {'found' if m else 'missing'}")
    return (float(m.group(1)), float(m.group(2))), out


def close(x, y):
    return all(abs(a - b) <= 1e-10 * max(abs(a), abs(b), 1e-300) for a, b in zip(x, y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--exe", required=True)
    args = ap.parse_args()

    errors = []
    base, _ = run(args, 4, [300, 32, 2, 2, "R", 1])
    cases = [  # (what, program arguments, threshold, where the call must go)
        ("row-major 2x2", [300, 32, 2, 2, "R", 1], 0, "cala"),
        ("column-major 2x2", [300, 32, 2, 2, "C", 1], 0, "cala"),
        ("sub-grid 1x3 of 4 processes", [300, 48, 1, 3, "R", 1], 0, "cala"),
        ("default threshold (300³ > 128³)", [300, 32, 2, 2, "R", 1], None, "cala"),
    ]
    for what, prog, threshold, where in cases:
        got, out = run(args, 4, prog, shim=True, threshold=threshold)
        if not close(got, base):
            errors.append(f"{what}: checksum {got} differs from ScaLAPACK's {base}")
        if not re.search(r"cala_scalapack: PDGEMM\(N,N\) m=300 .*-> cala:", out):
            errors.append(f"{what}: no CALA_VERBOSE line saying the call went through cala")
        # Issue 17: every candidate's predicted seconds, the choice marked, and why.
        if (len(re.findall(r"cala_scalapack:   \* .* predicted [0-9.e+-]+ s = latency", out)) < 1
                or not re.search(r"cala_scalapack:     caller's .* predicted [0-9.e+-]+ s|cala_scalapack:     .*: [CAB] "
                                 r"[0-9]+x[0-9]+x[0-9]+ nb=[0-9]+ predicted", out)
                or not re.search(r"cala_scalapack: chosen: the lowest predicted time of the [0-9]+ candidates", out)):
            errors.append(f"{what}: CALA_VERBOSE does not list the candidates, the one chosen (*) and why")
    for shape, nb, p, q in (("150x70x90", 16, 2, 2), ("40x130x300", 7, 1, 3), ("260x30x50", 9, 3, 1)):
        rect_base, _ = run(args, 4, [shape, nb, p, q, "R", 1])
        got, out = run(args, 4, [shape, nb, p, q, "R", 1], shim=True, threshold=0)
        m_, n_, k_ = shape.split("x")
        if not close(got, rect_base):
            errors.append(f"{shape} nb={nb} on {p}x{q}: checksum {got} differs from ScaLAPACK's {rect_base}")
        if not re.search(rf"cala_scalapack: PDGEMM\(N,N\) m={m_} n={n_} k={k_} .*-> cala:", out):
            errors.append(f"{shape} nb={nb} on {p}x{q}: no CALA_VERBOSE line saying the call went through cala")
    small_base, _ = run(args, 4, [100, 16, 2, 2, "R", 2])
    small, out = run(args, 4, [100, 16, 2, 2, "R", 2], shim=True)
    if not close(small, small_base):
        errors.append(f"below the threshold: checksum {small} differs from ScaLAPACK's {small_base}")
    if len(re.findall(r"PDGEMM\(N,N\) m=100 .*-> ScaLAPACK: m\*n\*k = 1000000 < CALA_SCALAPACK_THRESHOLD", out)) != 2:
        errors.append("below the threshold: expected 2 CALA_VERBOSE lines sending the calls to ScaLAPACK")
    # CALA_SHIM=off: ScaLAPACK runs every call, the shim says nothing
    got, out = run(args, 4, [300, 32, 2, 2, "R", 1], shim=True, threshold=0, mode="off")
    if not close(got, base):
        errors.append(f"CALA_SHIM=off: checksum {got} differs from ScaLAPACK's {base}")
    if "cala_scalapack" in out:
        errors.append("CALA_SHIM=off: the shim printed a line (it must leave every call to ScaLAPACK)")
    # CALA_SHIM=log: one line per call on rank 0, words moved by cala on rank 0
    got, out = run(args, 4, [300, 32, 2, 2, "R", 2], shim=True, threshold=0, mode="log")
    logged = re.findall(r"cala_scalapack log: PDGEMM transa=N transb=N m=300 n=300 k=300 ran=cala "
                        r"s=([0-9.]+) words=(\d+)", out)
    if not close(got, base) or len(logged) != 2 or any(int(w) <= 0 for _, w in logged) or \
            len({w for _, w in logged}) != 1:
        errors.append(f"CALA_SHIM=log: expected 2 lines 'PDGEMM ... ran=cala s=... words=W' with the same W > 0 "
                      f"and the checksum of ScaLAPACK, got {logged}")
    _, out = run(args, 4, [100, 16, 2, 2, "R", 1], shim=True, mode="log")
    if len(re.findall(r"cala_scalapack log: PDGEMM .* m=100 .*ran=ScaLAPACK s=[0-9.]+ words=-", out)) != 1:
        errors.append("CALA_SHIM=log: expected one 'ran=ScaLAPACK ... words=-' line below the threshold")
    got, out = run(args, 4, [300, 32, 2, 2, "R", 1], shim=True, threshold=0, mode="maybe")
    if "ignoring CALA_SHIM=maybe" not in out or not re.search(r"PDGEMM\(N,N\) m=300 .*-> cala:", out):
        errors.append("CALA_SHIM=maybe: expected a warning and the call through cala (on)")
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    print("drop-in: same checksum without the shim and with it (row-, column-major, sub-grid, rectangles, threshold); "
          "CALA_SHIM off, log and an unknown value")
    return 0


if __name__ == "__main__":
    sys.exit(main())
