#!/usr/bin/env python3
"""The thread default through the ScaLAPACK ABI (issue 32): a plain ScaLAPACK program (the drop-in
example) with the shim preloaded on 2 processes, CALA_VERBOSE=1, in three environments:

  nothing set          each rank takes its share of the node: the CALA_VERBOSE line
                       "cala: N thread(s) per rank (node: C cores / 2 ranks)" with N = max(1, C // 2)
                       and C no more than this machine's CPUs; OMP_NUM_THREADS really unset (popped
                       from the environment, no -genv);
  OMP_NUM_THREADS=1    left as the user set it: "cala: 1 thread per rank (OMP_NUM_THREADS)";
  CALA_THREADS=1       wins over OMP_NUM_THREADS=2: "cala: 1 thread per rank (CALA_THREADS)".

Every run must print its checksum line (the product ran). Not timed.

  thread_default.py --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so --exe .../scalapack_dropin
"""

import argparse
import os
import re
import subprocess
import sys

LINE = re.compile(r"cala: (\d+) threads? per rank \((.*)\)")


def run(args, set_env):
    env = dict(os.environ, CALA_VERBOSE="1", CALA_SCALAPACK_THRESHOLD="0")
    for k in ("OMP_NUM_THREADS", "CALA_THREADS", "LD_PRELOAD"):
        env.pop(k, None)
    env.update(set_env)
    cmd = [args.mpiexec, "-n", "2", "-genv", "LD_PRELOAD", os.path.abspath(args.shim), args.exe,
           "300", "32", "1", "2", "R", "1"]
    print("+", " ".join(f"{k}={v}" for k, v in set_env.items()), " ".join(cmd), flush=True)
    # stdout, then stderr: read apart, so that a log line cannot split another line
    ran = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    out = ran.stdout + ran.stderr
    print(out, end="")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--exe", required=True)
    args = ap.parse_args()
    cpus = len(os.sched_getaffinity(0))
    errors = []
    for set_env, want in [({}, None), ({"OMP_NUM_THREADS": "1"}, (1, "OMP_NUM_THREADS")),
                          ({"OMP_NUM_THREADS": "2", "CALA_THREADS": "1"}, (1, "CALA_THREADS"))]:
        out = run(args, set_env)
        what = " ".join(f"{k}={v}" for k, v in set_env.items()) or "nothing set"
        if "checksum=" not in out:
            errors.append(f"{what}: the program did not finish")
        lines = LINE.findall(out)
        if len(lines) != 1:
            errors.append(f"{what}: expected one CALA_VERBOSE thread line, got {len(lines)}")
            continue
        threads, source = int(lines[0][0]), lines[0][1]
        if want is None:
            m = re.fullmatch(r"node: (\d+) cores / (\d+) ranks", source)
            if not m:
                errors.append(f"{what}: the threads came from '{source}', not the node")
                continue
            cores, ranks = int(m.group(1)), int(m.group(2))
            if ranks != 2 or not 1 <= cores <= cpus or threads != max(1, cores // 2):
                errors.append(f"{what}: {threads} threads from {cores} cores / {ranks} ranks "
                              f"(this machine: {cpus} CPUs, 2 ranks)")
        elif (threads, source) != want:
            errors.append(f"{what}: {threads} threads from '{source}', expected {want[0]} from '{want[1]}'")
    for e in errors:
        print("FAIL:", e)
    print("thread default through the ABI:", "FAILED" if errors else "all checks passed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
