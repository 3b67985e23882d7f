#!/usr/bin/env bash
# Runs mpit_enum with the MPI library alone and with libibmsg-mpit preloaded: every line of the
# first run (the MPI library's items, their facts, enums and category members, by name) must
# appear in the second, the MPI library's counts must be included, and ibmsg's items must show.
# Usage: check_enum.sh MPIT_ENUM LAYER_SO [--init]
set -euo pipefail
tool=$1 layer=$2
shift 2
alone=$(mktemp) merged=$(mktemp)
trap 'rm -f "$alone" "$merged"' EXIT
"$tool" "$@" >"$alone"
LD_PRELOAD="$layer${LD_PRELOAD:+:$LD_PRELOAD}" "$tool" "$@" >"$merged"
missing=$(grep -vE '^(cvars|pvars|categories) ' "$alone" | sort | comm -23 - <(sort "$merged") | head -5)
if [ -n "$missing" ]; then
    echo "lines of the MPI library alone missing with the layer:" >&2
    echo "$missing" >&2
    exit 1
fi
for kind in cvars pvars categories; do
    a=$(awk -v k=$kind '$1 == k {print $2}' "$alone")
    m=$(awk -v k=$kind '$1 == k {print $2}' "$merged")
    ours=$(grep -c "^${kind%s} ibmsg\|^${kind%ies}y ibmsg" "$merged" || true)
    echo "$kind: MPI alone $a, with the layer $m (ibmsg $ours)"
    [ "$m" -eq $((a + ours)) ] || { echo "$kind: $m != $a + $ours" >&2; exit 1; }
done
grep -q '^cvar ibmsg_' "$merged" || { echo "no ibmsg cvar in the merged view" >&2; exit 1; }
grep -q '^pvar ibmsg_' "$merged" || { echo "no ibmsg pvar in the merged view" >&2; exit 1; }
echo "check_enum: ok"
