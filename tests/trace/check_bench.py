#!/usr/bin/env python3
"""cala-bench's output and traces, end to end (small sizes; speed is never asserted).

  - potrf --json: one JSON line with gflops, reference_gflops, efficiency, scalapack_gflops;
    exit 0 with efficiency <= 1 + reference_noise (a "note" above 1), or exit 3 with the line's
    "error" naming an efficiency beyond that; the FMA peak measured twice (peak_gflops the higher);
  - potrf --trace and mw --trace: a Trace Event file with events of every rank (and thread),
    documented kinds, no overlap within a (pid, tid);
  - gemm --table: the table on stdout and the path of a results file holding the JSON lines;
    `cala-bench table FILE` prints the same table;
  - gemm --resident host on 1 and 2 ranks: the probe check, words/messages/workspace == model,
    the in-core reference and efficiency; bad combinations with --resident refused, clearly;
  - potrf --resident host on 1 and 2 ranks (1x1, 1x2 Upper, 2x1, and the layered Repl / ReplPart
    on 1x1x2): the same checks against resident_potrf_cost and the in-core potrf on rank 0's device;
  - --trace with --panel all: a clear error (CLI11's exit status for invalid arguments);
  - stencil --json: a line per depth, messages, words and redundant updates == the model's, and
    the model's time per step a positive number of seconds.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

KINDS = {"potrf", "trsm", "gemm", "herk", "panel", "bcast", "wait", "transfer"}
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd, env_extra, cwd):
    env = dict(os.environ, **env_extra)
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    print("$ " + " ".join(cmd) + f"  -> {p.returncode}")
    if p.stderr.strip():
        print(p.stderr.strip())
    return p


def json_lines(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


def check_efficiency(p, line, bench):
    check(p.returncode in (0, 3), f"{bench}: exit status 0 or 3 (got {p.returncode})")
    for key in ("gflops", "gflops_median", "reference_gflops", "efficiency", "blas_gflops"):
        check(key in line, f"{bench}: field {key}")
    # The FMA peak, measured at the start and again after the timed runs: the higher counts.
    peaks = line.get("peak_gflops_samples")
    check(isinstance(peaks, list) and len(peaks) == 2, f"{bench}: the FMA peak measured twice (peak_gflops_samples)")
    if isinstance(peaks, list) and peaks:
        check(line.get("peak_gflops") == max(peaks), f"{bench}: peak_gflops is the higher of peak_gflops_samples")
    eff = line.get("efficiency", 0)
    noise = line.get("reference_noise", 0)  # the reference's best sample over its median, minus 1
    check(noise >= 0, f"{bench}: field reference_noise >= 0")
    if p.returncode == 3:
        check(eff > 1 + noise and "efficiency" in line.get("error", ""),
              f"{bench}: exit 3 only with an efficiency above 1 + reference_noise, as an error")
        check("ERROR" in p.stderr, f"{bench}: the error is on stderr")
    else:
        check(0 < eff <= 1 + noise and "error" not in line,
              f"{bench}: efficiency {eff:.3f} in (0, 1 + {noise:.3f}], no error")
        check(eff <= 1 or "note" in line, f"{bench}: an efficiency above 1 within the spread carries a note")


def check_trace(path, ranks, threads, what):
    with open(path) as f:
        t = json.load(f)
    check(t.get("displayTimeUnit") == "ms", f"{what}: displayTimeUnit ms")
    ev = t.get("traceEvents", [])
    check(len(ev) > 0, f"{what}: events")
    check(all(e.get("ph") == "X" and e.get("cat") in KINDS for e in ev), f"{what}: ph X, documented kinds")
    pids = {e["pid"] for e in ev}
    check(pids == set(range(ranks)), f"{what}: events of every rank {sorted(pids)}")
    if threads:
        for r in range(ranks):
            tids = {e["tid"] for e in ev if e["pid"] == r}
            # tids 0 .. k-1 for the k <= threads threads that ran a task: which threads of the
            # team take tasks is the scheduler's choice, so all of them would be a race.
            check(tids and tids == set(range(len(tids))) and len(tids) <= threads,
                  f"{what}: rank {r} has events of threads 0 .. k-1, k <= {threads} ({sorted(tids)})")
    spans = {}
    for e in ev:
        spans.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    worst = max((v[i][1] - v[i + 1][0] for v in map(sorted, spans.values()) for i in range(len(v) - 1)), default=0)
    check(worst <= 1e-3, f"{what}: no overlap within a (pid, tid) (worst {worst:.4f} us)")
    return ev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--bench", required=True)
    a = ap.parse_args()
    mpi, bench = a.mpiexec, os.path.abspath(a.bench)
    with tempfile.TemporaryDirectory() as d:
        # potrf: JSON on stdout, trace of 2 ranks x 2 threads
        tr = os.path.join(d, "potrf.json")
        p = run([mpi, "-n", "2", bench, "potrf", "--n", "512", "--nb", "64", "--grid", "1x2", "--threads", "2",
                 "--runs", "1", "--compare", "scalapack", "--trace", tr, "--json"],
                {"OMP_NUM_THREADS": "2", "OMP_MAX_TASK_PRIORITY": "2"}, d)
        lines = json_lines(p.stdout)
        check(len(lines) == 1 and lines[0].get("bench") == "potrf", "potrf --json: one JSON line on stdout")
        if lines:
            check_efficiency(p, lines[0], "potrf")
            check("scalapack_gflops" in lines[0], "potrf: scalapack_gflops")
            check(lines[0].get("trace_file") == tr, "potrf: trace_file")
        check_trace(tr, 2, 2, "potrf trace")

        # mw: trace of 1 master + 2 workers
        tr = os.path.join(d, "mw.json")
        p = run([mpi, "-n", "3", bench, "mw", "--m", "256", "--n", "384", "--k", "128", "--q", "32",
                 "--strategies", "Het", "--runs", "1", "--trace", tr, "--json"], {"OMP_NUM_THREADS": "1"}, d)
        check(p.returncode == 0, "mw --trace: exit 0")
        ev = check_trace(tr, 3, 0, "mw trace")
        check(any(e["pid"] == 0 and e["cat"] == "transfer" for e in ev), "mw trace: transfers on the master")
        check(any(e["pid"] in (1, 2) and e["cat"] == "gemm" for e in ev), "mw trace: block products on the workers")
        check(all(any(e["pid"] == r and e["cat"] == "wait" for e in ev) for r in (1, 2)), "mw trace: waits on every worker")

        # stencil: counters == model, and the model's time per step a real prediction (stop 61: a
        # helper taking integers cut it to 0 s in every line). Exit 3 is an in-cache roofline above 1.
        p = run([mpi, "-n", "2", bench, "--json", "stencil", "--dim", "2", "--n", "512", "--grid", "1x2",
                 "--stencil", "5pt", "--depth", "1,2", "--steps", "8", "--runs", "1"], {"OMP_NUM_THREADS": "1"}, d)
        check(p.returncode in (0, 3), f"stencil: exit status 0 or 3 (got {p.returncode})")
        lines = json_lines(p.stdout)
        check([l.get("depth") for l in lines] == [1, 2], "stencil --json: a line per depth (1, 2)")
        for l in lines:
            s = l.get("depth")
            for f in ("msgs", "words", "redundant_updates"):
                check(l.get(f + "_per_step") == l.get("model_" + f + "_per_step"),
                      f"stencil depth {s}: {f}_per_step == model ({l.get(f + '_per_step')}, {l.get('model_' + f + '_per_step')})")
            for f in ("model_time_per_step_s", "target_time_per_step_s", "time_per_step_s"):
                v = l.get(f, 0)
                check(isinstance(v, float) and 0 < v < 10, f"stencil depth {s}: {f} in (0, 10) s ({v})")
            check(l.get("model_best_depth", 0) >= 1, f"stencil depth {s}: model_best_depth >= 1")

        # gemm: the table and the results file
        p = run([mpi, "-n", "2", bench, "gemm", "--m", "512", "--n", "512", "--k", "512", "--grid", "1x2",
                 "--threads", "1", "--runs", "1", "--compare", "scalapack", "--table"], {"OMP_NUM_THREADS": "1"}, d)
        check(not json_lines(p.stdout), "gemm --table: no JSON on stdout")
        check("cala GF/s" in p.stdout and "cala/ScaLAPACK" in p.stdout and "efficiency" in p.stdout,
              "gemm --table: the table's header")
        m = re.search(r"^JSON lines: (\S+)$", p.stdout, re.M)
        check(m is not None, "gemm --table: the results file's path")
        if m:
            path = os.path.join(d, m.group(1))
            with open(path) as f:
                saved = json_lines(f.read())
            check(len(saved) == 1 and saved[0].get("bench") == "gemm", "gemm: the results file holds the JSON line")
            if saved:
                check_efficiency(p, saved[0], "gemm")
                check("scalapack_gflops" in saved[0], "gemm: scalapack_gflops")
            q = run([bench, "table", path], {}, d)
            check(q.returncode == 0 and "cala/ScaLAPACK" in q.stdout, "cala-bench table FILE prints the table")

        # gemm --resident host: the resident gemm on HostDevice memory, 1 and 2 ranks (A moved by
        # op T on 2 ranks; sizes nb does not divide): one JSON line, the probe check, words,
        # messages and device workspace == resident_gemm_cost, the in-core reference and the ratio.
        # On 2 ranks also a forced 1 x 1 x 2 grid (2.5D: k split over the two layers, the partial
        # C summed over the fiber) and stationary A.
        for ranks, grid, extra in ((1, "1x1", []), (2, "1x2", ["--opa", "T"]), (2, "1x1x2", ["--opb", "T", "--variant", "C"]),
                                   (2, "1x2", ["--variant", "A"])):
            p = run([mpi, "-n", str(ranks), bench, "gemm", "--resident", "host", "--m", "300", "--n", "260",
                     "--k", "200", "--nb", "64", "--grid", grid, "--threads", "1", "--runs", "1", "--json"] + extra,
                    {"OMP_NUM_THREADS": "1"}, d)
            what = f"gemm --resident host, {ranks} rank(s), {grid} {' '.join(extra)}"
            three = grid.count("x") == 2
            grid = "1x2" if three else grid  # the operands' own 2D grid
            lines = json_lines(p.stdout)
            check(p.returncode == 0 and len(lines) == 1 and lines[0].get("bench") == "gemm",
                  f"{what}: exit 0, one JSON line")
            if lines:
                r = lines[0]
                check(r.get("resident") == "host" and r.get("ranks") == ranks and r.get("grid") == grid,
                      f"{what}: resident, ranks, grid")
                check(r.get("grid3d") == ("1x1x2" if three else "none"), f"{what}: grid3d {r.get('grid3d')}")
                want = extra[extra.index("--variant") + 1] if "--variant" in extra else None  # else the plan's
                check(r.get("variant") in ("A", "B", "C") and want in (None, r.get("variant")),
                      f"{what}: variant {r.get('variant')}")
                check(r.get("transport") == "staged" and r.get("transport_reason"), f"{what}: transport staged, a reason")
                check(0 <= r.get("check_error", 99) < 1, f"{what}: check_error {r.get('check_error')} < 1")
                check(r.get("ranks_model_mismatch") == "none", f"{what}: every rank's words and messages == model")
                for got, want in (("words_max", "words_model"), ("msgs_max", "msgs_model"),
                                  ("words_recv_max", "words_recv_model"), ("extra_bytes_max", "extra_bytes_model")):
                    check(got in r and r.get(got) == r.get(want), f"{what}: {got} {r.get(got)} == {want} {r.get(want)}")
                check(r.get("words_max", 0) > 0 if ranks > 1 else r.get("words_max") == 0,
                      f"{what}: panels travel on 2 ranks, none on 1")
                check(r.get("reference") == "host_device_incore" and r.get("reference_gflops", 0) > 0 and
                      len(r.get("reference_gflops_samples", [])) == 2, f"{what}: the in-core reference, before and after")
                eff = r.get("efficiency", 0)
                check(eff > 0 and abs(eff - r.get("gflops_median", 0) / r.get("reference_gflops", 1)) < 1e-9 * eff,
                      f"{what}: efficiency = median rate / reference rate")
        for bad, opt in ((["--compare", "scalapack"], "--compare"), (["--block-size", "32"], "--block-size"),
                         (["--transport", "nccl"], "--transport")):
            p = run([mpi, "-n", "2", bench, "gemm", "--resident", "host", "--m", "64", "--n", "64", "--k", "64",
                     "--runs", "1", "--json"] + bad, {"OMP_NUM_THREADS": "1"}, d)
            check(p.returncode not in (0, 3) and opt in p.stderr and not json_lines(p.stdout),
                  f"gemm --resident {' '.join(bad)}: refused with a message naming {opt}")
        p = run([mpi, "-n", "2", bench, "gemm", "--transport", "staged", "--m", "64", "--runs", "1", "--json"],
                {"OMP_NUM_THREADS": "1"}, d)
        check(p.returncode not in (0, 3) and "--resident" in p.stderr, "gemm --transport without --resident: refused")
        p = run([mpi, "-n", "2", bench, "gemm", "--resident", "gpu", "--m", "64", "--runs", "1", "--json"],
                {"OMP_NUM_THREADS": "1"}, d)
        check(p.returncode == 1 and "'gpu'" in p.stderr and p.stderr.count("cannot open device") == 1,
              "gemm --resident gpu: one clear error (rank 0), exit 1 on every rank")

        # potrf --resident host: the resident Cholesky on HostDevice memory, 1 rank (one device potrf)
        # and 2 ranks (2D, staged; Upper; n not a multiple of nb): the probe check, words, messages and
        # device slots == resident_potrf_cost, the in-core reference and the ratio.
        # Layered (--variant Repl | ReplPart --grid 1x1x2): the replicated-diagonal 2.5D schedule,
        # its JSON naming the variant and the 3D grid, the model the host's on the same plan.
        for ranks, grid, uplo, extra in ((1, "1x1", "L", []), (2, "1x2", "U", []), (2, "2x1", "L", []),
                                         (2, "1x1x2", "L", ["--variant", "Repl"]),
                                         (2, "1x1x2", "U", ["--variant", "ReplPart", "--block-size", "48"])):
            p = run([mpi, "-n", str(ranks), bench, "potrf", "--resident", "host", "--n", "300", "--nb", "64",
                     "--grid", grid, "--uplo", uplo, "--threads", "1", "--runs", "1", "--json"] + extra,
                    {"OMP_NUM_THREADS": "1"}, d)
            what = f"potrf --resident host, {ranks} rank(s), {grid}, uplo {uplo} {' '.join(extra)}"
            layered = grid.count("x") == 2
            if layered:
                want_variant = extra[1]
                grid = "1x2"  # the 2D grid A lives on (the squarest of 2 ranks)
            lines = json_lines(p.stdout)
            check(p.returncode == 0 and len(lines) == 1 and lines[0].get("bench") == "potrf",
                  f"{what}: exit 0, one JSON line")
            if lines:
                r = lines[0]
                check(r.get("resident") == "host" and r.get("ranks") == ranks and r.get("grid") == grid and
                      r.get("info") == 0 and r.get("reference_info") == 0, f"{what}: resident, ranks, grid, info 0")
                if layered:
                    check(r.get("variant") == want_variant and r.get("grid3d") == "1x1x2",
                          f"{what}: variant {r.get('variant')} on grid3d {r.get('grid3d')}")
                else:
                    check(r.get("grid3d") == "0x0x0", f"{what}: 2D (grid3d {r.get('grid3d')})")
                check(0 <= r.get("check_error", 99) < 1, f"{what}: check_error {r.get('check_error')} < 1")
                check(r.get("ranks_model_mismatch") == "none", f"{what}: every rank's words and messages == model")
                for got, want in (("words_max", "words_model"), ("msgs_max", "msgs_model"),
                                  ("words_recv_max", "words_recv_model"), ("extra_bytes_max", "extra_bytes_model")):
                    check(got in r and r.get(got) == r.get(want), f"{what}: {got} {r.get(got)} == {want} {r.get(want)}")
                check(r.get("words_max", 0) > 0 if ranks > 1 else r.get("words_max") == 0,
                      f"{what}: panels travel on 2 ranks, none on 1")
                check(r.get("reference") == "host_device_incore" and r.get("reference_gflops", 0) > 0,
                      f"{what}: the in-core reference")
                eff = r.get("efficiency", 0)
                check(eff > 0 and abs(eff - r.get("gflops_median", 0) / r.get("reference_gflops", 1)) < 1e-9 * eff,
                      f"{what}: efficiency = median rate / reference rate")
        for bad, opt in ((["--compare", "scalapack"], "--compare"), (["--variant", "2D", "--grid", "1x1x2"], "--grid"),
                         (["--block-size", "32"], "--block-size"),
                         (["--transport", "nccl"], "--transport"), (["--lookahead", "2"], "--lookahead")):
            p = run([mpi, "-n", "2", bench, "potrf", "--resident", "host", "--n", "64", "--runs", "1", "--json"] + bad,
                    {"OMP_NUM_THREADS": "1"}, d)
            check(p.returncode not in (0, 3) and opt in p.stderr and not json_lines(p.stdout),
                  f"potrf --resident {' '.join(bad)}: refused with a message naming {opt}")
        p = run([mpi, "-n", "2", bench, "potrf", "--resident", "gpu", "--n", "64", "--runs", "1", "--json"],
                {"OMP_NUM_THREADS": "1"}, d)
        check(p.returncode == 1 and "'gpu'" in p.stderr and p.stderr.count("cannot open device") == 1,
              "potrf --resident gpu: one clear error (rank 0), exit 1 on every rank")

        # getrf 2.5D (LuVariant::Layered): the forced 1x1x2 grid and the planner's, counters == model;
        # a layered grid past the ranks is refused.
        for extra, g3 in ((["--grid", "1x1x2"], "1x1x2"), (["--variant", "2.5D"], "1x1x2")):
            p = run([mpi, "-n", "2", bench, "getrf", "--n", "96", "--nb", "8", "--count-only"] + extra,
                    {"OMP_NUM_THREADS": "1"}, d)
            ls = [r for r in json_lines(p.stdout) if r.get("bench") == "getrf"]
            check(p.returncode == 0 and len(ls) == 1 and ls[0]["variant"] == "2.5D" and ls[0]["grid3d"] == g3 and
                  ls[0]["ranks_model_mismatch"] == "none" and ls[0]["words_max"] == ls[0]["words_model_max"],
                  f"getrf {' '.join(extra)}: 2.5D on {g3}, words and messages == model")
        p = run([mpi, "-n", "2", bench, "getrf", "--n", "96", "--nb", "8", "--count-only", "--grid", "1x2x2"],
                {"OMP_NUM_THREADS": "1"}, d)
        check(p.returncode not in (0, 3) and "grid3d" in p.stderr, "getrf --grid 1x2x2 on 2 ranks: refused, naming grid3d")

        # device --devices host, case c2 (C 4x the cap, 16x16x16 tiles of 32): the planner's half-depth
        # slabs (b x c = 48, 2560 slabs in) against forced whole tiles (b = c = 6, 1536 tiles in);
        # copies == model, the model's bytes 17% fewer, the product checked against the in-core BLAS.
        plans = {}
        for split in ("0", "1"):
            p = run([mpi, "-n", "1", bench, "device", "--devices", "host", "--n", "512", "--tile", "32", "--runs", "1",
                     "--k-split", split], {"OMP_NUM_THREADS": "1"}, d)
            ch = [r for r in json_lines(p.stdout) if r.get("impl") == "cala_chunked"]
            check(p.returncode == 0 and len(ch) == 1, f"device --k-split {split}: one cala_chunked line")
            if not ch:
                continue
            r = ch[0]
            dev = r["per_device"][0]
            check(dev["h2d"] == dev["model_h2d"] and dev["d2h"] == dev["model_d2h"] and
                  dev["peak_bytes"] <= dev["budget_bytes"] and r["check_error"] < 1e-3 and r["case"] == "c2",
                  f"device --k-split {split}: copies == model, peak under the cap, product right")
            plans[split] = r
        if len(plans) == 2:
            half, whole = plans["0"], plans["1"]
            check(half["plan"]["k_split"] == 2 and half["plan"]["b"] * half["plan"]["c"] == 48 and
                  half["per_device"][0]["h2d"] == 2560 and whole["plan"]["k_split"] == 1 and
                  whole["plan"]["b"] * whole["plan"]["c"] == 36 and whole["per_device"][0]["h2d"] == 1536 and
                  20 * half["model_bytes_moved"] < 19 * whole["model_bytes_moved"],
                  "device c2: the planner takes half depth (b x c 48, 2560 slabs) over whole tiles (36, 1536 tiles)")

        # --trace with several configurations is refused, clearly
        p = run([mpi, "-n", "1", bench, "potrf", "--n", "64", "--panel", "all", "--trace", os.path.join(d, "x.json")],
                {"OMP_NUM_THREADS": "1"}, d)
        check(p.returncode not in (0, 3) and "--trace" in p.stderr, "potrf --trace --panel all: refused with a message")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
