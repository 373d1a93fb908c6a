#!/usr/bin/env python3
"""ScaLAPACK's own Cholesky tester (Debian's scalapack-mpi-test: xsllt, xdllt, xcllt, xzllt) on
p?potrf and p?potrs, through the shim.

For each run of the suite, writes an LLT.dat (one UPLO, one process grid, the sizes N, block
sizes NB, right-hand-side counts NRHS and their block sizes NBRHS below, in some runs condition
estimation and iterative refinement), runs the tester on exactly p*q processes (idle processes would spin on
the 2 cores of a development machine) under mpiexec.mpich with libcala_scalapack.so preloaded,
CALA_VERBOSE=1 and CALA_SCALAPACK_THRESHOLD=0, and checks that
  * every case PASSED (factorization and solve residuals, the tester's pads around every
    array intact: no "overwrite" report, no INFO from p?potrf), none failed or was skipped,
  * every call went through cala: one CALA_VERBOSE "P?POTRF(...) -> cala:" line per
    factorization, at least one "P?POTRS(...) -> cala:" line per solve (ScaLAPACK's p?porfs,
    the iterative refinement, calls p?potrs again: those calls reach the shim too), and no
    "-> ScaLAPACK" line.

  llt_tester.py --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so --type d --suite L
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

TESTERS = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests"

# Sizes the block sizes mostly do not divide, N = 1 and N < NB included; the testers keep every
# array in a 2 MB work area per process, so N stays small.
NS = [1, 4, 10, 17, 31, 57, 100]
NBS = [3, 4, 16]
NRHS = [1, 5]
NBRHS = [2]
# Runs: (uplo, (p, q), N values, NB values, NRHS values, NBRHS values, est). est: the tester also
# runs condition estimation and iterative refinement (p?pocon, p?porfs, which calls p?potrs
# again: a dozen solves per right-hand side, so these runs stay small).
SUITES = {
    # every grid shape, both triangles (d); "L" and "U" are separate tests
    "L": [
        ("L", (1, 1), NS, NBS, NRHS, NBRHS, False),
        ("L", (1, 2), NS, NBS, NRHS, NBRHS, False),
        ("L", (2, 2), NS, NBS, NRHS, NBRHS, False),
        ("L", (2, 3), [17, 57, 100], [4, 8], [3], [2], False),
        ("L", (2, 2), [10, 31], [4], [1, 3], [2], True),
        ("L", (2, 3), [17], [4], [1, 3], [2], True),
    ],
    "U": [
        ("U", (1, 1), NS, NBS, NRHS, NBRHS, False),
        ("U", (2, 1), NS, NBS, NRHS, NBRHS, False),
        ("U", (2, 2), NS, NBS, NRHS, NBRHS, False),
        ("U", (2, 3), [31, 64], [3, 16], [3], [5], False),
        ("U", (2, 2), [10, 31], [4], [1, 3], [2], True),
        ("U", (1, 2), [10, 17], [3, 4], [1, 3], [2], True),
    ],
    # the types that share d's code (s, c, z): fewer cases, both triangles, a square and a
    # non-square grid
    "core": [
        ("L", (2, 2), [1, 10, 31, 57], [3, 8], [1, 9], [2], False),
        ("U", (1, 2), [4, 17, 100], [4, 16], [3], [5], False),
        ("U", (2, 3), [31], [4], [1], [2], False),
        ("L", (1, 2), [13], [4], [2], [2], True),
    ],
}


def dat_file(uplo, grid, ns, nbs, nrhs, nbrhs, est):
    row = lambda vals: " ".join(str(v) for v in vals)
    return "\n".join([
        "'ScaLAPACK, LLt factorization input file'",
        "'cala_scalapack: p?potrf and p?potrs through the shim'",
        "'LLT.out'\t\toutput file name (if any)",
        "6\t\t\tdevice out",
        f"'{uplo}'\t\t\tdefine Lower or Upper",
        f"{len(ns)}\t\t\tnumber of problems sizes",
        f"{row(ns)}\t\tvalues of N",
        f"{len(nbs)}\t\t\tnumber of NB's",
        f"{row(nbs)}\t\tvalues of NB",
        f"{len(nrhs)}\t\t\tnumber of NRHS's",
        f"{row(nrhs)}\t\tvalues of NRHS",
        f"{len(nbrhs)}\t\t\tnumber of NBRHS's",
        f"{row(nbrhs)}\t\tvalues of NBRHS",
        "1\t\t\tnumber of process grids (ordered pairs P & Q)",
        f"{grid[0]}\t\t\tvalues of P",
        f"{grid[1]}\t\t\tvalues of Q",
        "3.0\t\t\tthreshold",
        f"{'T' if est else 'F'}\t\t\t(T or F) Test Cond. Est. and Iter. Ref. Routines",
    ]) + "\n"


def check_run(out, rc, t, uplo, ns, nbs, nrhs, nbrhs):
    """Errors of one tester run, and its counts."""
    p = t.upper()
    tests = len(ns) * len(nbs) * len(nrhs) * len(nbrhs)
    factorizations = len(ns) * len(nbs)
    errors = []
    if rc != 0:
        errors.append(f"tester exited with {rc}")
    finished = re.search(r"Finished\s+(\d+) tests", out)
    passed = re.search(r"(\d+) tests completed and passed residual checks", out)
    failed = re.search(r"(\d+) tests completed and failed residual checks", out)
    skipped = re.search(r"(\d+) tests skipped because of illegal input values", out)
    got = tuple(int(m.group(1)) if m else -1 for m in (finished, passed, failed, skipped))
    if got != (tests, tests, 0, 0):
        errors.append(f"summary (finished, passed, failed, skipped) = {got}, expected ({tests}, {tests}, 0, 0)")
    passed_lines = len(re.findall(rf"^WALL\s+{uplo}\s.*PASSED\s*$", out, re.M))
    if passed_lines != tests:
        errors.append(f"{passed_lines} PASSED lines, expected {tests}")
    for bad in (r"(?i)overwrite", r"INFO=", r"FAILED\s*$", r"illegal value", r"(?i)bypass"):
        if re.search(bad, out, re.M):
            errors.append(f"the output matches '{bad}'")
    potrf = len(re.findall(rf"cala_scalapack: P{p}POTRF\({uplo}\) .*-> cala:", out))
    potrs = len(re.findall(rf"cala_scalapack: P{p}POTRS\({uplo}\) .*-> cala:", out))
    to_scalapack = len(re.findall(r"cala_scalapack: .*-> ScaLAPACK", out))
    if potrf != factorizations:
        errors.append(f"{potrf} P{p}POTRF calls through cala, expected {factorizations}")
    if potrs < tests:
        errors.append(f"{potrs} P{p}POTRS calls through cala, expected at least {tests}")
    if to_scalapack != 0:
        errors.append(f"{to_scalapack} calls went to ScaLAPACK with CALA_SCALAPACK_THRESHOLD=0")
    return errors, tests, potrf, potrs, to_scalapack


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--type", choices="sdcz", default="d")
    ap.add_argument("--suite", choices=sorted(SUITES), default="L")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per tester run")
    args = ap.parse_args()

    t, p = args.type, args.type.upper()
    tester = os.path.join(TESTERS, f"x{t}llt")
    if not os.path.exists(tester):
        print(f"SKIP: {tester} not installed (Debian package scalapack-mpi-test)")
        return 77
    all_errors, total = [], [0, 0, 0, 0]
    for uplo, grid, ns, nbs, nrhs, nbrhs, est in SUITES[args.suite]:
        np_ = grid[0] * grid[1]
        with tempfile.TemporaryDirectory(prefix="cala_llt_") as tmp:
            with open(os.path.join(tmp, "LLT.dat"), "w") as f:
                f.write(dat_file(uplo, grid, ns, nbs, nrhs, nbrhs, est))
            env = dict(os.environ, OMP_NUM_THREADS="1")
            cmd = [args.mpiexec, "-n", str(np_), "-genv", "OMP_NUM_THREADS", "1", "-genv", "LD_PRELOAD",
                   os.path.abspath(args.shim), "-genv", "CALA_VERBOSE", "1", "-genv", "CALA_SCALAPACK_THRESHOLD",
                   "0", tester]
            print("+ (cd", tmp, "&&", " ".join(cmd) + ")", flush=True)
            start = time.time()
            try:
                run = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, timeout=args.timeout)
                out, rc = run.stdout, run.returncode
            except subprocess.TimeoutExpired as e:
                out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), 124
        errors, tests, potrf, potrs, to_scalapack = check_run(out, rc, t, uplo, ns, nbs, nrhs, nbrhs)
        total = [total[0] + tests, total[1] + potrf, total[2] + potrs, total[3] + to_scalapack]
        print(f"  UPLO={uplo} grid {grid[0]}x{grid[1]}: {tests} cases PASSED (N {ns}, NB {nbs}, NRHS {nrhs}, "
              f"NBRHS {nbrhs}{', p?pocon and p?porfs' if est else ''}); {potrf} P{p}POTRF and {potrs} P{p}POTRS calls through cala, {to_scalapack} to "
              f"ScaLAPACK ({time.time() - start:.1f} s)" if not errors else
              f"  UPLO={uplo} grid {grid[0]}x{grid[1]}: FAILED ({time.time() - start:.1f} s)", flush=True)
        if errors:
            print(out)
            all_errors += [f"UPLO={uplo} grid {grid[0]}x{grid[1]}: {e}" for e in errors]
    print(f"x{t}llt ({args.suite}): {total[0]} cases PASSED; {total[1]} P{p}POTRF and {total[2]} P{p}POTRS calls "
          f"through cala, {total[3]} to ScaLAPACK")
    if all_errors:
        print("FAILED:\n  " + "\n  ".join(all_errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
