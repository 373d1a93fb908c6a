"""The tests a meson build directory registers, and the ninja targets a test's command starts:
shared by the scripts that pick a subset of the suite (sanitize/sanitized_tests.py,
openmpi_tests.py)."""

import json
import os
import subprocess


def registered(builddir):
    """Every test of the build directory, as `meson introspect --tests` gives it."""
    out = subprocess.run(["meson", "introspect", builddir, "--tests"], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return json.loads(out)


def targets(builddir, test):
    """The command's words that name files built in builddir, relative to it."""
    root = os.path.realpath(builddir)
    for word in test["cmd"]:
        path = os.path.realpath(os.path.join(root, word))
        if not word.startswith("-") and "/" in word and path.startswith(root + os.sep):
            yield os.path.relpath(path, root)
