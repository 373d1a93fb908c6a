#!/usr/bin/env python3
"""The tests the Open MPI flavour runs (./scripts/test --openmpi), and the ninja targets they need.

  openmpi_tests.py BUILDDIR names     one test name a line
  openmpi_tests.py BUILDDIR network   the tests run again on the network path (Open MPI over TCP)
  openmpi_tests.py BUILDDIR targets   the libraries and executables those tests start (ninja targets)

What a program on Open MPI meets: the installed packages used from CMake and pkg-config
(find_package(cala_openmpi): its PDGEMM through cala), the drop-in example, ScaLAPACK's own
testers (Debian's openmpi-tests set) preloaded with libcala_scalapack_openmpi.so, the shim's
argument checks, and the MPICH shim refused with a clear message. The library's own MPI tests are
the same sources on either MPI and run under MPICH (the plain suite).
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
from meson_tests import registered, targets  # noqa: E402

# Test names (regular expressions, whole names).
SELECTED = [
    r"packaging_consumers",
    r"scalapack_dropin",
    r"scalapack_wrong_flavour",
    r"scalapack_shim_checks",
    r"pblas_tester_(d_shapes|z_core|d_tri_left|d_symm|z_herm_core)",
    r"llt_tester_(d_L|z_core)",
    # Not the driver testers (x?lu, x?inv, x?ls) nor the LU/QR testers: Open MPI forwards a rank's
    # output in the pieces it reads, not in lines, and their result lines came cut by the lines
    # of other ranks (1 run in 3 or 4 of driver_tester_dlu/zlu); they pass preloaded when the
    # lines come whole. They run under MPICH, whose launcher forwards whole lines.
    r"app_.*",
]
# The network path under Open MPI (meson test --setup network): a few of the library's MPI tests too.
NETWORK = [r"test_comm_np2", r"test_summa_np2", r"test_potrf_np2", r"scalapack_shim_checks"]
LIBRARIES = ["lib/libcala_openmpi.so", "lib/scalapack/libcala_scalapack_openmpi.so"]


def selected(builddir, patterns=None):
    for t in registered(builddir):
        if any(re.fullmatch(p, t["name"]) for p in (patterns or SELECTED + NETWORK)):
            yield t


def main(builddir, what):
    tests = list(selected(builddir))
    if what == "names":
        lines = {t["name"] for t in selected(builddir, SELECTED)}
    elif what == "network":
        lines = {t["name"] for t in selected(builddir, NETWORK)}
    else:
        known = subprocess.run(["ninja", "-C", builddir, "-t", "targets", "all"], check=True, stdout=subprocess.PIPE,
                               text=True).stdout
        known = {line.split(":")[0] for line in known.splitlines()}
        lines = set(LIBRARIES) | {p for t in tests for p in targets(builddir, t) if p in known}
    print("\n".join(sorted(lines)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
