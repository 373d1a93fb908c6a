#!/usr/bin/env python3
"""Checks the check of net_path.py: it must pass a job on the network path and fail the same job
put back on shared memory.

  net_path_check.py --mpiexec mpiexec.mpich --exe .../test_comm

Runs the 2-rank test program twice under net_path.py: as the network suite does (expects exit 0 and
"carried the traffic"), and with UCX's shared-memory transports given back inside the wrapped
command (expects exit 1 and "did not take the network path"). Part of the plain suite.
"""

import argparse
import os
import subprocess
import sys

WRAPPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "net_path.py")


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    env = dict(os.environ, CALA_TEST_NPROCS="2", OMP_NUM_THREADS="1")
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    print(r.stdout, end="", flush=True)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe", required=True)
    args = ap.parse_args()
    job = [args.mpiexec, "-n", "2", args.exe]
    errors = []

    rc, out = run([sys.executable, WRAPPER] + job)
    # 77: the job hung in MPI_Finalize after its checks (net_path.py); its traffic was still counted.
    if rc not in (0, 77) or "net_path: the network module (UCX over TCP) carried the traffic" not in out:
        errors.append(f"on the network path: exit {rc}, expected 0 (or 77) and the 'carried the traffic' line")
    rc, out = run([sys.executable, WRAPPER, "env", "UCX_TLS=self,sysv,cma"] + job)
    if rc != 1 or "the traffic did not take the network path" not in out:
        errors.append(f"on shared memory: exit {rc}, expected 1 and the 'did not take the network path' line")

    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    print("net_path_check: the check passes the network path and fails shared memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
