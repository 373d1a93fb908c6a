"""One MPI run of a ScaLAPACK tester under a timeout, and, when it hangs, where each rank waits.

A run that does not finish in time is not just killed: every rank is stopped under gdb first and
its stack is kept, so a report can say whose code the ranks were waiting in. `blame` reads those
stacks: a rank with a frame in libcala*.so was inside cala (the shim or the library). A hang
with every rank inside cala is cala's. A hang where the ranks are in different places under one
ScaLAPACK routine is that routine's: its ranks parted ways. Stock ScaLAPACK 2.2 does that in its
iterative refinement, with no shim: p?porfs calls p?potrs on one rank while the other computes the
next residual in p?symv, and p?lacon leaves one rank in p?amax while another is in p?asum.

Used by llt_tester.py and pblas_tester.py.
"""

import os
import re
import shutil
import signal
import subprocess
import time

# Debian's scalapack-mpi-test ships one set of testers per MPI flavour. CALA_MPI (mpich | openmpi;
# the meson tests of each flavour's build set it) picks the set the shim under test can preload.
TESTERS = f"/usr/lib/x86_64-linux-gnu/scalapack/{os.environ.get('CALA_MPI', 'mpich')}-tests"


class Run:
    """What one run left: its output, exit code, whether it hung, the stacks of its ranks."""

    def __init__(self, out, rc, hung, stacks, seconds, cala_callers=None):
        self.out, self.rc, self.hung, self.stacks, self.seconds = out, rc, hung, stacks, seconds
        self.cala_callers = cala_callers or {}  # pid -> offset in libscalapack of the call into cala

    def blame(self, racy=None):
        """Whose hang a hung run is (None if it did not hang):
          'cala'       every rank waits inside cala (a libcala*.so frame on every stack), entered
                       from the same ScaLAPACK call site on every rank;
          'scalapack'  otherwise, when the ranks parted ways in ScaLAPACK: every stack holds one
                       same ScaLAPACK routine (it called cala, or anything, on some ranks and not
                       on the others, or from different places, or waits by itself), or a rank
                       is inside a routine matching `racy` (a regex of routines known to part
                       ways by themselves, with no shim: the caller's evidence, e.g. p?porfs);
          'unknown'    anything else, or stacks that could not be read."""
        if not self.hung:
            return None
        stacks = list(self.stacks.values())
        if not stacks or any(not s for s in stacks):
            return "unknown"
        if all(re.search(r"from \S*libcala", s) for s in stacks) and len(set(self.cala_callers.values())) == 1:
            return "cala"
        common = set.intersection(*(set(re.findall(r" in (\w+) \(\) from \S*libscalapack", s)) for s in stacks))
        if common or (racy and any(re.search(rf" in ({racy}) \(\) from \S*libscalapack", s) for s in stacks)):
            return "scalapack"
        return "unknown"

    def where(self):
        """One line per rank: the innermost ScaLAPACK/cala routines it waited in."""
        lines = []
        for pid, s in sorted(self.stacks.items()):
            names = re.findall(r" in (\w+) \(\) from \S*(?:libscalapack|libcala)", s)
            names += re.findall(r" in (cala::\S+|p[sdcz]\w+_) \(", s)
            seen = list(dict.fromkeys(names))
            lines.append(f"pid {pid}: " + (" <- ".join(seen[:6]) if seen else "(no ScaLAPACK or cala frame)"))
        return lines


def _children(pid):
    """All descendants of `pid` (the launcher's proxies and the ranks)."""
    kids = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            direct = [int(x) for x in f.read().split()]
    except OSError:
        return kids
    for k in direct:
        kids.append(k)
        kids += _children(k)
    return kids


def _stack(pid):
    """The frames of every thread of `pid`, and the offset (in libscalapack) of the innermost
    ScaLAPACK frame under a cala frame: the call site through which ScaLAPACK entered cala."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "", None
    try:
        r = subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=60)
        with open(f"/proc/{pid}/maps") as f:
            bases = [int(m.group(1), 16) for m in re.finditer(r"^([0-9a-f]+)-\S+ \S+ 0+ .*libscalapack", f.read(), re.M)]
    except (subprocess.TimeoutExpired, OSError):
        return "", None
    frames = [line for line in r.stdout.splitlines() if line.startswith("#")]
    caller, below_cala = None, False
    for line in frames:
        if line.startswith("#0 "):
            below_cala = False  # a new thread's stack
        if re.search(r"from \S*libcala", line):
            below_cala = True
        elif below_cala and bases and (m := re.match(r"#\d+\s+0x([0-9a-f]+) in .* from \S*libscalapack", line)):
            caller = int(m.group(1), 16) - min(bases)
            break
    return "\n".join(frames), caller


def _joined(out, err):
    """The run's standard output, then its standard error: read apart, so that a line the shim
    logs on stderr cannot land inside a tester's line on stdout (with both on one pipe, Open MPI's
    launcher forwarded a log line's first half, then a `WALL ... PASSED` line, then the rest)."""
    out, err = out or "", err or ""
    return out + ("\n" if out and not out.endswith("\n") and err else "") + err


def run(cmd, cwd, env, timeout, exe_name):
    """Runs `cmd` (an mpiexec line); on timeout, takes the stacks of the processes named exe_name."""
    start = time.time()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return Run(_joined(out, err), proc.returncode, False, {}, time.time() - start)
    except subprocess.TimeoutExpired:
        ranks = []
        for pid in _children(proc.pid):
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == exe_name[:15]:
                        ranks.append(pid)
            except OSError:
                pass
        taken = {pid: _stack(pid) for pid in ranks}
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Run(_joined(out, err), 124, True, {p: t[0] for p, t in taken.items()}, time.time() - start,
                   {p: t[1] for p, t in taken.items()})
