#!/usr/bin/env python3
"""The tests the sanitizer build runs, and the ninja targets they need.

  sanitized_tests.py BUILDDIR names     one test name a line: the `unit` suite and the runs on 1 or 2 ranks
  sanitized_tests.py BUILDDIR targets   the executables those tests start (ninja targets in BUILDDIR)

Runs on more ranks are oversubscribed on the 2-core CI machine (and slow under ASan); the
ScaLAPACK tester runs start 4 ranks and preload the shim into Fortran programs built without
ASan, so they are left out with them.
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from meson_tests import registered, targets  # noqa: E402


def selected(builddir):
    for t in registered(builddir):
        if any(s.split(":")[-1] == "unit" for s in t["suite"]) or re.search(r"_np[12]$", t["name"]):
            yield t


def main(builddir, what):
    tests = list(selected(builddir))
    lines = {t["name"] for t in tests} if what == "names" else {p for t in tests for p in targets(builddir, t)}
    print("\n".join(sorted(lines)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
