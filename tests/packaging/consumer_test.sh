#!/usr/bin/env bash
# The installed cala, used as a user would (meson test packaging_consumers): `meson install` of
# this build into a temporary staging root; then an out-of-tree program built against it twice,
# with CMake (find_package(cala): cala::cala, cala::scalapack) and with pkg-config (cala.pc,
# cala_scalapack.pc), each run under mpiexec.mpich -n 2. The Open MPI flavour (MPI = openmpi):
# find_package(cala_openmpi), cala_openmpi.pc, cala_scalapack_openmpi.pc, libcala_openmpi.so,
# mpiexec.openmpi.
#
#   consumer_test.sh BUILD_DIR PREFIX LIBDIR SOURCE_DIR [MPI]
set -euo pipefail
if ! command -v cmake >/dev/null; then
  echo "SKIP: cmake is not installed (scripts/setup installs it)"
  exit 77  # meson: SKIP, not a pass
fi
build=$1 prefix=$2 libdir=$3 src=$4 mpi=${5:-mpich}
fl=""; [ "$mpi" = mpich ] || fl="_$mpi"   # the flavour's suffix on every installed name
here=$src/tests/packaging
stage=$(mktemp -d /tmp/cala_packaging.XXXXXX)
trap 'rm -rf "$stage"' EXIT
step() { echo "--- $*"; }

step "meson install --destdir $stage/root (prefix $prefix)"
meson install -C "$build" --no-rebuild --quiet --destdir "$stage/root"
root=$stage/root$prefix
case $libdir in /*) lib=$stage/root$libdir ;; *) lib=$root/$libdir ;; esac
for f in "$lib/cmake/cala$fl/cala${fl}Config.cmake" "$lib/cmake/cala$fl/cala${fl}ConfigVersion.cmake" \
         "$lib/pkgconfig/cala$fl.pc" "$lib/pkgconfig/cala_scalapack$fl.pc" "$lib/libcala$fl.so" "$lib/libcala_scalapack$fl.so"; do
  [ -f "$f" ] || { echo "FAILED: meson install did not install $f"; exit 1; }
done
export OMP_NUM_THREADS=1 LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

run2() {  # mpiexec.<mpi> -n 2 EXE ARGS..., output checked by the caller
  local root=()  # Open MPI refuses root (a CI container) unless told
  [ "$mpi" = openmpi ] && [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
  "mpiexec.$mpi" "${root[@]}" -n 2 "$@" 2>&1
}

step "CMake: find_package(cala$fl) from $root"
cmake -S "$here/consumer" -B "$stage/cmake" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_BUILD_TYPE=Release -DCALA_PACKAGE="cala$fl" \
      -DCALA_DROPIN_SOURCE="$src/examples/scalapack_dropin.c" >"$stage/cmake.log" 2>&1 \
  || { cat "$stage/cmake.log"; echo "FAILED: cmake configure"; exit 1; }
cmake --build "$stage/cmake" -j 2 >"$stage/build.log" 2>&1 || { cat "$stage/build.log"; echo "FAILED: cmake build"; exit 1; }
out=$(run2 "$stage/cmake/cala_consumer")
echo "$out"
grep -q "cala consumer: ok on 2 ranks" <<<"$out" || { echo "FAILED: the CMake-built consumer"; exit 1; }
# The shim consumer: its PDGEMM must go through cala (CALA_VERBOSE says where each call went).
out=$(CALA_VERBOSE=1 CALA_SCALAPACK_THRESHOLD=0 run2 "$stage/cmake/cala_shim_consumer" 256 32 1 2 R 1)
echo "$out"
grep -q "cala_scalapack: PDGEMM(N,N) m=256 .*-> cala" <<<"$out" || { echo "FAILED: the shim consumer's PDGEMM did not reach cala"; exit 1; }
ldd "$stage/cmake/cala_shim_consumer" | grep -q "libcala_scalapack$fl.so => $lib" \
  || { echo "FAILED: the shim consumer does not load the installed libcala_scalapack$fl.so"; exit 1; }

step "pkg-config: cala$fl.pc and cala_scalapack$fl.pc from $lib/pkgconfig"
# The staging root is not the prefix the .pc files name: point cala's own .pc files there (only
# theirs: --define-variable would move the prefix of Open MPI's ompi-c.pc too).
mkdir -p "$stage/pc"
for f in "$lib"/pkgconfig/cala*.pc; do sed "s|^prefix=.*|prefix=$root|" "$f" >"$stage/pc/$(basename "$f")"; done
pc() { PKG_CONFIG_PATH=$stage/pc pkg-config "$@"; }
flags=$(pc --cflags --libs "cala$fl")
echo "pkg-config --cflags --libs cala$fl: $flags"
# shellcheck disable=SC2086
c++ -std=c++20 -O1 "$here/consumer/consumer.cpp" $flags -o "$stage/pc_consumer"
out=$(run2 "$stage/pc_consumer")
echo "$out"
grep -q "cala consumer: ok on 2 ranks" <<<"$out" || { echo "FAILED: the pkg-config-built consumer"; exit 1; }
sflags=$(pc --cflags --libs "cala_scalapack$fl")
echo "pkg-config --cflags --libs cala_scalapack$fl: $sflags"
# shellcheck disable=SC2086
cc -O1 "$src/examples/scalapack_dropin.c" $sflags -lm -o "$stage/pc_shim_consumer"
out=$(CALA_VERBOSE=1 CALA_SCALAPACK_THRESHOLD=0 run2 "$stage/pc_shim_consumer" 256 32 1 2 R 1)
echo "$out"
grep -q "cala_scalapack: PDGEMM(N,N) m=256 .*-> cala" <<<"$out" || { echo "FAILED: the pkg-config shim consumer's PDGEMM did not reach cala"; exit 1; }
echo "packaging ($mpi): CMake and pkg-config consumers built against the installed tree and ran on 2 ranks"
