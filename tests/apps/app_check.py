#!/usr/bin/env python3
"""A real ScaLAPACK application, plain and with the shim preloaded (issue 33): the same energy,
and what cala computed.

Three runs of the application on 2 ranks, each in a fresh directory:
  plain      no shim;
  preloaded  the shim with its default threshold and CALA_SHIM=log: the energy, the application's
             own wall time, and the seconds rank 0 spent in each routine the shim received (cala's
             or passed on to ScaLAPACK), from the log lines;
  all        the shim with CALA_SCALAPACK_THRESHOLD=0 and CALA_SHIM=log: every call cala can take
             goes to cala: how many it computed, by routine.
Checks: the energies of all three agree to --tolerance (Hartree), every run ended normally, and
cala computed at least one call in `all`. Times are reported, never judged (a test holds no timing).
Prints one `app:` JSON line with everything measured (docs/scalapack.md's table comes from it).

  app_check.py --app nwchem --exe nwchem.mpich --mpiexec mpiexec.mpich --shim .../libcala_scalapack.so \\
               --input tests/apps/h2o_b3lyp.nw [--env NAME=VALUE ...]
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# How each application reports its energy and its own wall time.
APPS = {
    "nwchem": {"energy": r"Total DFT energy =\s+(-?\d+\.\d+)", "wall": r"Total times\s+cpu:\s+[\d.]+s\s+wall:\s+([\d.]+)s"},
    "cp2k": {"energy": r"ENERGY\| Total FORCE_EVAL \( QS \) energy \[a\.u\.\]:\s+(-?\d+\.\d+)",
             # the timing report's first line: CP2K  calls  asd  self(avg, max)  total(avg, max)
             "wall": r"^\s*CP2K\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s*$"},
}
LOG = re.compile(r"cala_scalapack log: (P[A-Z0-9]+) .*ran=(cala|ScaLAPACK) s=([\d.]+)")


def launch_env(mpiexec, env):
    """The launcher's options that set env on the ranks only (never on the launcher itself)."""
    out = []
    for k, v in env.items():
        out += ["-genv", k, v] if "mpich" in os.path.basename(mpiexec) else ["-x", f"{k}={v}"]
    return out


def run(args, label, shim_env):
    with tempfile.TemporaryDirectory(prefix=f"cala_app_{args.app}_") as tmp:
        inp = os.path.join(tmp, os.path.basename(args.input))
        shutil.copy(args.input, inp)
        env_ranks = dict(OMP_NUM_THREADS="1", **dict(e.split("=", 1) for e in args.env), **shim_env)
        cmd = [args.mpiexec]
        if "openmpi" in os.path.basename(args.mpiexec) and os.getuid() == 0:
            cmd.append("--allow-run-as-root")
        cmd += ["-n", "2"] + launch_env(args.mpiexec, env_ranks) + [args.exe, os.path.basename(inp)]
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        print(f"+ (cd {tmp} && {' '.join(cmd)})", flush=True)
        p = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout)
    out = p.stdout
    energy = re.findall(APPS[args.app]["energy"], out)
    wall = re.findall(APPS[args.app]["wall"], out, re.M)
    calls = collections.Counter()
    seconds = collections.Counter()
    for routine, ran, s in LOG.findall(out):
        calls[(routine, ran)] += 1
        seconds[ran] += float(s)
    if p.returncode != 0 or not energy:
        print(out[-4000:])
        raise SystemExit(f"FAILED: {args.app} {label}: exit {p.returncode}, energy {'found' if energy else 'missing'}")
    r = {"energy": float(energy[-1]), "energy_text": energy[-1], "wall_s": float(wall[-1]) if wall else None,
         "calls": {f"{k[0]} {k[1]}": v for k, v in sorted(calls.items())},
         "shim_s": {k: round(v, 6) for k, v in seconds.items()}}
    print(f"  {label}: energy {r['energy_text']}, wall {r['wall_s']} s, calls {r['calls'] or '-'}, "
          f"seconds in the shim's routines (rank 0) {r['shim_s'] or '-'}", flush=True)
    return r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", required=True, choices=sorted(APPS))
    ap.add_argument("--exe", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE set on the ranks of every run")
    ap.add_argument("--tolerance", type=float, default=1e-8)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    if shutil.which(args.exe) is None:
        print(f"FAILED: {args.exe} is not installed (./scripts/setup installs it)")
        return 1
    shim = os.path.abspath(args.shim)
    plain = run(args, "plain", {})
    pre = run(args, "preloaded", {"LD_PRELOAD": shim, "CALA_SHIM": "log"})
    full = run(args, "all", {"LD_PRELOAD": shim, "CALA_SHIM": "log", "CALA_SCALAPACK_THRESHOLD": "0"})
    ok = True
    for label, r in (("preloaded", pre), ("all", full)):
        d = abs(r["energy"] - plain["energy"])
        if d > args.tolerance:
            print(f"FAILED: the {label} energy {r['energy_text']} differs from the plain {plain['energy_text']} by {d:.3e}")
            ok = False
    computed = {k.split()[0]: v for k, v in full["calls"].items() if k.endswith(" cala")}
    if not computed:
        print("FAILED: cala computed no call with the threshold at 0")
        ok = False
    print("app: " + json.dumps({"app": args.app, "exe": os.path.basename(args.exe), "plain": plain, "preloaded": pre,
                                "all": full, "computed_by_cala": computed}))
    if ok:
        print(f"{args.app}: energies agree to {args.tolerance:g} Ha (plain {plain['energy_text']}, preloaded "
              f"{pre['energy_text']}, all to cala {full['energy_text']}); cala computed {sum(computed.values())} "
              f"calls: {computed}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
