#!/bin/sh
# Every library source that issues software prefetches (_mm_prefetch or
# __builtin_prefetch in its own text) must have prefetch instructions in its
# object: GCC treats a helper whose only effect is a prefetch as free of side
# effects and may drop every call to it (the SDPA decode rows lost theirs
# that way, unnoticed, for several sessions).  Arguments: the source root and
# the object directory of the library (CMakeFiles/partita_obj.dir).  Exit
# status 0 when every such object has at least one, 77 (skipped) without
# objdump.
set -eu
root=$1
objdir=$2
command -v objdump >/dev/null 2>&1 || { echo "check_prefetches: no objdump, skipped"; exit 77; }
status=0
checked=0
for src in $(cd "$root" && grep -rl -e '_mm_prefetch' -e '__builtin_prefetch' src --include='*.c'); do
    obj="$objdir/$src.o"
    if [ ! -f "$obj" ]; then
        echo "check_prefetches: $obj missing (is $src built?)"
        status=1
        continue
    fi
    n=$(objdump -d "$obj" | grep -c 'prefetch' || true)
    checked=$((checked + 1))
    if [ "$n" -eq 0 ]; then
        echo "check_prefetches: $src issues prefetches but its object has no prefetch instruction"
        status=1
    fi
done
echo "check_prefetches: $checked sources checked"
exit $status
