#!/usr/bin/env python3
"""The layer rule of DESIGN.md, checked on the sources: a folder of lib/ (and cuda/) includes
only the internal headers of the folders it is allowed to use, the layers below it.

  layers.py <source root>

Fails naming every offending include (file:line, the header, the folders allowed)."""

import pathlib
import re
import sys

# Bottom to top. A folder may include its own headers and those of the folders listed for it.
# device/ is one layer (a unit with its own memory) and node/ sits above it: device/ never
# includes node/. Entry points that dispatch between engines (cala::device_gemm between the
# chunked engine and the node) live in the folder above both.
BASE = {"core"}
ALLOWED = {
    "core": set(),
    "comm": BASE,
    "layout": BASE,
    "grid": BASE | {"comm", "layout"},
    "matrix": BASE | {"comm", "layout", "grid"},
    "kernels": BASE,
    "device": BASE | {"kernels"},
    "node": BASE | {"comm", "layout", "grid", "matrix", "kernels", "device"},
}
ENGINES = {"gemm", "symm", "cholesky", "stencil", "mw", "resident", "lu", "qr", "model"}
BELOW_ENGINES = set(ALLOWED) | {"core"}
for name in ENGINES:
    # The algorithms use each other's engines (Cholesky's update is a GEMM) and the models.
    ALLOWED[name] = BELOW_ENGINES | ENGINES
ALLOWED["scalapack"] = BELOW_ENGINES | ENGINES | {"scalapack"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_0-9]+)/[^"]+"')


def check(root: pathlib.Path) -> list[str]:
    bad = []
    lib = root / "lib"
    for folder in sorted(p for p in lib.iterdir() if p.is_dir()):
        name = folder.name
        if name not in ALLOWED:
            bad.append(f"lib/{name}/: a folder with no place in the layer table of tests/layers/layers.py")
            continue
        for src in sorted(folder.rglob("*")):
            if src.suffix not in (".hpp", ".cpp", ".h"):
                continue
            for lineno, line in enumerate(src.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if not m or m.group(1) in ("cala", name):
                    continue
                if m.group(1) not in ALLOWED[name]:
                    bad.append(f"{src.relative_to(root)}:{lineno}: includes {m.group(1)}/ "
                               f"(lib/{name}/ may use: {', '.join(sorted(ALLOWED[name])) or 'nothing'})")
    # cuda/ holds what needs nvcc: the device layer's units, and the NCCL transport that
    # resident/ registers (resident_nccl.cu implements resident/transport.hpp). No node, no
    # other algorithm, no shim.
    cuda = root / "cuda"
    if cuda.is_dir():
        for src in sorted(cuda.rglob("*")):
            if src.suffix not in (".hpp", ".cpp", ".cu", ".cuh", ".h"):
                continue
            for lineno, line in enumerate(src.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if m and m.group(1) not in ALLOWED["device"] | {"cala", "device", "resident"}:
                    bad.append(f"{src.relative_to(root)}:{lineno}: includes {m.group(1)}/ (cuda/ is the device layer)")
    return bad


def main() -> int:
    root = pathlib.Path(sys.argv[1]).resolve()
    bad = check(root)
    for b in bad:
        print(b)
    print(f"layers: {len(bad)} include(s) against the layer rule")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
