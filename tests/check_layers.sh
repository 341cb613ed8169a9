#!/bin/sh
# Checks every `#include "..."` under src/ against the allowed-includes table
# of docs/architecture.md (the rows between the layers:begin / layers:end
# markers).  A row names a layer (a folder under src/) and what its files may
# include: whole layers (`ir`), single headers (`ir/dtype.h`) or `include`
# (the public headers).  A layer may always include its own headers.  Every
# entry must name a layer of an earlier row, so the table itself has no
# circles; an include the table does not allow is reported with its file and
# line.  Exit status 0 when everything holds.
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
doc="$root/docs/architecture.md"
[ -f "$doc" ] || { echo "check_layers: $doc not found"; exit 2; }

table=$(sed -n '/<!-- layers:begin -->/,/<!-- layers:end -->/p' "$doc" |
        grep '^| `' | sed 's/`//g' | awk -F'|' '{gsub(/ /, "", $2); gsub(/ /, "", $3); print $2 " " $3}')
[ -n "$table" ] || { echo "check_layers: no table between the layer markers in $doc"; exit 2; }

status=0
# The table must point downwards only.
seen=""
echo "$table" | {
    while read -r layer allowed; do
        for a in $(echo "$allowed" | tr ',' ' '); do
            top=${a%%/*}
            [ "$top" = include ] && continue
            case " $seen " in
                *" $top "*) ;;
                *) echo "check_layers: row '$layer' allows '$a', which is not a lower layer"; exit 1 ;;
            esac
        done
        seen="$seen $layer"
    done
} || status=1

# Every include of every source file.
violations=$(cd "$root" && for f in $(find src -name '*.c' -o -name '*.h' | sort); do
    layer=$(echo "$f" | cut -d/ -f2)
    allowed=$(echo "$table" | awk -v l="$layer" '$1 == l {print $2}')
    if [ -z "$allowed" ]; then
        echo "$f: layer '$layer' is not in the table"
        continue
    fi
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS=: read -r line text; do
        inc=$(echo "$text" | sed 's/.*"\(.*\)".*/\1/')
        top=${inc%%/*}
        # Same layer, or a header next to the file.
        [ "$top" = "$layer" ] && continue
        case "$inc" in */*) ;; *) continue ;; esac
        ok=0
        for a in $(echo "$allowed" | tr ',' ' '); do
            case "$a" in
                include) [ "$top" = oneapi ] && ok=1 ;;
                */*) [ "$inc" = "$a" ] && ok=1 ;;
                *) [ "$top" = "$a" ] && ok=1 ;;
            esac
        done
        [ $ok = 1 ] || echo "$f:$line: includes \"$inc\", which layer '$layer' may not include"
    done
done)
if [ -n "$violations" ]; then
    echo "$violations"
    echo "check_layers: $(echo "$violations" | wc -l) include(s) break the table of docs/architecture.md"
    status=1
fi
[ $status = 0 ] && echo "check_layers: every include follows docs/architecture.md"
exit $status
