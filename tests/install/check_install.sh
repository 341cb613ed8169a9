#!/bin/sh
# Partita install check (CTest: install_consumers).
#
#   sh tests/install/check_install.sh <build dir> <source dir> [sanitize]
#
# Installs the build into a temporary prefix (cmake --install --prefix),
# checks the installed files, then builds and runs the consumers of
# tests/install/consumer/ against that prefix:
#   1. with pkg-config: the C and the C++ consumer on the shared library,
#      and the C consumer on the static library (pkg-config --static);
#   2. with CMake: find_package(Partita) in a C/C++ project (Partita::partita
#      and Partita::partita_static) and in a C++-only project.
# Each consumer creates an engine, builds a one- or two-op graph, compiles,
# executes and checks the numbers. Finally a DESTDIR install is checked to
# land under DESTDIR with a pkg-config file naming the final prefix (usable
# in the staged tree through PKG_CONFIG_SYSROOT_DIR).
# CC and CXX choose the compilers (default cc, c++). A third argument "1"
# (an ASan/UBSan build) compiles the consumers with the same sanitizers.
set -eu

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
sanitize=${3:-0}
CC=${CC:-cc}
CXX=${CXX:-c++}
san=""
if [ "$sanitize" = 1 ] || [ "$sanitize" = ON ] || [ "$sanitize" = TRUE ]; then
  san="-fsanitize=address,undefined -fno-omit-frame-pointer"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/partita-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix
consumer=$src/tests/install/consumer

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log" >&2; fail "cmake --install"; }

# The library directory is lib, or lib/<multiarch> for a /usr build.
libdir=$(dirname "$(find "$prefix" -name partita.pc | head -n 1)")
libdir=$(dirname "$libdir")
[ -d "$libdir" ] || fail "no partita.pc installed"

step "installed files"
for f in include/oneapi/dnnl/dnnl_graph.h include/oneapi/dnnl/dnnl_graph_types.h \
         include/oneapi/dnnl/dnnl_common.h include/oneapi/dnnl/dnnl_common_types.h \
         include/oneapi/dnnl/dnnl_config.h include/oneapi/dnnl/dnnl_version.h \
         include/oneapi/dnnl/dnnl_version_hash.h include/oneapi/dnnl/dnnl.hpp \
         include/oneapi/dnnl/dnnl_graph.hpp bin/partita; do
  [ -f "$prefix/$f" ] || fail "missing $f"
done
for f in libpartita.so libpartita.so.3 libpartita.so.3.14 libpartita.a \
         pkgconfig/partita.pc cmake/Partita/PartitaConfig.cmake \
         cmake/Partita/PartitaConfigVersion.cmake cmake/Partita/PartitaTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "missing $libdir/$f"
done
[ -L "$libdir/libpartita.so" ] && [ -L "$libdir/libpartita.so.3" ] \
  || fail "libpartita.so and libpartita.so.3 should be symbolic links"
soname=$(objdump -p "$libdir/libpartita.so.3.14" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libpartita.so.3 ] || fail "SONAME is '$soname', expected libpartita.so.3"
[ -x "$prefix/bin/partita" ] || fail "bin/partita is not executable"

step "pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
version=$(pkg-config --modversion partita)
[ "$version" = 3.14.0 ] || fail "pkg-config --modversion partita gave '$version'"
pc_prefix=$(pkg-config --variable=prefix partita)
[ "$pc_prefix" = "$prefix" ] || fail "partita.pc names prefix '$pc_prefix', not '$prefix'"
cflags=$(pkg-config --cflags partita)
libs=$(pkg-config --libs partita)
static_libs=$(pkg-config --static --libs partita)
echo "pkg-config --cflags --libs partita: $cflags $libs"
echo "pkg-config --static --libs partita: $static_libs"
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -pedantic -Werror $san "$consumer/consumer.c" \
  -o "$tmp/c_pc" $cflags $libs
# shellcheck disable=SC2086
$CXX -std=c++11 -Wall -Wextra -pedantic -Werror $san "$consumer/consumer.cpp" \
  -o "$tmp/cxx_pc" $cflags $libs
# The static library through Libs.private: -l:libpartita.a picks the archive
# even though the shared library sits next to it.
static_libs_a=$(echo "$static_libs" | sed 's/-lpartita\( \|$\)/-l:libpartita.a\1/')
# shellcheck disable=SC2086
$CC -std=c11 $san "$consumer/consumer.c" -o "$tmp/c_pc_static" $cflags $static_libs_a
if readelf -d "$tmp/c_pc_static" | grep -q 'libpartita\.so'; then
  fail "the static consumer needs libpartita.so"
fi
readelf -d "$tmp/c_pc" | grep -q 'Shared library: \[libpartita\.so\.3\]' \
  || fail "the shared consumer does not need libpartita.so.3"
LD_LIBRARY_PATH="$libdir" "$tmp/c_pc"
LD_LIBRARY_PATH="$libdir" "$tmp/cxx_pc"
"$tmp/c_pc_static"

step "CMake find_package(Partita) (C and C++ project)"
cmake_args="-DCMAKE_PREFIX_PATH=$prefix -DCMAKE_BUILD_TYPE=Release"
cmake_args="$cmake_args -DCMAKE_C_COMPILER=$CC -DCMAKE_CXX_COMPILER=$CXX"
# shellcheck disable=SC2086
cmake -S "$consumer" -B "$tmp/cmake-c" $cmake_args \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" >"$tmp/cmake-c.log" 2>&1 || {
  cat "$tmp/cmake-c.log" >&2; fail "configuring the CMake consumer"; }
cmake --build "$tmp/cmake-c" -j 2 >"$tmp/build-c.log" 2>&1 || {
  cat "$tmp/build-c.log" >&2; fail "building the CMake consumer"; }
LD_LIBRARY_PATH="$libdir" "$tmp/cmake-c/consumer_c"
LD_LIBRARY_PATH="$libdir" "$tmp/cmake-c/consumer_cxx"
"$tmp/cmake-c/consumer_c_static"
"$tmp/cmake-c/consumer_cxx_static"

step "CMake find_package(Partita) (C++-only project)"
# shellcheck disable=SC2086
cmake -S "$consumer" -B "$tmp/cmake-cxx" $cmake_args -DCONSUMER_CXX_ONLY=ON \
  -DCMAKE_CXX_FLAGS="$san" >"$tmp/cmake-cxx.log" 2>&1 || {
  cat "$tmp/cmake-cxx.log" >&2; fail "configuring the C++-only CMake consumer"; }
cmake --build "$tmp/cmake-cxx" -j 2 >"$tmp/build-cxx.log" 2>&1 || {
  cat "$tmp/build-cxx.log" >&2; fail "building the C++-only CMake consumer"; }
LD_LIBRARY_PATH="$libdir" "$tmp/cmake-cxx/consumer_cxx"
"$tmp/cmake-cxx/consumer_cxx_static"

step "DESTDIR install"
DESTDIR="$tmp/stage" cmake --install "$build" --prefix /opt/partita >/dev/null
staged=$tmp/stage/opt/partita
[ -f "$staged/include/oneapi/dnnl/dnnl_graph.hpp" ] || fail "DESTDIR: headers missing"
staged_pc=$(find "$staged" -name partita.pc | head -n 1)
[ -n "$staged_pc" ] || fail "DESTDIR: partita.pc missing"
staged_libdir=$(dirname "$(dirname "$staged_pc")")
[ "$(PKG_CONFIG_PATH=$(dirname "$staged_pc") pkg-config --variable=prefix partita)" = /opt/partita ] \
  || fail "DESTDIR: partita.pc should name the final prefix /opt/partita"
PKG_CONFIG_SYSROOT_DIR="$tmp/stage" PKG_CONFIG_PATH=$(dirname "$staged_pc") \
  pkg-config --cflags --libs partita >"$tmp/staged.flags"
# shellcheck disable=SC2046
$CC -std=c11 $san "$consumer/consumer.c" -o "$tmp/c_staged" $(cat "$tmp/staged.flags")
LD_LIBRARY_PATH="$staged_libdir" "$tmp/c_staged"

echo "install check passed"
