#!/usr/bin/env python3
"""ScaLAPACK's own PBLAS level-3 tester (Debian's scalapack-mpi-test) on the routines the shim
exports (p?gemm, p?trsm, p?trmm, p?geadd, p?tradd; p?symm, p?hemm, p?syrk, p?herk, p?syr2k,
p?her2k: pblas_sym_cases.py), through the shim.

Writes a P?BLAS3TST.dat that tests only the suite's routines (the others set to F), with the cases
below (sizes, transposes, sides, triangles, diagonals, offsets, block sizes, source processes,
first blocks, beta = 0), runs the tester
under mpiexec.mpich with libcala_scalapack.so preloaded, CALA_VERBOSE=1 and
CALA_SCALAPACK_THRESHOLD=0, and checks that
  * the error-exit tests ran and none reported a wrong error code,
  * every case PASSED (none failed or was skipped),
  * every computational call went through cala: one CALA_VERBOSE "-> cala:" line per call, no
    "-> ScaLAPACK" line; the error exits went through the shim too ("illegal argument" lines).
    For the symmetric routines, the calls a case makes unfit for cala by construction (its
    `unfit`) go to ScaLAPACK with a "layout cala::... does not take" line: exactly those.
With --with-plain the same input runs first without the shim and must pass there too.

  pblas_tester.py --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so --type d --suite shapes
"""

import argparse
import os
import re
import sys
import tempfile

import mpirun
import pblas_sym_cases as sym

TESTERS = os.path.join(mpirun.TESTERS, "PBLAS")

# One case: transa transb m n k, then for A, B, C: (rows, cols, imb, inb, mb, nb, rsrc, csrc, i, j).
# Matrix sizes stay small: the tester works in a 2 MB array per process.
SHAPES = [  # sources 0: valid on every grid shape
    ("N", "N", 22, 23, 24, (31, 31, 4, 4, 4, 4, 0, 0, 5, 5), (32, 32, 4, 4, 4, 4, 0, 0, 5, 5), (35, 35, 4, 4, 4, 4, 0, 0, 5, 5)),
    ("N", "T", 30, 29, 28, (40, 40, 2, 3, 5, 3, 0, 0, 3, 7), (36, 33, 3, 1, 3, 4, 0, 0, 2, 4), (41, 37, 5, 2, 6, 2, 0, 0, 9, 1)),
    ("T", "N", 17, 19, 40, (45, 20, 7, 7, 7, 7, 0, 0, 2, 3), (44, 25, 3, 3, 3, 3, 0, 0, 4, 6), (20, 22, 1, 1, 2, 2, 0, 0, 3, 2)),
    ("T", "T", 8, 20, 22, (30, 12, 4, 4, 5, 5, 0, 0, 8, 4), (24, 30, 2, 2, 2, 2, 0, 0, 3, 8), (10, 25, 3, 3, 3, 3, 0, 0, 2, 5)),
    ("C", "N", 13, 11, 9, (12, 16, 4, 2, 4, 3, 0, 0, 2, 2), (11, 14, 3, 3, 3, 3, 0, 0, 1, 3), (15, 12, 5, 5, 5, 5, 0, 0, 3, 2)),
    ("N", "C", 12, 10, 14, (13, 16, 2, 2, 3, 3, 0, 0, 2, 3), (12, 15, 4, 4, 4, 4, 0, 0, 1, 2), (14, 12, 2, 3, 2, 3, 0, 0, 3, 1)),
    ("C", "C", 6, 7, 5, (9, 8, 2, 2, 2, 2, 0, 0, 3, 2), (9, 8, 3, 3, 3, 3, 0, 0, 2, 2), (8, 9, 1, 1, 1, 1, 0, 0, 2, 3)),
    ("N", "N", 1, 1, 1, (3, 3, 2, 2, 2, 2, 0, 0, 2, 3), (3, 3, 2, 2, 2, 2, 0, 0, 3, 2), (3, 3, 2, 2, 2, 2, 0, 0, 1, 1)),
    ("N", "N", 0, 5, 5, (5, 5, 2, 2, 2, 2, 0, 0, 1, 1), (5, 5, 2, 2, 2, 2, 0, 0, 1, 1), (5, 5, 2, 2, 2, 2, 0, 0, 1, 1)),
    ("N", "T", 9, 7, 0, (9, 4, 3, 3, 3, 3, 0, 0, 1, 1), (7, 4, 3, 3, 3, 3, 0, 0, 1, 1), (12, 9, 3, 3, 3, 3, 0, 0, 2, 2)),
    ("N", "N", 64, 60, 56, (70, 66, 8, 8, 8, 8, 0, 0, 4, 9), (60, 64, 16, 4, 16, 4, 0, 0, 3, 2), (68, 64, 8, 8, 8, 8, 0, 0, 5, 3)),
    # first blocks wider than the block size (DTYPE 2 descriptors), submatrices that start past
    # them or inside them with at most MB (NB) rows (columns) left in them
    ("N", "T", 15, 14, 12, (30, 30, 9, 8, 3, 2, 0, 0, 11, 9), (30, 30, 7, 9, 2, 3, 0, 0, 6, 8), (30, 30, 12, 7, 4, 3, 0, 0, 10, 6)),
]
OFFSETS = [  # grid 2 x 2 only: non-zero source processes
    ("N", "N", 22, 23, 24, (31, 31, 4, 4, 4, 4, 1, 1, 5, 5), (32, 32, 4, 4, 4, 4, 1, 0, 5, 5), (35, 35, 4, 4, 4, 4, 0, 1, 5, 5)),
    ("N", "T", 30, 29, 28, (40, 40, 2, 3, 5, 3, 1, 0, 3, 7), (36, 33, 3, 1, 3, 4, 0, 1, 2, 4), (41, 37, 5, 2, 6, 2, 1, 1, 9, 1)),
    ("T", "N", 17, 19, 40, (45, 20, 7, 7, 7, 7, 0, 1, 2, 3), (44, 25, 3, 3, 3, 3, 1, 1, 4, 6), (20, 22, 1, 1, 2, 2, 1, 0, 3, 2)),
    ("T", "T", 8, 20, 22, (30, 12, 4, 4, 5, 5, 1, 1, 8, 4), (24, 30, 2, 2, 2, 2, 1, 0, 3, 8), (10, 25, 3, 3, 3, 3, 0, 1, 2, 5)),
    ("C", "T", 13, 11, 9, (12, 16, 4, 2, 4, 3, 1, 0, 2, 2), (14, 11, 3, 3, 3, 3, 1, 1, 3, 1), (15, 12, 5, 5, 5, 5, 1, 1, 3, 2)),
    ("N", "N", 48, 40, 44, (60, 50, 8, 6, 8, 6, 1, 1, 3, 5), (50, 50, 5, 7, 5, 7, 0, 1, 4, 2), (56, 48, 6, 8, 6, 8, 1, 0, 7, 4)),
    ("N", "N", 15, 14, 12, (30, 30, 9, 8, 3, 2, 1, 1, 11, 9), (30, 30, 7, 9, 2, 3, 1, 0, 6, 8), (30, 30, 12, 7, 4, 3, 0, 1, 10, 6)),
]
# p?trsm and p?trmm: side uplo transa diag m n, then A and B as above (C is unused by these
# routines; the tester still reads a descriptor for it). Every side x uplo x transa x diag, odd
# sizes, offsets IA/JA and IB/JB != 1, block sizes that divide nothing, A's tiles not square.
def _tri_cases():
    cases, i = [], 0
    for side in "LR":
        for uplo in "UL":
            for trans in "NTC":
                for diag in "NU":
                    m, n = [(13, 9), (7, 17), (22, 5), (9, 11), (15, 15), (4, 19)][i % 6]
                    k = m if side == "L" else n
                    mb = [(3, 3), (4, 4), (2, 5), (5, 2), (6, 6), (3, 4)][i % 6]
                    ia, ib = 1 + (i % 4) * 2, 1 + (i % 3)
                    big = max(m, n)  # room for p?gemm's m x 1 or 1 x m A too (see TRI_SUITES)
                    a = (big + ia + 3, big + ia + 2, mb[0], mb[1], mb[0], mb[1], 0, 0, ia, ia + (i % 2))
                    b = (m + ib + 2, n + ib + 4, 4, 3, 4, 3, 0, 0, ib, ib + 1)
                    cases.append((side, uplo, trans, diag, m, n, a, b))
                    i += 1
    cases.append(("L", "L", "N", "N", 0, 5, (5, 5, 2, 2, 2, 2, 0, 0, 1, 1), (5, 5, 2, 2, 2, 2, 0, 0, 1, 1)))
    cases.append(("R", "U", "T", "U", 1, 1, (3, 3, 2, 2, 2, 2, 0, 0, 2, 2), (3, 3, 2, 2, 2, 2, 0, 0, 3, 2)))
    cases.append(("L", "U", "N", "N", 40, 33, (50, 50, 8, 8, 8, 8, 0, 0, 9, 9), (48, 40, 8, 5, 8, 5, 0, 0, 5, 4)))
    # first blocks wider than the block size (DTYPE 2), the submatrix past the first block
    cases.append(("R", "L", "C", "N", 12, 14, (30, 30, 9, 9, 3, 3, 0, 0, 10, 10), (30, 30, 7, 8, 2, 3, 0, 0, 9, 9)))
    cases.append(("L", "U", "N", "N", 5, 30, (12, 12, 3, 3, 3, 3, 0, 0, 2, 2), (8, 33, 2, 2, 2, 2, 0, 0, 2, 3)))
    return cases


TRI = _tri_cases()


# p?geadd and p?tradd: "ADD" uplo trans m n, then A and C (as above); every TRANS x UPLO, odd
# sizes, offsets, A's and C's blockings different (the shim redistributes op(A) into C's layout).
def _add_cases():
    cases, i = [], 0
    for trans in "NTC":
        for uplo in "UL":
            for m, n in [(13 + i, 9 + 2 * i)]:
                ra, ca = (m, n) if trans == "N" else (n, m)
                ia, ic = 1 + i % 3, 2 + i % 2
                a = (ra + ia + 2, ca + ia + 3, 3, 4, 3, 4, 0, 0, ia, ia + 1)
                c = (m + ic + 1, n + ic + 2, 5, 2, 5, 2, 0, 0, ic, ic)
                cases.append(("ADD", uplo, trans, m, n, a, c))
                i += 1
    cases.append(("ADD", "L", "T", 0, 4, (6, 6, 2, 2, 2, 2, 0, 0, 1, 1), (6, 6, 2, 2, 2, 2, 0, 0, 1, 1)))
    cases.append(("ADD", "U", "N", 1, 1, (3, 3, 2, 2, 2, 2, 0, 0, 2, 2), (3, 3, 2, 2, 2, 2, 0, 0, 3, 2)))
    cases.append(("ADD", "U", "T", 21, 30, (40, 30, 7, 3, 4, 3, 0, 0, 5, 3), (26, 40, 6, 7, 6, 7, 0, 0, 2, 4)))
    return cases


ADD = _add_cases()
# the same on a 2 x 2 grid with every source process for A and B
TRI_SOURCES = [c[:6] + (c[6][:6] + ((i // 2) % 2, i % 2) + c[6][8:], c[7][:6] + (i % 2, (i // 3) % 2) + c[7][8:])
               for i, c in enumerate(TRI)]

SUITES = {
    # grids 2x2, 1x4, 4x1, and sub-grids 2x1, 1x3, 1x1 of the 4 ranks
    "shapes": ([(2, 2), (1, 4), (4, 1), (2, 1), (1, 3), (1, 1)], SHAPES),
    "offsets": ([(2, 2)], OFFSETS),
    # the same cases on fewer grids (a square one and a sub-grid), for the types that share d's and z's code
    "core": ([(2, 2), (1, 3)], SHAPES),
    # p?gemm with beta = 0 (C's prior contents not read)
    "beta0": ([(2, 2)], SHAPES),
    # p?trsm and p?trmm (the tester takes at most 20 cases a run: one run per side)
    "tri_left": ([(2, 2), (1, 3)], [c for c in TRI if c[0] == "L"]),
    "tri_right": ([(2, 2), (2, 1)], [c for c in TRI if c[0] == "R"]),
    "tri_sources": ([(2, 2)], [c for i, c in enumerate(TRI_SOURCES) if i % 2 == 0]),
    "tri_core": ([(2, 2)], [c for i, c in enumerate(TRI) if i % 2 == 1]),
    # p?geadd and p?tradd
    "add": ([(2, 2), (1, 3)], ADD),
    "add_core": ([(2, 2)], ADD),
}
# The runs of p?trsm and p?trmm test p?gemm too (K = 1, C = B): ScaLAPACK 2.2's tester reads
# IERR(6) (its check of C) without setting it for p?trmm and p?trsm, which have no C (and
# IERR(5), B's, for p?geadd and p?tradd: their runs test p?gemm too, K = 1, B = C); valgrind
# shows the uninitialised stack read, and the verdict follows whatever the stack held (with no
# shim at all, LD_DEBUG=bindings turns a PASSED p?trsm into FAILED). p?gemm's check, which runs
# first in each test, sets it.
TRI_SUITES = ("tri_left", "tri_right", "tri_sources", "tri_core")
ROUTINES = {
    "s": ["GEMM", "SYMM", "SYRK", "SYR2K", "TRMM", "TRSM", "GEADD", "TRADD"],
    "d": ["GEMM", "SYMM", "SYRK", "SYR2K", "TRMM", "TRSM", "GEADD", "TRADD"],
    "c": ["GEMM", "SYMM", "HEMM", "SYRK", "HERK", "SYR2K", "HER2K", "TRMM", "TRSM", "GEADD", "TRADD"],
    "z": ["GEMM", "SYMM", "HEMM", "SYRK", "HERK", "SYR2K", "HER2K", "TRMM", "TRSM", "GEADD", "TRADD"],
}
SCALARS = {"s": ("2.0E0", "3.0E0"), "d": ("2.0D0", "3.0D0"),
           "c": ("(2.0E0, -4.0E0)", "(3.0E0, -2.0E0)"), "z": ("(2.0D0, -4.0D0)", "(3.0D0, -2.0D0)")}


def normalize(case):
    """A p?gemm case (transa transb m n k A B C) or a p?trsm/p?trmm case (side uplo transa diag m n
    A B) as the dat file's columns (the symmetric routines' cases are already)."""
    if isinstance(case, dict):
        return case
    if case[0] == "ADD":
        _, uplo, ta, m, n, a, c = case
        return dict(diag="N", side="L", ta=ta, tb="N", uplo=uplo, m=m, n=n, k=min(1, m, n), mats=(a, c, c))
    if case[0] in ("L", "R"):  # p?gemm's cases start with TRANSA (N, T or C)
        side, uplo, ta, diag, m, n, a, b = case
        return dict(diag=diag, side=side, ta=ta, tb="N", uplo=uplo, m=m, n=n, k=min(1, m, n), mats=(a, b, b))
    ta, tb, m, n, k, a, b, c = case
    return dict(diag="N", side="L", ta=ta, tb=tb, uplo="U", m=m, n=n, k=k, mats=(a, b, c))


def dat_file(t, grids, cases, tested, beta=None):
    p = t.upper()
    cases = [normalize(c) for c in cases]
    row = lambda vals, what: " ".join(str(v) for v in vals) + "\t\tvalues of " + what
    lines = [
        "'Level 3 PBLAS, Testing input file'",
        "'cala_scalapack: " + ", ".join(f"P{p}{r}" for r in tested) + " through the shim'",
        f"'P{p}BLAS3TST.SUMM'\toutput file name (if any)",
        "6\t\tdevice out",
        "F\t\tlogical flag, T to stop on failures",
        "T\t\tlogical flag, T to test error exits",
        "0\t\tverbosity, 0 for pass/fail, 1-3 for matrix dump on errors",
        "10\t\tthe leading dimension gap",
        "16.0\t\tthreshold value of test ratio",
        "10\t\tvalue of the logical computational blocksize NB",
        f"{len(grids)}\t\tnumber of process grids (ordered pairs of P & Q)",
        row([g[0] for g in grids], "P"),
        row([g[1] for g in grids], "Q"),
        f"{SCALARS[t][0]}\t\tvalue of ALPHA",
        f"{SCALARS[t][1] if beta is None else beta}\t\tvalue of BETA",
        f"{len(cases)}\t\tnumber of tests problems",
        row([f"'{c['diag']}'" for c in cases], "DIAG"),
        row([f"'{c['side']}'" for c in cases], "SIDE"),
        row([f"'{c['ta']}'" for c in cases], "TRANSA"),
        row([f"'{c['tb']}'" for c in cases], "TRANSB"),
        row([f"'{c['uplo']}'" for c in cases], "UPLO"),
        row([c["m"] for c in cases], "M"),
        row([c["n"] for c in cases], "N"),
        row([c["k"] for c in cases], "K"),
    ]
    names = ["M", "N", "IMB", "INB", "MB", "NB", "RSRC", "CSRC"]
    for mi, mat in enumerate("ABC"):
        for e, name in enumerate(names):
            lines.append(row([c["mats"][mi][e] for c in cases], f"{name}_{mat}"))
        lines.append(row([c["mats"][mi][8] for c in cases], f"I{mat}"))
        lines.append(row([c["mats"][mi][9] for c in cases], f"J{mat}"))
    for r in ROUTINES[t]:
        name = f"P{p}{r}"
        lines.append(f"{name:<7} {'T' if r in tested else 'F'}\tput F for no test in the same column")
    return "\n".join(lines) + "\n"


def check_run(args, run, t, grids, cases, tested, plain):
    """What is wrong with one run of the tester (plain: without the shim); prints the tallies."""
    p, out = t.upper(), run.out
    errors = []
    # Seen once in ~30 runs (c tri_core, every case PASSED): the ranks hung at exit, after the
    # tester's "End of Tests." and its STOP on every rank (docs/scalapack.md). Such a run is
    # judged on its complete output and ends SKIP (77), never as a pass; any other hang fails.
    exit_hang = run.hung and out.count("End of Tests.") > 0
    if run.hung and not exit_hang:
        errors.append(f"hung after {run.seconds:.0f} s; the ranks waited in: " + "; ".join(run.where()))
    elif run.rc != 0 and not exit_hang:
        errors.append(f"tester exited with {run.rc}")
    if "Error-exit tests completed." not in out:
        errors.append("the error-exit tests did not complete")
    errors += [l.strip() for l in out.splitlines() if "ERROR *****" in l or "*** ERROR ***" in l
               or re.search(r"check: .*FAILED", l)]
    fitting = sum(1 for (gp, gq) in grids if gp * gq <= args.np)
    expected = fitting * len(cases)
    for r in tested:
        routine = f"P{p}{r}"
        summary = re.search(rf"\|\s+{routine}\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", out)
        if not summary:
            errors.append(f"no {routine} line in the testing summary")
        else:
            total, passed, failed, skipped = map(int, summary.groups())
            if (total, passed, failed, skipped) != (expected, expected, 0, 0):
                errors.append(f"summary: {total} tests, {passed} passed, {failed} failed, {skipped} skipped; "
                              f"expected {expected} tests, all passed")
        passed_lines = len(re.findall(rf"Computational check: {routine}\s+PASSED", out))
        through_cala = len(re.findall(rf"cala_scalapack: {routine}\(.*-> cala:", out))
        to_scalapack = len(re.findall(rf"cala_scalapack: {routine}\(.*-> ScaLAPACK", out))
        illegal = len(re.findall(rf"cala_scalapack: {routine}\(.*-> illegal argument", out))
        pxerbla = len(re.findall(rf"On entry to {routine} parameter number", out))
        # a first block wider than the block size that the submatrix starts inside has no cala
        # layout: the shim hands those calls to ScaLAPACK, by design (docs/scalapack.md)
        no_layout = len(re.findall(rf"cala_scalapack: {routine}\(.*-> ScaLAPACK: an operand has no cala layout", out))
        # the symmetric routines' layouts cala's routine does not take, made so by the case
        unfit = len(re.findall(rf"cala_scalapack: {routine}\(.*-> ScaLAPACK: a layout cala::\w+ does not take", out))
        unfit_expected = fitting * sum(1 for c in cases if r in normalize(c).get("unfit", ()))
        if passed_lines != expected:
            errors.append(f"{passed_lines} 'Computational check: {routine} PASSED' lines, expected {expected}")
        if plain:
            print(f"{routine} ({args.suite}, no shim): {passed_lines} cases PASSED on grids {grids}")
            continue
        # the tester's check of p?trsm calls p?trmm: more p?trmm calls than cases
        taken = through_cala + no_layout + unfit
        if taken != expected and not (r == "TRMM" and taken > expected):
            errors.append(f"{through_cala} calls went through cala (+ {no_layout} without a cala layout, "
                          f"{unfit} in layouts cala's routine does not take), expected {expected}")
        if unfit != unfit_expected:
            errors.append(f"{unfit} calls in layouts cala's routine does not take, expected {unfit_expected}")
        if to_scalapack != no_layout + unfit:
            errors.append(f"{to_scalapack - no_layout - unfit} calls went to ScaLAPACK with CALA_SCALAPACK_THRESHOLD=0")
        if illegal == 0 or pxerbla == 0:
            errors.append(f"error exits: {illegal} illegal-argument lines from the shim, {pxerbla} PXERBLA lines")
        print(f"{routine} ({args.suite}): {passed_lines} cases PASSED on grids {grids}; {through_cala} calls "
              f"through cala, {to_scalapack} to ScaLAPACK ({no_layout} without a cala layout, {unfit} in layouts "
              f"cala's routine does not take); error exits: {illegal} illegal-argument reports from the shim "
              f"({pxerbla} PXERBLA lines over all processes)")
    return errors, exit_hang


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--type", choices="sdcz", default="d")
    ap.add_argument("--suite", choices=sorted(SUITES) + sorted(sym.SUITES), default="shapes")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--plain", action="store_true",
                    help="no shim: ScaLAPACK alone on the same input (the tables of docs/scalapack.md)")
    ap.add_argument("--with-plain", action="store_true", help="run --plain first, then through the shim")
    ap.add_argument("--show", action="store_true", help="print the tester's output even when all passed")
    ap.add_argument("--symmetric", choices=["auto", "2dbc", "sbc", "tbc"],
                    help="CALA_SHIM_SYMMETRIC for the shim's run; sbc/tbc: some p?symm/p?syrk calls must run on it")
    args = ap.parse_args()

    t, p = args.type, args.type.upper()
    zero = {"s": "0.0E0", "d": "0.0D0", "c": "(0.0E0, 0.0E0)", "z": "(0.0D0, 0.0D0)"}[t]
    if args.suite in sym.SUITES:
        grids, cases, tested, beta0 = sym.SUITES[args.suite]
    else:
        grids, cases = SUITES[args.suite]
        tested = (["GEMM", "TRSM", "TRMM"] if args.suite in TRI_SUITES else
                  ["GEMM", "GEADD", "TRADD"] if args.suite.startswith("add") else ["GEMM"])
        beta0 = args.suite == "beta0"
    tester = os.path.join(TESTERS, f"{t}pb3tst")
    if not os.path.exists(tester):
        print(f"SKIP: {tester} not installed (Debian package scalapack-mpi-test)")
        return 77
    errors, exit_hang, out = [], False, ""
    for plain in ([True, False] if args.with_plain else [args.plain]):
        with tempfile.TemporaryDirectory(prefix="cala_pblas_") as tmp:
            with open(os.path.join(tmp, f"P{p}BLAS3TST.dat"), "w") as f:
                f.write(dat_file(t, grids, cases, tested, zero if beta0 else None))
            env = dict(os.environ, OMP_NUM_THREADS="1")
            cmd = [args.mpiexec, "-n", str(args.np), "-genv", "LD_PRELOAD", os.path.abspath(args.shim),
                   "-genv", "CALA_VERBOSE", "1", "-genv", "CALA_SCALAPACK_THRESHOLD", "0"] + (
                   ["-genv", "CALA_SHIM_SYMMETRIC", args.symmetric] if args.symmetric else []) + [tester]
            if plain:
                cmd = [args.mpiexec, "-n", str(args.np), tester]
                env.pop("LD_PRELOAD", None)
            print("+ (cd", tmp, "&&", " ".join(cmd) + ")", flush=True)
            run = mpirun.run(cmd, tmp, env, args.timeout, os.path.basename(tester))
        errs, hang = check_run(args, run, t, grids, cases, tested, plain)
        if not plain and args.symmetric in ("sbc", "tbc"):
            # the verbose lines name the route: with UPLO = L on a grid a pattern fits, the forced one
            for r in tested:
                lines = re.findall(rf"cala_scalapack: P{p}{r}\(.*-> cala:.*route=(\S+)", run.out)
                on = sum(1 for x in lines if x.startswith(args.symmetric))
                print(f"P{p}{r}: {on} of {len(lines)} calls through cala ran on {args.symmetric} (CALA_SHIM_SYMMETRIC)")
                if on == 0:
                    errs.append(f"no P{p}{r} call ran on the forced {args.symmetric} layout")
        errors += [("without the shim: " if plain else "") + e for e in errs]
        exit_hang, out = exit_hang or hang, out + run.out
    if errors or args.show:
        print(out)
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    if exit_hang:
        print("SKIP: every check passed, then a run hung at exit after the tester's end")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
