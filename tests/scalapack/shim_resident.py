#!/usr/bin/env python3
"""p?gemm_, p?potrf_, p?posv_, p?trsm_, p?syrk_ and p?herk_ with CALA_DEVICES through the shim (issue 30, item 4; lib/scalapack/resident_route.hpp).

  shim_resident.py --mpiexec M --exe shim_resident --np N --grids 1x2,2x1
      shim_resident (linked with the shim) twice with CALA_DEVICES=host, CALA_SHIM=log and
      CALA_SCALAPACK_THRESHOLD=0: CALA_SHIM_DEVICE=always (every case resident on the HostDevice)
      and never (every case on the CPU path); on 1x1 the always run takes the pipelined copies
      (slices of 8 columns), and a third run the whole resident gemm (CALA_SHIM_DEVICE_PIPELINE=0).
      Each run checks itself against ScaLAPACK's own
      p?gemm_, p?potrf_, p?posv_, p?trsm_, p?syrk_ and p?herk_; here: every case's log line names where it ran (p?potrf_ and
      p?posv_'s factorization: `(resident)` with always on every grid), and the runs' sums agree. Two more runs under the model
      (CALA_SHIM_DEVICE=model, a device of 10^6 GFLOP/s): copies at 10^6 GB/s (and a network of no
      cost: at n = 29 the messages would decide) send every p?potrf_ (and p?posv_'s factorization) to the device, copies at 10^-6 GB/s keep it on the CPU, the log line saying both predictions.
      --devices 0: the same on CUDA device 0 (exit 77 where it cannot be opened: no GPU).
  shim_resident.py --mpiexec M --shim libcala_scalapack.so --dropin scalapack_dropin
      a plain ScaLAPACK program, the shim preloaded, CALA_SHIM=log, 2 processes on 1 x 2: the
      routing line when the model says the copies pay (a device of 10^6 GFLOP/s and GB/s) and
      when they do not (copies at 10^-6 GB/s), and with a device that cannot be opened
      (CALA_DEVICES=7, CUDA not built: one line per process, and ScaLAPACK's own computes the call:
      cala::gemm would read CALA_DEVICES as its units too); the checksum as without the shim
      every time.
"""

import argparse
import os
import re
import sys

import mpirun

CASES_PER_GRID = 19  # pdgemm_ and pzgemm_, TRANSA x TRANSB in N, T, C; C := A·Aᵀ with B = A
POTRF_CASES_PER_GRID = 8  # pdpotrf_ and pzpotrf_, UPLO L and U, positive definite and not
POSV_CASES_PER_GRID = 4  # pdposv_ and pzposv_, UPLO L and U
TRSM_CASES_PER_GRID = 36  # pdtrsm_ SIDE x UPLO x TRANSA x DIAG (24), pztrsm_ SIDE x UPLO x TRANSA (12)
RANKK_CASES_PER_GRID = 12  # pdsyrk_, pzherk_ and pzsyrk_, UPLO x TRANS


def run(cmd, env, name):
    r = mpirun.run(cmd, os.getcwd(), env, 240, name)
    print(f"$ {' '.join(cmd)}\n{r.out}", end="")
    return r


def base_env():
    env = dict(os.environ, OMP_NUM_THREADS="1", CALA_SHIM="log", CALA_SCALAPACK_THRESHOLD="0")
    for k in ("LD_PRELOAD", "CALA_DEVICES", "CALA_SHIM_DEVICE", "CALA_SHIM_DEVICE_GFLOPS", "CALA_SHIM_DEVICE_COPY_GBS",
              "CALA_VERBOSE", "CALA_MODEL_LATENCY_US", "CALA_MODEL_BANDWIDTH_GBS"):
        env.pop(k, None)
    return env


class Skip(Exception):
    pass


def check_program(args):
    errors, sums = [], {}
    grids = args.grids.split(",")
    want = CASES_PER_GRID * len(grids)
    want_potrf = POTRF_CASES_PER_GRID * len(grids)
    want_posv = POSV_CASES_PER_GRID * len(grids)
    want_trsm = TRSM_CASES_PER_GRID * len(grids)
    want_rankk = RANKK_CASES_PER_GRID * len(grids)
    name = "host#1" if args.devices == "host" else f"cuda:{args.devices}"
    dev = rf"where=device {name} \(resident{{}}\): CALA_SHIM_DEVICE=always"
    cpu = r"where=cpu: CALA_SHIM_DEVICE=never"
    runs = [("never", {"CALA_SHIM_DEVICE": "never"}, cpu, cpu)]
    if args.grids == "1x1":  # one process: the pipelined copies (slices of 8: 4 of C's 29 columns), and not
        runs += [("always", {"CALA_SHIM_DEVICE": "always", "CALA_SHIM_DEVICE_SLICE": "8"}, dev.format(", pipelined copies"),
                  dev.format("")),
                 ("always-whole", {"CALA_SHIM_DEVICE": "always", "CALA_SHIM_DEVICE_PIPELINE": "0"}, dev.format(""),
                  dev.format(""))]
    else:
        runs += [("always", {"CALA_SHIM_DEVICE": "always"}, dev.format(""), dev.format(""))]
    # The model deciding p?potrf_ both ways (p?gemm_'s lines there are not checked: the drop-in run below)
    model = (r"where={} predicted device \S+ s \(copies \S+ s on this rank\) vs cpu \S+ s{}; this rank's device "
             r"1e\+06 GFLOP/s, copies {} GB/s$")
    fast = {"CALA_SHIM_DEVICE": "model", "CALA_SHIM_DEVICE_GFLOPS": "1e6"}
    if args.devices == "host":
        # a network of no cost (1e-9 us, 1e9 GB/s): at n = 29 the messages would decide, not the copies
        runs += [("model-pays", dict(fast, CALA_SHIM_DEVICE_COPY_GBS="1e6", CALA_MODEL_LATENCY_US="1e-9",
                                     CALA_MODEL_BANDWIDTH_GBS="1e9"), None,
                  model.format(r"device host#1 \(resident\):", "", r"1e\+06")),
                 ("model-does-not-pay", dict(fast, CALA_SHIM_DEVICE_COPY_GBS="1e-6"), None,
                  model.format("cpu:", ": the copies do not pay", "1e-06"))]
    for mode, extra, where, where_potrf in runs:
        env = dict(base_env(), CALA_DEVICES=args.devices, **extra)
        r = run([args.mpiexec, "-n", args.np, args.exe, args.grids], env, f"shim_resident {mode}")
        if args.devices != "host" and "cannot be opened" in r.out:
            raise Skip(f"CUDA device {args.devices} cannot be opened here (no GPU)")
        if r.rc != 0 or "shim_resident: all checks passed" not in r.out:
            errors.append(f"{mode}: the program failed (exit status {r.rc})" +
                          (": hung in " + "; ".join(r.where()) if r.hung else ""))
        got = len(re.findall(r"cala_scalapack log: P[DZ]GEMM .* ran=cala .*" + where, r.out)) if where else want
        if got != want:
            errors.append(f"{mode}: {got} calls logged as '{where}', expected {want}")
        got = len(re.findall(r"cala_scalapack log: P[DZ]POTRF uplo=[LU] n=29 ran=cala .*" + where_potrf, r.out, re.M))
        if got != want_potrf:
            errors.append(f"{mode}: {got} p?potrf_ calls logged as '{where_potrf}', expected {want_potrf}")
        posv = where_potrf.replace("$", "; then potrs on the cpu path$") if where_potrf.endswith("$") else \
            where_potrf + "; then potrs on the cpu path"
        got = len(re.findall(r"cala_scalapack log: P[DZ]POSV uplo=[LU] n=29 nrhs=3 ran=cala .*" + posv, r.out, re.M))
        if got != want_posv:
            errors.append(f"{mode}: {got} p?posv_ calls logged as '{posv}', expected {want_posv}")
        # p?trsm_ (its own cases: B 37 x 29), p?syrk_ and p?herk_ where the p?gemm_ cases ran (never
        # pipelined); under the model where p?potrf_ went
        where_trsm = where.replace(", pipelined copies", "") if where is not None else where_potrf
        got = len(re.findall(r"cala_scalapack log: P[DZ]TRSM side=[LR] uplo=[LU] transa=[NTC] diag=[NU] m=37 n=29 "
                             r"ran=cala .*" + where_trsm, r.out, re.M))
        if got != want_trsm:
            errors.append(f"{mode}: {got} p?trsm_ calls logged as '{where_trsm}', expected {want_trsm}")
        got = len(re.findall(r"cala_scalapack log: P(?:DSYRK|ZHERK|ZSYRK) uplo=[LU] trans=[NTC] n=27 k=19 ran=cala .*" +
                             where_trsm, r.out, re.M))
        if got != want_rankk:
            errors.append(f"{mode}: {got} p?syrk_/p?herk_ calls logged as '{where_trsm}', expected {want_rankk}")
        if len(re.findall(r"cala_scalapack log: PDGEMM .* ran=illegal-argument", r.out)) != len(grids):
            errors.append(f"{mode}: the illegal TRANSA was not reported as such once per grid")
        if len(re.findall(r"illegal TRANSA: C untouched", r.out)) != len(grids):
            errors.append(f"{mode}: C changed by an illegal call")
        sums[mode] = {m.group(1): (float(m.group(2)), float(m.group(3)))
                      for m in re.finditer(r"^case (.*?) err=.* sum=(\S+) sumtol=(\S+)", r.out, re.M)}
        cases = want + want_potrf + want_posv + want_trsm + want_rankk
        if len(sums[mode]) != cases:
            errors.append(f"{mode}: {len(sums[mode])} cases printed, expected {cases}")
    for mode in (m for m in sums if m != "never"):
        for case, (s, tol) in sums[mode].items():
            other = sums["never"].get(case)
            if other is None or abs(s - other[0]) > tol:
                errors.append(f"{case}: {mode} sum {s!r}, CPU path {other and other[0]!r} (tolerance {tol:.3e})")
    return errors


def checksum(out):
    m = re.search(r"checksum=(\S+) norm2=(\S+)", out)
    return (float(m.group(1)), float(m.group(2))) if m else None


def check_dropin(args):
    errors = []
    cmd = [args.mpiexec, "-n", "2"]
    prog = [args.dropin, "300", "32", "1", "2", "R", "1"]
    plain = run(cmd + prog, base_env(), "scalapack_dropin plain")
    ref = checksum(plain.out)
    if plain.rc != 0 or ref is None:
        return ["the program failed without the shim"]
    pre = ["-genv", "LD_PRELOAD", os.path.abspath(args.shim)]
    fast = {"CALA_SHIM_DEVICE_GFLOPS": "1e6"}
    cases = [
        ("copies pay", dict(fast, CALA_DEVICES="host", CALA_SHIM_DEVICE_COPY_GBS="1e6"),
         r"PDGEMM transa=N transb=N m=300 n=300 k=300 ran=cala .* where=device host#1 \(resident\): predicted device "
         r"\S+ s \(copies \S+ s on this rank\) vs cpu \S+ s; this rank's device 1e\+06 GFLOP/s, copies 1e\+06 GB/s$",
         0),
        ("copies do not pay", dict(fast, CALA_DEVICES="host", CALA_SHIM_DEVICE_COPY_GBS="1e-6"),
         r"PDGEMM transa=N transb=N m=300 n=300 k=300 ran=cala .* where=cpu: predicted device .* vs cpu \S+ s: "
         r"the copies do not pay; this rank's device 1e\+06 GFLOP/s, copies 1e-06 GB/s$", 0),
        ("no device", dict(CALA_DEVICES="7"),
         r"PDGEMM transa=N transb=N m=300 n=300 k=300 ran=ScaLAPACK .* where=cpu: device '7' \(CALA_DEVICES=7, rank 0\) "
         r"cannot be opened: .*", 2),
    ]
    for name, extra, line, opened in cases:
        env = dict(base_env(), **extra)
        r = run(cmd + pre + prog, env, f"scalapack_dropin {name}")
        got = checksum(r.out)
        if r.rc != 0 or got is None:
            errors.append(f"{name}: the program failed (exit status {r.rc})")
            continue
        if any(abs(g - w) > 1e-10 * max(1.0, abs(w)) for g, w in zip(got, ref)):
            errors.append(f"{name}: checksum {got}, without the shim {ref}")
        if len(re.findall(r"^cala_scalapack log: " + line, r.out, re.M)) != 1:
            errors.append(f"{name}: no log line matching {line!r}")
        said = len(re.findall(r"^cala_scalapack: device '7' .* cannot be opened: .*stays on the CPU path$", r.out, re.M))
        if said != opened:
            errors.append(f"{name}: {said} lines saying the device cannot be opened, expected {opened}")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe")
    ap.add_argument("--np", default="1")
    ap.add_argument("--grids", default="1x1")
    ap.add_argument("--devices", default="host", help="CALA_DEVICES of the program's runs (a CUDA ordinal: exit 77 "
                                                       "when it cannot be opened)")
    ap.add_argument("--shim")
    ap.add_argument("--dropin")
    args = ap.parse_args()
    try:
        errors = check_dropin(args) if args.dropin else check_program(args)
    except Skip as e:
        print(f"SKIP: {e}")
        return 77
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
