#!/usr/bin/env python3
"""What failed in a meson test run, printed last: CI keeps only the tail of its output, where
meson's own error logs (printed as each test fails) are long gone.

    tests/support/failure_digest.py BUILD_DIR
    tests/support/failure_digest.py --machine BUILD_DIR   (the machine lines alone)

For each test in BUILD_DIR/meson-logs/testlog*.json (the newest: meson names it after a --setup)
that did not pass: its name, result and time,
the lines that say why (doctest's ERROR / CHECK / values / CAPTURE lines, a cala error, an
MPI abort), then its last lines; and the machine (CPU model, family/model, AVX-512, libcala's
BLAS choice), since a failure seen on one kind of CPU may not show on another.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

PASSING = {"OK", "SKIP", "EXPECTEDFAIL"}
WHY = re.compile(r"ERROR|CHECK|REQUIRE|values:|logged:|with context|  [A-Za-z_]+ := |error:|Abort|"
                 r"Assertion|Sanitizer|runtime error|Segmentation|Killed|TIMEOUT", re.IGNORECASE)


def machine() -> str:
    model, family, number, avx512 = "?", "?", "?", False
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            key, _, val = line.partition(":")
            key, val = key.strip(), val.strip()
            if key == "model name" and model == "?":
                model = val
            elif key == "cpu family" and family == "?":
                family = val
            elif key == "model" and number == "?":
                number = val
            elif key == "flags":
                avx512 = "avx512f" in val.split()
    except OSError:
        pass
    return f"{model} (family {family}, model {number}, AVX-512 {'yes' if avx512 else 'no'})"


def blas_choice(build: pathlib.Path) -> list:
    """libcala's BLAS choice on this machine, as it prints it at load (CALA_VERBOSE=1)."""
    exe = build / "tests" / "test_layout"
    if not exe.exists():
        return []
    try:
        out = subprocess.run([str(exe), "-tc=__none__"], env={**os.environ, "CALA_VERBOSE": "1"},
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return []
    return [l for l in (out.stdout + out.stderr).splitlines() if l.startswith("cala:")]


def main() -> int:
    if len(sys.argv) < 2 or (sys.argv[1] == "--machine" and len(sys.argv) < 3):
        print("usage: failure_digest.py BUILD_DIR | --machine BUILD_DIR")
        return 2
    if sys.argv[1] == "--machine":  # the machine and libcala's BLAS choice alone (.ci/run's last lines)
        print(f"machine: {machine()}")
        for l in blas_choice(pathlib.Path(sys.argv[2])):
            print("  " + l[:400])
        return 0
    # meson writes testlog.json, or testlog-SETUP.json under --setup / --wrapper: the newest is
    # the run that just failed.
    logs = sorted((pathlib.Path(sys.argv[1]) / "meson-logs").glob("testlog*.json"), key=lambda p: p.stat().st_mtime)
    if not logs:
        print(f"failure digest: no test log in {sys.argv[1]}/meson-logs")
        return 0
    log = logs[-1]
    failed = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("result") not in PASSING:
            failed.append(rec)
    print(f"=== failure digest ({log.name}): {len(failed)} test(s) did not pass; machine: {machine()}")
    for l in blas_choice(pathlib.Path(sys.argv[1])):
        print("  " + l[:400])
    for rec in failed[:6]:
        out = (rec.get("stdout") or "") + (rec.get("stderr") or "")
        lines = out.splitlines()
        print(f"--- {rec.get('name')}: {rec.get('result')} after {rec.get('duration', 0):.1f} s, "
              f"exit {rec.get('returncode')}")
        why = [l for l in lines if WHY.search(l)]
        for l in why[:40]:
            print("  " + l[:300])
        if len(why) > 40:
            print(f"  ... {len(why) - 40} more such lines")
        print("  (last lines)")
        for l in lines[-12:]:
            print("  " + l[:300])
    return 0


if __name__ == "__main__":
    sys.exit(main())
