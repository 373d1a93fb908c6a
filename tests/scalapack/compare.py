#!/usr/bin/env python3
"""PDGEMM, PDTRSM, PDPOSV, PDSYRK, PDSYMM, PDPOTRF or the LU tester's PDGETRF through the ScaLAPACK ABI: cala (the shim)
against ScaLAPACK's own, in one session.

Runs the drop-in example (a plain ScaLAPACK program) alternately, `--rounds` times each:
  scalapack  the shim preloaded with CALA_SCALAPACK_THRESHOLD=1e30: every call falls through to
             ScaLAPACK's own PDGEMM, in the same process setup as cala's runs (same BLIS kernels);
  cala       the shim preloaded with CALA_SCALAPACK_THRESHOLD=0: every call goes through cala;
  plain      (with --plain) no shim at all, BLIS_ARCH_TYPE as given (BLIS picks its kernels), ScaLAPACK
             on the system's libblas.so.3 (BLIS or OpenBLAS): with the shim preloaded, ScaLAPACK's
             BLAS calls bind to the BLIS cala links, whichever library cala's own kernels run on.
Each run reports its best time over `--runs` calls (the slowest process's); the ratio is
best(scalapack) / best(cala) over all rounds. Not a test: timings are never test assertions.

--routine trsm|posv|syrk|symm|getrf|potrf|geqrf|gels runs abi_solve (--exe build/tests/scalapack/abi_solve, B n x --nrhs;
syrk: A n x --nrhs);
scalapack is then the shim preloaded with CALA_SHIM=off. --routine lu-tester runs ScaLAPACK's
xdlu on one n x n problem (no condition estimation), CALA_SHIM=off against on, and compares the
tester's "LU Time" (PDGETRF, which calls PDTRSM and PDGEMM).

  compare.py --mpiexec mpiexec.mpich --shim build/lib/scalapack/libcala_scalapack.so \
             --exe build/tests/scalapack/scalapack_dropin --n 4096 --nb 256 --grid 1x2 --rounds 3

--threads sets OMP_NUM_THREADS for every process; --threads unset runs without it (popped from the
environment, no -genv: cala's default, the node's cores over its ranks); --cala-threads unset,2 also
runs cala with those settings in every round (configs cala@unset, cala@2), interleaved with the others.

gemm on a GPU node: --devices 0 runs cala with CALA_DEVICES=0 (and CALA_SHIM=log: the routing line
is printed), so that PDGEMM runs resident on the rank's GPU where the shim's model says the copies
pay; --resident-reference build/bench/cala-bench also runs, each round, `cala-bench gemm --resident`
on one rank at the same m, n, k and reads its in-core cuBLAS reference (one cublasDgemm on operands
already on the GPU): the ratio printed is cala's best GFLOP/s through the ABI, copies included, over
the median of those references (docs/scalapack.md, "On a GPU node").

gemm only: --shape MxNxK multiplies rectangles (C m x n, inner dimension k) instead of n x n x n;
--reference build/bench/cala-bench also runs, each round, `cala-bench gemm` on the same m, n, k,
nb, grid and threads and reads its concurrent BLAS reference (every rank's local product
m_loc x n_loc x k at once, the rate of the whole machine, issue 18): the efficiency printed is
cala's best GFLOP/s through the ABI over the median of those references.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

LU_DAT = """'SCALAPACK, LU factorization input file'
'cala_scalapack: compare.py'
'LU.out'
6
1\t\tnumber of problems sizes
{n}\t\tvalues of M
{n}\t\tvalues of N
1\t\tnumber of NB's
{nb}\t\tvalues of NB
1\t\tnumber of NRHS's
1\t\tvalues of NRHS
1\t\tNumber of NBRHS's
1\t\tvalues of NBRHS
1\t\tnumber of process grids
{p}\t\tvalues of P
{q}\t\tvalues of Q
1.0\t\tthreshold
F\t\t(T or F) Test Cond. Est. and Iter. Ref. Routines
"""
LU_TESTER = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu"

LINE = re.compile(r"best_s=(\S+) gflops=(\S+) checksum=(\S+)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--shim", required=True)
    ap.add_argument("--exe", help="scalapack_dropin (gemm) or abi_solve (trsm, posv, syrk, symm, getrf, potrf, geqrf, gels)")
    ap.add_argument("--routine", choices=["gemm", "trsm", "posv", "syrk", "symm", "getrf", "potrf", "geqrf", "gels", "lu-tester"], default="gemm")
    ap.add_argument("--nrhs", type=int, default=4096, help="columns of B (trsm, posv, symm), of A (syrk)")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--shape", help="gemm: MxNxK (C m x n, inner dimension k) instead of n x n x n")
    ap.add_argument("--reference", metavar="CALA_BENCH", help="gemm: cala-bench, for the concurrent BLAS reference")
    ap.add_argument("--nb", type=int, default=256)
    ap.add_argument("--grid", default="1x2")
    ap.add_argument("--order", default="R")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1",
                    help="OMP_NUM_THREADS per process; 'unset': none in the environment (cala's default, the "
                         "node's cores over its ranks)")
    ap.add_argument("--cala-threads", default="", metavar="T1,T2",
                    help="also run cala with these thread settings (as --threads: a number or unset), in every round "
                         "right after the others: config cala@T")
    ap.add_argument("--devices", metavar="CALA_DEVICES", help="gemm: run cala with CALA_DEVICES set (the resident route)")
    ap.add_argument("--resident-reference", metavar="CALA_BENCH",
                    help="gemm with --devices: cala-bench, for the in-core cuBLAS reference of `gemm --resident`")
    ap.add_argument("--plain", metavar="BLIS_ARCH_TYPE", help="also run without the shim, with this BLIS_ARCH_TYPE")
    args = ap.parse_args()
    p, q = (int(x) for x in args.grid.split("x"))
    shape = args.shape or f"{args.n}x{args.n}x{args.n}"
    prog = [args.exe, shape, str(args.nb), str(p), str(q), args.order, str(args.runs)]
    configs = {
        "scalapack": ["-genv", "LD_PRELOAD", os.path.abspath(args.shim), "-genv", "CALA_SCALAPACK_THRESHOLD", "1e30"],
        "cala": ["-genv", "LD_PRELOAD", os.path.abspath(args.shim), "-genv", "CALA_SCALAPACK_THRESHOLD", "0"],
    }
    if args.devices:
        configs["cala"] += ["-genv", "CALA_DEVICES", args.devices, "-genv", "CALA_SHIM", "log"]
    cwd = None
    if args.routine in ("trsm", "posv", "syrk", "symm", "getrf", "potrf", "geqrf", "gels"):
        prog = [args.exe, args.routine, str(args.n), str(args.nrhs), str(args.nb), str(p), str(q), str(args.runs)]
    if args.routine == "lu-tester":
        cwd = tempfile.mkdtemp(prefix="cala_compare_")
        with open(os.path.join(cwd, "LU.dat"), "w") as f:
            f.write(LU_DAT.format(n=args.n, nb=args.nb, p=p, q=q))
        prog = [LU_TESTER]
    if args.routine != "gemm":
        configs["scalapack"] = ["-genv", "LD_PRELOAD", os.path.abspath(args.shim), "-genv", "CALA_SHIM", "off"]
        configs["cala"] = ["-genv", "LD_PRELOAD", os.path.abspath(args.shim), "-genv", "CALA_SHIM", "on",
                           "-genv", "CALA_SCALAPACK_THRESHOLD", "0"]
    if args.plain is not None:
        configs["plain"] = ["-genv", "BLIS_ARCH_TYPE", args.plain]
    threads_of = {name: args.threads for name in configs}
    for t in filter(None, args.cala_threads.split(",")):
        configs[f"cala@{t}"], threads_of[f"cala@{t}"] = configs["cala"], t
    best, refs, gpu_refs, best_gflops = {}, [], [], 0.0
    for r in range(args.rounds):
        for name, extra in configs.items():
            env, threads = thread_env(threads_of[name])
            tj = threads_of[name] if threads_of[name].isdigit() else f'"{threads_of[name]}"'  # JSON: 1, or "unset"
            cmd = [args.mpiexec, "-n", str(p * q)] + threads + extra + prog
            # stdout, then stderr: read apart, so that a shim log line cannot split a result line
            ran = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 check=True, cwd=cwd)
            out = ran.stdout + ran.stderr
            if args.routine == "lu-tester":  # WALL M N NB NRHS NBRHS P Q LU-Time Sol-Time MFLOPS CHECK
                walls = [l.split() for l in out.splitlines() if l.startswith("WALL")]
                if not walls or walls[0][-1] != "PASSED":
                    print(out)
                    return 1
                t, gf, check = float(walls[0][8]), walls[0][10], '"PASSED"'
            else:
                m = LINE.search(out)
                if not m:
                    print(out)
                    return 1
                t, gf, check = float(m.group(1)), m.group(2), m.group(3)
            for route in re.findall(r"^cala_scalapack log: .*$", out, re.M)[:1]:
                print(route, file=sys.stderr)
            print(f'{{"routine":"{args.routine}","round":{r},"config":"{name}","n":{args.n},"shape":"{shape}","nb":{args.nb},'
                  f'"grid":"{args.grid}","threads":{tj},"best_s":{t},"gflops":{gf},"checksum":{check}}}',
                  flush=True)
            best[name] = min(best.get(name, 1e300), t)
            if name == "cala":
                best_gflops = max(best_gflops, float(gf))
        if args.reference and args.routine == "gemm":
            refs.append(blas_reference(args, shape, p, q))
            print(f'{{"routine":"reference","round":{r},"shape":"{shape}","nb":{args.nb},"grid":"{args.grid}",'
                  f'"threads":{args.threads if args.threads.isdigit() else repr(args.threads).replace(chr(39), chr(34))},'
                  f'"reference_gflops":{refs[-1]}}}', flush=True)
        if args.resident_reference and args.routine == "gemm":
            gpu_refs.append(resident_reference(args, shape))
            print(f'{{"routine":"resident_reference","round":{r},"shape":"{shape}","device":"{args.devices}",'
                  f'"reference_gflops":{gpu_refs[-1]}}}', flush=True)
    ratio = best["scalapack"] / best["cala"]
    print(f"best ScaLAPACK {best['scalapack']:.4f} s, best cala {best['cala']:.4f} s: cala is {ratio:.2f}x "
          f"ScaLAPACK's own ({args.routine})" + (f"; without the shim {best['plain']:.4f} s (its own libblas.so.3): cala is "
             f"{best['plain'] / best['cala']:.2f}x it" if "plain" in best else ""))
    for name in (n for n in best if n.startswith("cala@")):
        print(f"best {name} {best[name]:.4f} s: {best['cala'] / best[name]:.3f} of cala's rate with "
              f"--threads {args.threads}")
    if refs:
        ref = sorted(refs)[len(refs) // 2]
        print(f"concurrent BLAS reference {ref:.1f} GF/s (median of {len(refs)}): cala through the ABI at "
              f"{best_gflops:.1f} GF/s, efficiency {best_gflops / ref:.3f}")
    if gpu_refs:
        ref = sorted(gpu_refs)[len(gpu_refs) // 2]
        print(f"in-core cuBLAS reference {ref:.1f} GF/s (median of {len(gpu_refs)}): cala through the ABI, copies "
              f"included, at {best_gflops:.1f} GF/s, {best_gflops / ref:.3f} of it; "
              f"{ratio:.1f}x ScaLAPACK on the CPU")
    return 0


def resident_reference(args, shape):
    """The in-core cuBLAS rate of `cala-bench gemm --resident` on one rank (one cublas?gemm of the whole
    m x n x k on operands already on the device, median over its runs), for the device of rank 0."""
    m, n, k = shape.split("x")
    env, threads = thread_env(args.threads)
    dev = (args.devices or "0").split(",")[0]
    cmd = [args.mpiexec, "-n", "1"] + threads + [args.resident_reference, "--json", "gemm", "--resident", dev,
                                                 "--m", m, "--n", n, "--k", k, "--runs", "1"]
    run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    found = re.search(r'"reference_gflops":([0-9.eE+-]+)', run.stdout)
    if not found:
        raise subprocess.CalledProcessError(run.returncode, cmd)
    return float(found.group(1))


def thread_env(threads):
    """The environment and mpiexec arguments for --threads: OMP_NUM_THREADS set everywhere, or (unset)
    removed from the environment and not passed, so that every process starts without it."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if threads == "unset":
        env.pop("OMP_NUM_THREADS", None)
        return env, []
    env["OMP_NUM_THREADS"] = threads
    return env, ["-genv", "OMP_NUM_THREADS", threads]


def blas_reference(args, shape, p, q):
    """cala-bench gemm's concurrent reference rate for this product on this grid: GFLOP/s of the whole
    machine (every rank's local product at once, summed), as cala's rate is."""
    m, n, k = shape.split("x")
    env, threads = thread_env(args.threads)
    cmd = [args.mpiexec, "-n", str(p * q)] + threads + [args.reference, "--json",
           "gemm", "--m", m, "--n", n, "--k", k, "--nb", str(args.nb), "--grid", f"{p}x{q}", "--runs", "1"]
    if args.threads != "unset":
        cmd += ["--threads", args.threads]
    run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    # Exit 3: cala-bench's one native run beat the reference's median by more than its spread (its
    # check of the reference, bench/concurrent_ref.hpp); the reference itself was still measured
    # and printed, and it is all this script takes. Any other failure stops the comparison.
    if run.returncode not in (0, 3) or '"reference_gflops"' not in run.stdout:
        raise subprocess.CalledProcessError(run.returncode, cmd)
    if run.returncode == 3:
        print(f"note: cala-bench gemm {shape} {p}x{q}: its native run beat the reference's median "
              "beyond the reference's spread (a busy machine); the reference is used as measured", file=sys.stderr)
    return float(re.search(r'"reference_gflops":([0-9.eE+-]+)', run.stdout).group(1))  # all ranks' sum


if __name__ == "__main__":
    sys.exit(main())
