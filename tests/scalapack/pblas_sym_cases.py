"""The PBLAS tester's cases for the symmetric level-3 routines (p?symm, p?hemm, p?syrk, p?herk,
p?syr2k, p?her2k) through the shim: the suites pblas_tester.py runs for them.

A case is the dat file's columns (dict: diag side ta tb uplo m n k mats=(A, B, C), each matrix
(rows, cols, imb, inb, mb, nb, rsrc, csrc, i, j)) and `unfit`: the routines whose 2DBC layouts
cala's routine does not take in that case, by construction on every grid (the shim hands those
calls to ScaLAPACK and says why): p?symm/p?hemm need sub(A)'s tiles square and sub(C)'s rows
(SIDE = L) or columns (R) distributed like sub(A)'s; p?syrk/p?herk need sub(C)'s tiles square
(sub(A) the shim redistributes itself when its rows are not like sub(C)'s); p?syr2k/p?her2k take
any layouts (cala::gemm and redistribute).
"""

SYMM = ("SYMM", "HEMM")
SYRK = ("SYRK", "HERK")


def case(i, side, uplo, trans, m, n, k, nb, sources, b_nb=None, unfit=()):
    """Case number i: sub(A) and sub(C) start at the same offset inside a block of nb (their tiles
    square, C's rows and columns distributed like A's: cala takes it), IA/JA/IC/JC != 1, sub(B) in
    blocks of b_nb (redistributed into C's layout by p?symm), or (b_nb None) laid out like sub(C). sources: 2 x 2 grid
    only, A's and B's source processes cycle over all four with i, C's follow A's so the layouts
    stay aligned; else every source is 0 and C's blocks are A's (aligned on any grid).
    unfit "A": sub(A)'s column blocks one wider (no p?symm); "C": sub(C)'s (no p?syrk)."""
    r0 = i % nb
    ia, ja = 1 + r0 + nb * (i % 2), 1 + r0 + nb * ((i // 2) % 3)
    big = max(m, n, k)
    if sources:
        ic, jc = 1 + r0 + nb * ((i + 1) % 2), 1 + r0 + nb * (i % 3)
        rsa, csa = i % 2, (i // 2) % 2
        rsb, csb = (i // 2) % 2, (i + 1) % 2
        blk = lambda x: (x - 1) // nb
        rsc, csc = (rsa + blk(ia) - blk(ic)) % 2, (csa + blk(ja) - blk(jc)) % 2
    else:
        ic, jc = ia, ja
        rsa = csa = rsb = csb = rsc = csc = 0
    ib, jb = 1 + i % 3, 2 + i % 2
    if b_nb is None:  # sub(B) laid out exactly like sub(C): p?symm takes it in place
        b_nb, ib, jb, rsb, csb = nb, ic, jc, rsc, csc
    a_nbc = nb + 1 if "A" in unfit else nb
    c_nbc = nb + 1 if "C" in unfit else nb
    a = (ia + big + 2, ja + big + 1, nb, a_nbc, nb, a_nbc, rsa, csa, ia, ja)
    b = (ib + big + 1, jb + big + 3, b_nb, b_nb, b_nb, b_nb, rsb, csb, ib, jb)
    c = (ic + big + 3, jc + big + 2, nb, c_nbc, nb, c_nbc, rsc, csc, ic, jc)
    # sub(C)'s wider column blocks leave its columns unlike sub(A)'s: no p?symm on the right either
    routines = {"A": SYMM, "C": SYRK + (SYMM if side == "R" else ())}
    return dict(diag="N", side=side, ta=trans, tb="N", uplo=uplo, m=m, n=n, k=k, mats=(a, b, c),
                unfit=set(r for u in unfit for r in routines[u]))


SIZES = [(13, 9, 7), (7, 17, 11), (22, 5, 9), (9, 11, 14), (15, 15, 6), (4, 19, 3)]
NBS = [3, 4, 5, 2, 6]


def cases(trans_set, sources, unfit_cases=(), extra=True):
    """Every SIDE x UPLO x TRANS in trans_set (TRANS cycles when there are more sides than
    transposes), odd sizes, block sizes that divide nothing, B's blocking equal to C's in every
    third case; then the edge cases (n = 0, k = 0, 1 x 1, a larger one)."""
    out, i = [], 0
    for side in "LR":
        for uplo in "UL":
            for trans in trans_set:
                m, n, k = SIZES[i % len(SIZES)]
                nb = NBS[i % len(NBS)]
                out.append(case(i, side, uplo, trans, m, n, k, nb, sources, b_nb=None if i % 3 == 0 else nb + 2))
                i += 1
    for u in unfit_cases:
        out.append(case(i, "L" if i % 2 else "R", "U" if i % 3 else "L", trans_set[i % len(trans_set)],
                        11, 10, 8, 3, sources, b_nb=4, unfit=u))
        i += 1
    if extra:
        out.append(case(i, "L", "L", trans_set[0], 0, 0, 4, 2, sources))            # nothing to do
        out.append(case(i + 1, "R", "U", trans_set[-1], 6, 6, 0, 2, sources))       # k = 0: C := beta*C
        out.append(case(i + 2, "L", "U", trans_set[-1], 1, 1, 1, 2, sources))
        out.append(case(i + 3, "R", "L", trans_set[0], 33, 40, 29, 8, sources, b_nb=5))
    return out


def wide(side, uplo, trans):
    """Type-2 descriptors with a first block (9) wider than the block size (3), sub(A) and sub(C)
    starting past it at the same place (cala takes it), sub(B) inside B's wide first block with at
    most NB of its rows left there."""
    a = (40, 40, 9, 9, 3, 3, 0, 0, 11, 11)
    return dict(diag="N", side=side, ta=trans, tb="N", uplo=uplo, m=14, n=12, k=10,
                mats=(a, (40, 40, 7, 8, 2, 3, 0, 0, 6, 8), a), unfit=set())


# p?syrk/p?syr2k: real N, T, C; complex N, T; p?herk/p?her2k N, C (the complex runs test the
# Hermitian and symmetric routines on the cases of one transposition set, see SUITES)
D_SYMM = cases("NT", True, unfit_cases=("A", "A")) + [wide("R", "L", "N")]  # TRANS unused: 2 per SIDE x UPLO
D_SYRK = [c for c in cases("NTC", True, unfit_cases=("C",)) if c["side"] == "L" or c["unfit"] or c["k"] == 0
          or c["m"] == 33] + [wide("L", "U", "T")]
D_SYR2K = cases("NTC", True) + [wide("L", "L", "C")]
GRIDS_CORE = cases("NT", False, unfit_cases=("A", "C"))[:12]
CORE_C = [dict(c, ta="N" if c["ta"] == "N" else "C") for c in cases("NT", False, unfit_cases=("A", "C"))][:12]

ALL_REAL = ["SYMM", "SYRK", "SYR2K"]
ALL_HERM = ["HEMM", "HERK", "HER2K"]

# suite: (grids, cases, routines, beta = 0)
SUITES = {
    # d: every SIDE x UPLO (p?symm), UPLO x TRANS (p?syrk, p?syr2k), every source process (2 x 2)
    "symm": ([(2, 2)], D_SYMM, ["SYMM"], False),
    # (with p?symm: ScaLAPACK 2.2's tester reads its verdict on B for p?syrk, which has no B,
    # uninitialised in a run of p?syrk alone -- every case FAILED there, with or without the
    # shim (docs/scalapack.md); p?symm's check, before p?syrk's in each case, sets it. The
    # other suites test p?symm / p?hemm first too.)
    "syrk": ([(2, 2)], D_SYRK, ["SYMM", "SYRK"], False),
    "syr2k": ([(2, 2)], D_SYR2K, ["SYR2K"], False),
    # d: the three on a sub-grid 1 x 3 and a 2 x 1 grid, beta = 0
    "sym_beta0": ([(1, 3), (2, 1)], [GRIDS_CORE[i] for i in (1, 2, 4, 7, 8, 9, 11)], ALL_REAL, True),
    # s, c, z: the symmetric routines (c, z: complex symmetric) on 2 x 2
    "sym_core": ([(2, 2)], [c for i, c in enumerate(GRIDS_CORE) if i not in (2, 5)], ALL_REAL, False),
    # c, z: the Hermitian ones (TRANS N or C) on 2 x 2
    "herm_core": ([(2, 2)], [c for i, c in enumerate(CORE_C) if i not in (2, 5)], ALL_HERM, False),
    # d p?symm and p?syrk on a 2 x 3 grid (6 ranks: extended SBC r = 4, TBC c = 2), run with a
    # route forced (pblas_tester.py --symmetric): the UPLO = L cases go through the pattern, the
    # UPLO = U one stays on 2DBC, the unfit one goes to ScaLAPACK
    "sym_route6": ([(2, 3)], [GRIDS_CORE[i] for i in (2, 3, 6, 7, 0, 9)], ["SYMM", "SYRK"], False),
}
