#!/usr/bin/env python3
"""ScaLAPACK's own LU and QR testers (Debian's scalapack-mpi-test: x?lu, x?qr) through the shim:
p?getrf, p?getrs (and, with condition estimation, p?gecon/p?gerfs's own p?getrs calls), p?geqrf.

The Cholesky tester's runner (llt_tester.py), generalized to a tester given by a table: for each
run of a suite, writes the tester's input file (one process grid: the tester runs on exactly p*q
processes, idle ones would spin on a 2-core machine), runs it under mpiexec.mpich with
libcala_scalapack.so preloaded, CALA_VERBOSE=1 and CALA_SCALAPACK_THRESHOLD=0, and checks that
  * every case PASSED (the residuals, the tester's guard zones around every array: no "overwrite"
    report), none failed or was skipped,
  * cala computed the factorizations: one CALA_VERBOSE "P?GETRF(...) -> cala:" line per case
    (x?lu), one "P?GEQRF(...) -> cala:" line per QR case whose blocks are square (x?qr; with
    MB != NB ScaLAPACK's p?geqrf runs, and says so: "-> ScaLAPACK: A has no cala layout"), at
    least one "P?GETRS(...) -> cala:" per solve, and no other call sent to ScaLAPACK. x?qr's
    QL, LQ, RQ, QP and TZ factorizations are ScaLAPACK's own (no shim routine among them) and
    must pass as before.

A run that hangs is judged by its stacks (mpirun.py): every rank inside cala fails the test;
ranks parted inside one of ScaLAPACK's routines known to part by themselves (p?gerfs, p?gecon,
p?lacon: ScaLAPACK 2.2's iterative refinement and condition estimation, docs/scalapack.md) are
retried, and a case that never finishes is reported as ScaLAPACK's own, not counted. The runs
with condition estimation (x?lu's last line T) are one case per run, as in llt_tester.py.

  factor_tester.py --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so --tester lu --type d --suite default
"""

import argparse
import os
import re
import sys
import tempfile

import mpirun

TESTERS = mpirun.TESTERS
RACY = r"p[sdcz]ge(rfs|con)_|p[sdcz]lacon_"


def row(vals):
    return " ".join(str(v) for v in vals)


def lu_dat(grid, c):
    """LU.dat for one grid; c: M, N (pairs), NB, NRHS, NBRHS, est."""
    return "\n".join([
        "'SCALAPACK, LU factorization input file'", "'cala_scalapack: p?getrf and p?getrs through the shim'",
        "'LU.out'\t\toutput file name (if any)", "6\t\tdevice out",
        f"{len(c['m'])}\t\tnumber of problems sizes", f"{row(c['m'])}\t\tvalues of M", f"{row(c['n'])}\t\tvalues of N",
        f"{len(c['nb'])}\t\tnumber of NB's", f"{row(c['nb'])}\t\tvalues of NB",
        f"{len(c['nrhs'])}\t\tnumber of NRHS's", f"{row(c['nrhs'])}\t\tvalues of NRHS",
        f"{len(c['nbrhs'])}\t\tNumber of NBRHS's", f"{row(c['nbrhs'])}\t\tvalues of NBRHS",
        "1\t\tnumber of process grids (ordered pairs of P & Q)", f"{grid[0]}\t\tvalues of P", f"{grid[1]}\t\tvalues of Q",
        "1.0\t\tthreshold", f"{'T' if c['est'] else 'F'}\t\t(T or F) Test Cond. Est. and Iter. Ref. Routines"]) + "\n"


def qr_dat(grid, c):
    """QR.dat for one grid; c: facts, M, N (pairs), MB, NB (pairs)."""
    return "\n".join([
        "'ScaLAPACK, Orthogonal factorizations input file'", "'cala_scalapack: p?geqrf through the shim'",
        "'QR.out'\t\toutput file name (if any)", "6\t\tdevice out",
        f"{len(c['facts'])}\t\tnumber of factorizations", f"{row(repr(f) for f in c['facts'])}\t\tfactorizations",
        f"{len(c['m'])}\t\tnumber of problems sizes", f"{row(c['m'])}\t\tvalues of M", f"{row(c['n'])}\t\tvalues of N",
        f"{len(c['mb'])}\t\tnumber of blocking sizes", f"{row(c['mb'])}\t\tvalues of MB", f"{row(c['nb'])}\t\tvalues of NB",
        "1\t\tnumber of process grids (ordered pairs P & Q)", f"{grid[0]}\t\tvalues of P", f"{grid[1]}\t\tvalues of Q",
        "5.0\t\tthreshold"]).replace("'", "'") + "\n"


def lu_cases(c):
    """(tests, factorizations through cala, solves): x?lu factors once per M, N, NB and solves
    only square matrices (NRHS x NBRHS cases on one factorization); a non-square one is one case."""
    tests = solves = 0
    for m, n in zip(c["m"], c["n"]):
        per = len(c["nrhs"]) * len(c["nbrhs"]) if m == n else 1
        tests += per * len(c["nb"])
        solves += per * len(c["nb"]) if m == n else 0
    return tests, len(c["m"]) * len(c["nb"]), solves, 0


def qr_cases(c):
    """(tests, QR factorizations through cala, solves, tests the tester bypasses): p?geqrf goes to cala
    when MB = NB; TZ (p?tzrzf) takes M <= N only, the tester bypasses M > N."""
    tests = len(c["facts"]) * len(c["m"]) * len(c["mb"])
    square = sum(1 for mb, nb in zip(c["mb"], c["nb"]) if mb == nb)
    bypassed = ("TZ" in c["facts"]) * sum(1 for m, n in zip(c["m"], c["n"]) if m > n) * len(c["mb"])
    return tests, ("QR" in c["facts"]) * len(c["m"]) * square, 0, bypassed


# The package's inputs (/usr/share/scalapack/LU.dat, QR.dat), one run per grid, and our own.
LU_PKG = dict(m=[4, 10, 17, 13], n=[4, 12, 13, 13], nb=[2, 3, 4], nrhs=[1, 3, 9], nbrhs=[1, 3, 5], est=False)
QR_PKG = dict(facts=["QR", "QL", "LQ", "RQ", "QP", "TZ"], m=[2, 5, 13, 15], n=[2, 7, 8, 10], mb=[4, 3, 5, 5],
              nb=[4, 7, 3, 5])
PKG_GRIDS = [(1, 1), (2, 2), (1, 4), (4, 1)]
TESTERS_TABLE = {
    "lu": dict(dat=("LU.dat", lu_dat), exe="lu", factor="GETRF", solve="GETRS", cases=lu_cases, suites={
        # the package's inputs: every grid, without condition estimation ...
        "default": [(g, LU_PKG) for g in PKG_GRIDS],
        # ... and with it (p?gecon, p?gerfs: p?getrs again), one case per run, 2x2
        "default_est": [((2, 2), dict(m=[m], n=[m], nb=[nb], nrhs=[r], nbrhs=[3], est=True))
                        for m in [13] for nb in [3, 4] for r in [1, 9]],
        # ours: odd grids, blocks that divide nothing, M > N and M < N, one row (M_A = 1: ScaLAPACK's
        # quick return), a wide NB. (N = 1 with a solve fails with ScaLAPACK alone too: residual 1.83 > 1.0.)
        "odd": [((1, 3), dict(m=[1, 31, 57, 40, 25], n=[6, 31, 57, 23, 60], nb=[4, 7, 16], nrhs=[1, 5], nbrhs=[2, 3],
                              est=False)),
                ((3, 1), dict(m=[31, 57, 23], n=[31, 57, 40], nb=[5, 8], nrhs=[3], nbrhs=[2], est=False)),
                ((2, 3), dict(m=[64, 97, 50], n=[64, 97, 70], nb=[6, 16], nrhs=[2], nbrhs=[4], est=False)),
                ((3, 2), dict(m=[45, 70], n=[45, 33], nb=[7], nrhs=[1, 4], nbrhs=[3], est=False))],
        # the formats between cala and ScaLAPACK: cala's p?getrf (n³ = 29791 >= 10000; 64000 >= 40000),
        # ScaLAPACK's p?getrs (n²·nrhs = 961 < 10000; 1600 < 40000) reading cala's IPIV; then
        # ScaLAPACK's p?getrf (2197 < 3000) and cala's p?getrs (n²·nrhs = 4732) reading ScaLAPACK's IPIV
        "mixed": [((2, 2), dict(m=[31], n=[31], nb=[4], nrhs=[1], nbrhs=[1], est=False, threshold=10000,
                                expect_factor=1, expect_solve=0)),
                  ((1, 3), dict(m=[31, 40], n=[31, 40], nb=[3, 5], nrhs=[1], nbrhs=[1], est=False, threshold=40000,
                                expect_factor=2, expect_solve=0)),
                  ((2, 2), dict(m=[13], n=[13], nb=[3, 4], nrhs=[28], nbrhs=[5], est=False, threshold=3000,
                                expect_factor=0, expect_solve=2)),
                  ((3, 1), dict(m=[13], n=[13], nb=[2], nrhs=[28], nbrhs=[5], est=False, threshold=3000,
                                expect_factor=0, expect_solve=1))],
        # the types that share d's code
        "core": [((2, 2), dict(m=[10, 31, 17], n=[12, 31, 13], nb=[3, 4], nrhs=[1, 9], nbrhs=[3], est=False)),
                 ((1, 3), dict(m=[29, 40], n=[29, 23], nb=[5], nrhs=[3], nbrhs=[2], est=False))],
    }),
    "qr": dict(dat=("QR.dat", qr_dat), exe="qr", factor="GEQRF", solve=None, cases=qr_cases, suites={
        "default": [(g, QR_PKG) for g in PKG_GRIDS],
        # ours: square blocks only (cala's), odd grids, blocks that divide nothing, M < N and M > N
        "odd": [((1, 3), dict(facts=["QR", "LQ"], m=[1, 31, 57, 20], n=[1, 31, 23, 60], mb=[4, 7, 16], nb=[4, 7, 16])),
                ((3, 1), dict(facts=["QR"], m=[31, 57, 100], n=[31, 40, 20], mb=[5, 8], nb=[5, 8])),
                ((2, 3), dict(facts=["QR", "QP"], m=[64, 97, 50], n=[64, 40, 70], mb=[6, 16], nb=[6, 16])),
                ((3, 2), dict(facts=["QR"], m=[45, 70], n=[45, 33], mb=[7, 3], nb=[7, 3]))],
        "core": [((2, 2), dict(facts=["QR", "RQ"], m=[10, 31, 26], n=[12, 31, 20], mb=[3, 4, 3], nb=[3, 4, 7])),
                 ((1, 3), dict(facts=["QR"], m=[29, 40], n=[29, 23], mb=[5], nb=[5]))],
    }),
}


def runs_of(spec, suite):
    """The tester runs of a suite: (grid, case dict)."""
    for grid, c in spec["suites"][suite]:
        yield grid, c


def check_tester(out, rc, tests, bypassed=0):
    """Errors of one tester run by the tester's own account: every case ran and PASSED (but those the
    tester bypasses by design: x?qr's TZ with M > N, the same with ScaLAPACK alone)."""
    errors = []
    if rc != 0:
        errors.append(f"tester exited with {rc}")
    got = []
    for pat in (r"Finished\s+(\d+) tests", r"(\d+) tests completed and passed", r"(\d+) tests completed and failed",
                r"(\d+) tests skipped"):
        m = re.search(pat, out)
        got.append(int(m.group(1)) if m else -1)
    want = (tests, tests - bypassed, 0, bypassed)
    if tuple(got) != want:
        errors.append(f"summary (finished, passed, failed, skipped) = {tuple(got)}, expected {want}")
    passed = len(re.findall(r"^WALL\s.*\bPASSED\b", out, re.M))
    if passed != tests - bypassed:
        errors.append(f"{passed} PASSED lines, expected {tests - bypassed}")
    if len(re.findall(r"^WALL\s.*\bBYPASS\b", out, re.M)) != bypassed:
        errors.append(f"BYPASS lines, expected {bypassed}")
    for bad in (r"(?i)overwrite", r"INFO=", r"\bFAILED\b", r"illegal value"):
        if re.search(bad, out, re.M):
            errors.append(f"the output matches '{bad}'")
    return errors


def check_routing(out, t, spec, c, tests):
    """Errors of a run through the shim, and the counts (factorizations, solves through cala, to ScaLAPACK)."""
    p = t.upper()
    factor = len(re.findall(rf"cala_scalapack: P{p}{spec['factor']}\b.*-> cala:", out))
    solve = len(re.findall(rf"cala_scalapack: P{p}{spec['solve']}\b.*-> cala:", out)) if spec["solve"] else 0
    # calls below a threshold > 0 (the "mixed" runs) go to ScaLAPACK by design
    lines = [l for l in re.findall(r"cala_scalapack: (P\w+).*-> ScaLAPACK: (.*)", out)
             if "CALA_SCALAPACK_THRESHOLD" not in l[1]]
    no_layout = [l for l in lines if l[0] == f"P{p}{spec['factor']}" and "no cala layout" in l[1]]
    other = [l for l in lines if l not in no_layout]
    _, expected, solves, _ = spec["cases"](c)
    expected = c.get("expect_factor", expected)
    errors = []
    if factor != expected:
        errors.append(f"{factor} P{p}{spec['factor']} calls through cala, expected {expected}")
    if "expect_solve" in c and solve != c["expect_solve"]:
        errors.append(f"{solve} P{p}{spec['solve']} calls through cala, expected {c['expect_solve']}")
    elif "expect_solve" not in c and solve < solves:
        errors.append(f"{solve} P{p}{spec['solve']} calls through cala, expected at least {solves}")
    if other:
        errors.append(f"{len(other)} calls went to ScaLAPACK with CALA_SCALAPACK_THRESHOLD=0: {other[:3]}")
    return errors, factor, solve, len(no_layout)


class Tester:
    """Runs one input file, plain (ScaLAPACK alone) or through the shim."""

    def __init__(self, args, spec):
        self.args, self.spec = args, spec
        self.exe = f"x{args.type}{spec['exe']}"
        self.path = os.path.join(TESTERS, self.exe)

    def run(self, dat, np_, shim, timeout, threshold=0):
        with tempfile.TemporaryDirectory(prefix=f"cala_{self.spec['exe']}_") as tmp:
            with open(os.path.join(tmp, self.spec["dat"][0]), "w") as f:
                f.write(dat)
            cmd = [self.args.mpiexec, "-n", str(np_), "-genv", "OMP_NUM_THREADS", "1"]
            if shim:
                cmd += ["-genv", "LD_PRELOAD", os.path.abspath(self.args.shim), "-genv", "CALA_VERBOSE", "1",
                        "-genv", "CALA_SCALAPACK_THRESHOLD", str(threshold)]
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
    ap.add_argument("--tester", choices=sorted(TESTERS_TABLE), default="lu")
    ap.add_argument("--type", choices="sdcz", default="d")
    ap.add_argument("--suite", default="default")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per tester run")
    ap.add_argument("--est-timeout", type=int, default=60, help="seconds per run with condition estimation")
    ap.add_argument("--attempts", type=int, default=2, help="shim runs of a case while each hangs inside ScaLAPACK")
    ap.add_argument("--show", action="store_true", help="print every run's output")
    args = ap.parse_args()

    spec = TESTERS_TABLE[args.tester]
    if args.suite not in spec["suites"]:
        ap.error(f"--suite: one of {sorted(spec['suites'])}")
    t, p = args.type, args.type.upper()
    tester = Tester(args, spec)
    if not os.path.exists(tester.path):
        print(f"SKIP: {tester.path} not installed (Debian package scalapack-mpi-test)")
        return 77
    all_errors, theirs, total = [], [], [0, 0, 0, 0]
    for grid, c in runs_of(spec, args.suite):
        np_ = grid[0] * grid[1]
        dat = spec["dat"][1](grid, c)
        tests, _, _, bypassed = spec["cases"](c)
        est = c.get("est", False)
        name = f"grid {grid[0]}x{grid[1]} ({', '.join(f'{k} {v}' for k, v in c.items())})"
        timeout = args.est_timeout if est else args.timeout
        plain = tester.run(dat, np_, False, timeout) if est else None
        plain_ok = plain is not None and not plain.hung and not check_tester(plain.out, plain.rc, tests, bypassed)
        if plain is not None and not plain_ok:
            print(f"  {name}: ScaLAPACK alone (no shim) " + ("hung" if plain.hung else "failed"), flush=True)
        for attempt in range(1, args.attempts + 1):
            r = tester.run(dat, np_, True, timeout, c.get("threshold", 0))
            if not r.hung or r.blame(RACY) != "scalapack":
                break
            describe_hang(f"shim run {attempt}", r)
        if r.hung and r.blame(RACY) == "scalapack":
            theirs.append(f"{name}: {tests} case(s) not counted: ScaLAPACK's own hang")
            print("  " + theirs[-1], flush=True)
            continue
        errors = check_tester(r.out, r.rc, tests, bypassed)
        if r.hung:
            describe_hang("the shim run", r)
            errors.insert(0, f"hung after {r.seconds:.0f} s (blame: {r.blame(RACY)})")
        routing, factor, solve, no_layout = check_routing(r.out, t, spec, c, tests)
        errors += routing if not r.hung else []
        if errors and plain is not None and not plain_ok and not r.hung:
            theirs.append(f"{name}: {tests} case(s) not counted: ScaLAPACK alone failed them too")
            print("  " + theirs[-1], flush=True)
            continue
        total = [total[0] + tests - bypassed, total[1] + factor, total[2] + solve, total[3] + no_layout]
        solve_text = f" and {solve} P{p}{spec['solve']}" if spec["solve"] else ""
        print(f"  {name}: {tests - bypassed} cases PASSED{f' ({bypassed} bypassed by the tester)' if bypassed else ''}; {factor} P{p}{spec['factor']}{solve_text} calls through cala, "
              f"{no_layout} to ScaLAPACK for lack of a cala layout ({r.seconds:.1f} s)" if not errors else
              f"  {name}: FAILED ({r.seconds:.1f} s)", flush=True)
        if errors or args.show:
            print(r.out)
        all_errors += [f"{name}: {e}" for e in errors]
    solve_text = f" and {total[2]} P{p}{spec['solve']}" if spec["solve"] else ""
    print(f"x{t}{spec['exe']} ({args.suite}): {total[0]} cases PASSED; {total[1]} P{p}{spec['factor']}{solve_text} "
          f"calls through cala, {total[3]} to ScaLAPACK for lack of a cala layout")
    if theirs:
        print(f"not counted, ScaLAPACK's own ({len(theirs)} run(s)):\n  " + "\n  ".join(theirs))
    if all_errors:
        print("FAILED:\n  " + "\n  ".join(all_errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
