#!/bin/sh
# Partita export check (CTest: install_exports).
#
#   sh tests/install/check_exports.sh <libpartita.so> <include dir> <exports.txt>
#
# The dynamic symbols libpartita.so defines must be exactly the public C API:
#   * the functions declared with DNNL_API in <include dir>/oneapi/dnnl/*.h
#     (found in the comment-free headers: the identifier right before the
#     "(" that follows DNNL_API, which also covers
#     `const dnnl_version_t DNNL_API *dnnl_version(void)`);
#   * the checked-in list exports.txt, so that a function dropped from the
#     headers is noticed as an ABI change too;
#   * nm -D --defined-only of the library.
# Any symbol in one set and not in another is reported (an internal pt_*
# function or a compiler-made symbol that leaked, or a missing export).
set -eu

lib=$1
incdir=$2/oneapi/dnnl
list=$3
CC=${CC:-cc}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/partita-exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# Declarations from the headers. -fpreprocessed -dD -E removes comments and
# keeps directives without expanding macros; directive lines are dropped so
# that only declarations remain, joined into one line.
for h in "$incdir"/*.h; do
  "$CC" -x c -w -fpreprocessed -dD -E -P "$h"
done | grep -v '^[[:space:]]*#' | tr '\n' ' ' \
  | grep -o 'DNNL_API[[:space:]*]*[A-Za-z_][A-Za-z0-9_]*[[:space:]]*(' \
  | sed -e 's/^DNNL_API[[:space:]*]*//' -e 's/[[:space:]]*($//' \
  | sort -u >"$tmp/headers"

# The checked-in list (comments and blank lines ignored).
sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$' | sort -u >"$tmp/list"

# What the library exports: defined dynamic symbols.
nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 } NF == 2 { print $2 }' \
  | sed 's/@.*//' | sort -u >"$tmp/lib"

nh=$(wc -l <"$tmp/headers")
nl=$(wc -l <"$tmp/lib")
echo "public API functions in the headers: $nh; defined dynamic symbols: $nl"

status=0
report() { # title, file
  if [ -s "$2" ]; then
    echo "$1:"
    sed 's/^/  /' "$2"
    status=1
  fi
}
[ "$nh" -gt 0 ] || { echo "no DNNL_API declarations found under $incdir"; exit 1; }
comm -13 "$tmp/headers" "$tmp/lib" >"$tmp/extra"
comm -23 "$tmp/headers" "$tmp/lib" >"$tmp/missing"
comm -13 "$tmp/headers" "$tmp/list" >"$tmp/list_extra"
comm -23 "$tmp/headers" "$tmp/list" >"$tmp/list_missing"
report "exported but not declared in the public headers (leaked)" "$tmp/extra"
report "declared in the public headers but not exported" "$tmp/missing"
report "in exports.txt but not declared in the public headers" "$tmp/list_extra"
report "declared in the public headers but not in exports.txt" "$tmp/list_missing"

# Every export is a function (T), as the API has no public variables.
nm -D --defined-only "$lib" | awk 'NF >= 3 && $2 != "T" { print $3 " (" $2 ")" }' >"$tmp/nonfunc"
report "exported symbols that are not functions" "$tmp/nonfunc"

if [ "$status" = 0 ]; then
  echo "exports match the public API ($nh functions)"
fi
exit "$status"
