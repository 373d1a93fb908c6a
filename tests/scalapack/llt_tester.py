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

ScaLAPACK hangs by itself in the runs with condition estimation: on a loaded machine the ranks of
the stock tester, with no shim, part ways inside p?porfs -> p?lacon (one waits in p?amax's
receive, another in p?asum's allreduce), in most tries on a 2x2 grid (mpirun.py). So each case of
those runs is its own tester run, run first without the shim: a plain run that hangs or fails is
reported as ScaLAPACK's. The run through the shim is then judged by where its ranks wait if it
hangs (mpirun.blame): with every rank inside cala it fails; with the ranks parted in ScaLAPACK
(p?porfs called p?potrs, cala's, on one rank only; see RACY) it is run again, up to
--attempts times, and a case that never finishes is reported as ScaLAPACK's own hang, with the
stacks, and not counted (neither passed nor failed).

  llt_tester.py --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so --type d --suite L
"""

import argparse
import os
import re
import sys
import tempfile

import mpirun

TESTERS = mpirun.TESTERS
# ScaLAPACK's routines seen to part ways by themselves, with no shim (docs/scalapack.md): a hang
# with a rank inside one of them, and not every rank inside cala, is theirs (mpirun.Run.blame).
RACY = r"p[sdcz]po(rfs|con)_|p[sdcz]lacon_"

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
        ("L", (2, 2), [10], [4], [1], [2], True),
        ("L", (2, 2), [31], [4], [3], [2], True),
        ("L", (2, 3), [17], [4], [3], [2], True),
    ],
    "U": [
        ("U", (1, 1), NS, NBS, NRHS, NBRHS, False),
        ("U", (2, 1), NS, NBS, NRHS, NBRHS, False),
        ("U", (2, 2), NS, NBS, NRHS, NBRHS, False),
        ("U", (2, 3), [31, 64], [3, 16], [3], [5], False),
        ("U", (2, 2), [10], [4], [3], [2], True),
        ("U", (2, 2), [31], [4], [1], [2], True),
        ("U", (1, 2), [10], [3], [1], [2], True),
        ("U", (1, 2), [17], [3], [3], [2], True),
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


def check_tester(out, rc, uplo, tests):
    """Errors of one tester run by the tester's own account: every case ran and PASSED."""
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
    return errors


def check_routing(out, t, uplo, tests, factorizations):
    """Errors of a run through the shim: every factorization and solve went through cala."""
    p = t.upper()
    potrf = len(re.findall(rf"cala_scalapack: P{p}POTRF\({uplo}\) .*-> cala:", out))
    potrs = len(re.findall(rf"cala_scalapack: P{p}POTRS\({uplo}\) .*-> cala:", out))
    to_scalapack = len(re.findall(r"cala_scalapack: .*-> ScaLAPACK", out))
    errors = []
    if potrf != factorizations:
        errors.append(f"{potrf} P{p}POTRF calls through cala, expected {factorizations}")
    if potrs < tests:
        errors.append(f"{potrs} P{p}POTRS calls through cala, expected at least {tests}")
    if to_scalapack != 0:
        errors.append(f"{to_scalapack} calls went to ScaLAPACK with CALA_SCALAPACK_THRESHOLD=0")
    return errors, potrf, potrs, to_scalapack


def runs_of(suite):
    """The tester runs of a suite. A run with condition estimation is split into one run per case,
    so that ScaLAPACK's own hang in p?lacon (see the module text) costs one case, not the run."""
    for uplo, grid, ns, nbs, nrhs, nbrhs, est in SUITES[suite]:
        if not est:
            yield uplo, grid, ns, nbs, nrhs, nbrhs, est
            continue
        for n in ns:
            for nb in nbs:
                for r in nrhs:
                    for rb in nbrhs:
                        yield uplo, grid, [n], [nb], [r], [rb], est


class Tester:
    """Runs one LLT.dat, plain (ScaLAPACK alone) or through the shim."""

    def __init__(self, args):
        self.args, self.exe = args, f"x{args.type}llt"
        self.path = os.path.join(TESTERS, self.exe)

    def run(self, dat, np_, shim, timeout):
        with tempfile.TemporaryDirectory(prefix="cala_llt_") as tmp:
            with open(os.path.join(tmp, "LLT.dat"), "w") as f:
                f.write(dat)
            cmd = [self.args.mpiexec, "-n", str(np_), "-genv", "OMP_NUM_THREADS", "1"]
            if shim:
                cmd += ["-genv", "LD_PRELOAD", os.path.abspath(self.args.shim), "-genv", "CALA_VERBOSE", "1",
                        "-genv", "CALA_SCALAPACK_THRESHOLD", "0"]
            cmd.append(self.path)
            print("+ (cd", tmp, "&&", " ".join(cmd) + ")", flush=True)
            env = dict(os.environ, OMP_NUM_THREADS="1")
            env.pop("LD_PRELOAD", None)
            return mpirun.run(cmd, tmp, env, timeout, self.exe)


def describe_hang(label, r):
    print(f"    {label} hung after {r.seconds:.0f} s; the ranks waited in:")
    for line in r.where():
        print("      " + line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--type", choices="sdcz", default="d")
    ap.add_argument("--suite", choices=sorted(SUITES), default="L")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per tester run")
    ap.add_argument("--est-timeout", type=int, default=30,
                    help="seconds per single-case run with condition estimation")
    ap.add_argument("--attempts", type=int, default=2,
                    help="shim runs of a case while each hangs inside ScaLAPACK alone")
    args = ap.parse_args()

    t, p = args.type, args.type.upper()
    tester = Tester(args)
    if not os.path.exists(tester.path):
        print(f"SKIP: {tester.path} not installed (Debian package scalapack-mpi-test)")
        return 77
    all_errors, total, theirs = [], [0, 0, 0, 0], []
    for uplo, grid, ns, nbs, nrhs, nbrhs, est in runs_of(args.suite):
        np_ = grid[0] * grid[1]
        dat = dat_file(uplo, grid, ns, nbs, nrhs, nbrhs, est)
        tests = len(ns) * len(nbs) * len(nrhs) * len(nbrhs)
        name = (f"UPLO={uplo} grid {grid[0]}x{grid[1]} (N {ns}, NB {nbs}, NRHS {nrhs}, NBRHS {nbrhs}"
                f"{', p?pocon and p?porfs' if est else ''})")
        timeout = args.est_timeout if est else args.timeout
        # ScaLAPACK alone first where it is known to hang by itself (condition estimation).
        plain = tester.run(dat, np_, False, timeout) if est else None
        plain_ok = plain is not None and not plain.hung and not check_tester(plain.out, plain.rc, uplo, tests)
        if plain is not None and not plain_ok:
            print(f"  {name}: ScaLAPACK alone (no shim) " + ("hung" if plain.hung else "failed"), flush=True)
            if plain.hung:
                describe_hang("the plain run", plain)
        for attempt in range(1, args.attempts + 1):
            r = tester.run(dat, np_, True, timeout)
            if not r.hung or r.blame(RACY) != "scalapack":
                break
            describe_hang(f"shim run {attempt}", r)
        if r.hung and r.blame(RACY) == "scalapack":
            # Every rank waited inside ScaLAPACK, none inside cala: ScaLAPACK's own hang. Not a pass.
            theirs.append(f"{name}: {tests} case(s) not counted: ScaLAPACK's own hang ({args.attempts} shim runs "
                          f"hung with the ranks parted inside one ScaLAPACK routine; the plain run "
                          f"{'passed' if plain_ok else 'hung' if plain and plain.hung else 'failed' if plain else 'was not run'})")
            print("  " + theirs[-1], flush=True)
            continue
        errors = check_tester(r.out, r.rc, uplo, tests)
        if r.hung:
            describe_hang("the shim run", r)
            errors.insert(0, f"hung after {r.seconds:.0f} s with " + ("every rank inside cala" if r.blame(RACY) == "cala" else
                                                                      "stacks that name no common ScaLAPACK routine"))
        routing, potrf, potrs, to_scalapack = check_routing(r.out, t, uplo, tests, len(ns) * len(nbs))
        errors += routing if not r.hung else []
        if errors and plain is not None and not plain_ok and not r.hung:
            theirs.append(f"{name}: {tests} case(s) not counted: ScaLAPACK alone failed them too")
            print("  " + theirs[-1], flush=True)
            continue
        total = [total[0] + tests, total[1] + potrf, total[2] + potrs, total[3] + to_scalapack]
        print(f"  {name}: {tests} cases PASSED; {potrf} P{p}POTRF and {potrs} P{p}POTRS calls through cala, "
              f"{to_scalapack} to ScaLAPACK ({r.seconds:.1f} s)" if not errors else
              f"  {name}: FAILED ({r.seconds:.1f} s)", flush=True)
        if errors:
            print(r.out)
            all_errors += [f"{name}: {e}" for e in errors]
    print(f"x{t}llt ({args.suite}): {total[0]} cases PASSED; {total[1]} P{p}POTRF and {total[2]} P{p}POTRS calls "
          f"through cala, {total[3]} to ScaLAPACK")
    if theirs:
        print(f"not counted, ScaLAPACK's own ({len(theirs)} run(s)):\n  " + "\n  ".join(theirs))
    if all_errors:
        print("FAILED:\n  " + "\n  ".join(all_errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
