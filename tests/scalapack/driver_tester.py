#!/usr/bin/env python3
"""ScaLAPACK's driver testers (Debian's scalapack-mpi-test: x?lu, x?qr, x?inv, x?ls) on their
package inputs shrunk to at most 4 ranks, once without the shim and once with it preloaded
(CALA_VERBOSE=1, CALA_SCALAPACK_THRESHOLD=0: every PBLAS call the shim exports goes to cala).
Their factorizations and solves call p?gemm, p?trsm, p?trmm (and p?potrf/p?potrs in x?inv's
positive definite inverse) through the shim.

Checks: the shim run finished (a hang is reported with every rank's stack, mpirun.py), and every
test the plain run PASSED, the shim run PASSED too (the result lines are compared one by one, in
order: the tester prints one per case); the shim run's own summary counts no failure that the
plain run does not have; and the shim took calls over (CALA_VERBOSE lines "-> cala:"): for x?ls,
p?gels's p?geqrf, p?ormqr (p?unmqr) and p?trsm each at least once.

  driver_tester.py --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so --driver lu --type d
"""

import argparse
import os
import re
import sys
import tempfile

import mpirun

TESTERS = mpirun.TESTERS
GRIDS = [(2, 2), (1, 3)]  # a square grid and a sub-grid of the 4 ranks


def row(vals):
    return " ".join(str(v) for v in vals)


def grids_lines(grids=None):
    grids = grids or GRIDS
    return [f"{len(grids)}\t\tnumber of process grids (ordered pairs of P & Q)",
            f"{row(g[0] for g in grids)}\t\tvalues of P", f"{row(g[1] for g in grids)}\t\tvalues of Q"]


# The package's inputs (/usr/share/scalapack/*.dat), fewer sizes and blockings, grids of <= 4 ranks.
DATS = {
    "lu": ("LU.dat", lambda: "\n".join([
        "'SCALAPACK, LU factorization input file'", "'cala_scalapack driver run'", "'LU.out'", "6",
        "3\t\tnumber of problems sizes", "10 17 31\t\tvalues of M", "12 13 31\t\tvalues of N",
        "2\t\tnumber of NB's", "3 4\t\tvalues of NB", "2\t\tnumber of NRHS's", "1 9\t\tvalues of NRHS",
        "1\t\tNumber of NBRHS's", "3\t\tvalues of NBRHS"] + grids_lines() + [
        "1.0\t\tthreshold",
        # F: p?gerfs/p?lacon part ways by themselves in ScaLAPACK 2.2 (mpirun.py); not the shim's
        "F\t\t(T or F) Test Cond. Est. and Iter. Ref. Routines"]) + "\n"),
    "qr": ("QR.dat", lambda: "\n".join([
        "'ScaLAPACK, Orthogonal factorizations input file'", "'cala_scalapack driver run'", "'QR.out'", "6",
        "6\t\tnumber of factorizations", "'QR' 'QL' 'LQ' 'RQ' 'QP' 'TZ'\t\tfactorizations",
        "2\t\tnumber of problems sizes", "5 26\t\tvalues of M", "7 20\t\tvalues of N",
        "1\t\tnumber of blocking sizes", "3\t\tvalues of MB", "7\t\tvalues of NB"] + grids_lines() + [
        "5.0\t\tthreshold"]) + "\n"),
    "inv": ("INV.dat", lambda: "\n".join([
        "'ScaLAPACK, Version 1.0, Matrix Inversion Testing input file'", "'cala_scalapack driver run'",
        "'INV.out'", "6", "5\t\tnumber of matrix types", "'GEN' 'UTR' 'LTR' 'UPD' 'LPD'\t\ttypes",
        "2\t\tnumber of problems sizes", "5 19\t\tvalues of N", "1\t\tnumber of NB's",
        "3\t\tvalues of NB"] + grids_lines() + ["1.0\t\tthreshold"]) + "\n"),
    "ls": ("LS.dat", lambda: "\n".join([
        "'ScaLAPACK LS solve input file'", "'cala_scalapack driver run'", "'LS.out'", "6",
        "3\t\tnumber of problems sizes", "15 7 31\t\tvalues of M", "5 21 31\t\tvalues of N",
        "1\t\tnumber of NB's", "3\t\tvalues of NB", "1\t\tnumber of NRHS's", "2\t\tvalues of NRHS",
        # 2 x 2 only: on the 1 x 3 sub-grid x?ls hangs in p?gels with no shim (ranks parted
        # between p?lange, p?labad and p?nrm2)
        "1\t\tnumber of NBRHS's", "1\t\tvalues of NBRHS"] + grids_lines([(2, 2)]) + ["4.0\t\tthreshold"]) + "\n"),
}
# A tester's line for one case starts with WALL (its timer) and holds PASSED, FAILED or BYPASS.
def results(out):
    verdicts = ("PASSED", "FAILED", "BYPASS")
    return [next(w for w in l.split() if w in verdicts) for l in out.splitlines()
            if re.match(r"^\s*WALL\s", l) and any(w in verdicts for w in l.split())]
SUMMARY = [("passed", r"(\d+) tests completed and passed"), ("failed", r"(\d+) tests completed and failed"),
           ("skipped", r"(\d+) tests skipped")]


def summary(out):
    got = {}
    for key, pat in SUMMARY:
        m = re.search(pat, out)
        got[key] = int(m.group(1)) if m else 0
    return got


def run(args, exe, dat_name, dat, shim):
    with tempfile.TemporaryDirectory(prefix="cala_driver_") as tmp:
        with open(os.path.join(tmp, dat_name), "w") as f:
            f.write(dat)
        cmd = [args.mpiexec, "-n", str(args.np), "-genv", "OMP_NUM_THREADS", "1"]
        if shim:
            cmd += ["-genv", "LD_PRELOAD", os.path.abspath(args.shim), "-genv", "CALA_VERBOSE", "1",
                    "-genv", "CALA_SCALAPACK_THRESHOLD", "0"]
        cmd.append(os.path.join(TESTERS, exe))
        print("+ (cd", tmp, "&&", " ".join(cmd) + ")", flush=True)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        env.pop("LD_PRELOAD", None)
        return mpirun.run(cmd, tmp, env, args.timeout, exe)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--driver", choices=sorted(DATS), required=True)
    ap.add_argument("--type", choices="sdcz", default="d")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per tester run")
    args = ap.parse_args()

    exe = f"x{args.type}{args.driver}"
    if not os.path.exists(os.path.join(TESTERS, exe)):
        print(f"SKIP: {exe} not installed (Debian package scalapack-mpi-test)")
        return 77
    dat_name, make = DATS[args.driver]
    dat = make()
    plain = run(args, exe, dat_name, dat, False)
    if plain.hung:
        print("the plain run (no shim) hung; the ranks waited in:\n  " + "\n  ".join(plain.where()))
    shim = run(args, exe, dat_name, dat, True)
    # a hang at exit, after the tester's "END OF TESTS." (seen once with the PBLAS tester): judged on
    # the complete output, and SKIP (77) at best, never a pass
    exit_hang = shim.hung and "END OF TESTS." in shim.out
    if shim.hung and not exit_hang and shim.blame() != "cala":  # once more: ScaLAPACK's testers part ways by themselves
        print(f"the shim run hung ({shim.blame()}); the ranks waited in:\n  " + "\n  ".join(shim.where()))
        shim = run(args, exe, dat_name, dat, True)
    errors = []
    if shim.hung and not exit_hang:
        why = (f"the shim run hung twice, the second time after {shim.seconds:.0f} s ({shim.blame()}); the ranks "
               "waited in: " + "; ".join(shim.where()))
        if shim.blame() == "scalapack" or (plain.hung and shim.blame() != "cala"):
            # every rank inside ScaLAPACK, parted in one routine (or ScaLAPACK alone hung too): not a pass
            print(f"SKIP: {why}; ScaLAPACK's own hang (the plain run {'hung' if plain.hung else 'finished'})")
            return 77
        errors.append(why)
    p_res, s_res = results(plain.out), results(shim.out)
    p_sum, s_sum = summary(plain.out), summary(shim.out)
    if not shim.hung or exit_hang:
        if len(s_res) != len(p_res):
            errors.append(f"{len(s_res)} result lines with the shim, {len(p_res)} without")
        lost = [i for i, (a, b) in enumerate(zip(p_res, s_res)) if a == "PASSED" and b != "PASSED"]
        if lost:
            errors.append(f"{len(lost)} case(s) PASSED without the shim and not with it (result lines {lost})")
        if s_sum["failed"] > p_sum["failed"] or s_sum["passed"] < p_sum["passed"]:
            errors.append(f"summary with the shim {s_sum}, without {p_sum}")
        if shim.rc != 0 and plain.rc == 0 and not exit_hang:
            errors.append(f"the shim run exited with {shim.rc}")
    cala = re.findall(r"cala_scalapack: (P[SDCZ]\w+)\b.*-> cala:", shim.out)
    to_scalapack = re.findall(r"cala_scalapack: (P[SDCZ]\w+)\b.*-> ScaLAPACK: (.*)", shim.out)
    by_routine = {r: cala.count(r) for r in sorted(set(cala))}
    # x?qr calls no routine the shim exports (p?geqrf's p?larfb multiplies with local BLAS)
    if not cala and args.driver != "qr":
        errors.append("no call went through cala")
    # x?ls: ScaLAPACK's own p?gels (the shim has none), whose QR, Qᴴ·B and R solve come to cala.
    if args.driver == "ls":
        t = args.type.upper()
        for r in (f"P{t}GEQRF", f"P{t}{'UNMQR' if t in 'CZ' else 'ORMQR'}", f"P{t}TRSM"):
            if r not in by_routine:
                errors.append(f"p?gels's {r} did not go through cala")
    passed_plain = p_res.count("PASSED")
    print(f"{exe}: without the shim {passed_plain} of {len(p_res)} cases PASSED ({p_sum}, {plain.seconds:.0f} s); "
          f"with it {s_res.count('PASSED')} of {len(s_res)} ({s_sum}, {shim.seconds:.0f} s); calls through cala "
          f"(grid process (0,0)): {by_routine}; to ScaLAPACK: {len(to_scalapack)}"
          + (f" ({sorted(set(why for _, why in to_scalapack))})" if to_scalapack else ""))
    if errors:
        print(shim.out[-20000:])
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    if exit_hang:
        print("SKIP: every check passed, then the shim run hung at exit after the tester's end; the ranks "
              "waited in: " + "; ".join(shim.where()))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
