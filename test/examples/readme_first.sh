#!/bin/bash
# README.md shows examples/first.c as it is: the ```c block under "## A first program" must equal
# the file, byte for byte. Usage: readme_first.sh SOURCE_DIR
set -euo pipefail
src=$1
block=$(awk '/^## A first program$/ { in_section = 1 } in_section && /^```c$/ { on = 1; next }
             on && /^```$/ { exit } on { print }' "$src/README.md")
[ -n "$block" ] || { echo "README.md has no \`\`\`c block under '## A first program'" >&2; exit 1; }
diff -u "$src/examples/first.c" <(printf '%s\n' "$block") ||
    { echo "README.md's first program differs from examples/first.c (above)" >&2; exit 1; }
echo "readme_first: README.md shows examples/first.c"
