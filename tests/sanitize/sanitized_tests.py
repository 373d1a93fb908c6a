#!/usr/bin/env python3
"""The tests the sanitizer build runs, and the ninja targets they need.

  sanitized_tests.py BUILDDIR names     one test name a line: the `unit` suite and the runs on 1 or 2 ranks
  sanitized_tests.py BUILDDIR targets   the executables those tests start (ninja targets in BUILDDIR)

Runs on more ranks are oversubscribed on the 2-core CI machine (and slow under ASan); the
ScaLAPACK tester runs start 4 ranks and preload the shim into Fortran programs built without
ASan, so they are left out with them.
"""

import json
import os
import re
import subprocess
import sys


def selected(builddir):
    out = subprocess.run(["meson", "introspect", builddir, "--tests"], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    for t in json.loads(out):
        if any(s.split(":")[-1] == "unit" for s in t["suite"]) or re.search(r"_np[12]$", t["name"]):
            yield t


def targets(builddir, test):
    """The command's words that name files built in builddir, relative to it."""
    root = os.path.realpath(builddir)
    for word in test["cmd"]:
        path = os.path.realpath(os.path.join(root, word))
        if not word.startswith("-") and "/" in word and path.startswith(root + os.sep):
            yield os.path.relpath(path, root)


def main(builddir, what):
    tests = list(selected(builddir))
    lines = {t["name"] for t in tests} if what == "names" else {p for t in tests for p in targets(builddir, t)}
    print("\n".join(sorted(lines)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
