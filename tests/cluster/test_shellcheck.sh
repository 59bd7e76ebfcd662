#!/usr/bin/env bash
# Every shell script in the repository (cluster/, tests/, tools/, .ci/: whatever git tracks
# with a sh or bash #! line) passes shellcheck at warning level. A warning that is meant
# carries a "# shellcheck disable=SCnnnn # why" line above it.
# Exit 0 pass, 1 fail, 77 skip (no shellcheck or not a git checkout).
set -u
src=${PV_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 1
command -v shellcheck > /dev/null || { echo "skip: no shellcheck (Debian package shellcheck)"; exit 77; }
files=$(git ls-files 2> /dev/null) || { echo "skip: not a git checkout"; exit 77; }
n=0 fail=0
while IFS= read -r f; do
  [ -f "$f" ] || continue
  head -n 1 "$f" | grep -q -E '^#!(/usr/bin/env (ba)?sh|/bin/(ba)?sh)' || continue
  n=$((n + 1))
  shellcheck -S warning -x "$f" || fail=1
done <<< "$files"
[ "$n" -gt 0 ] || { echo "FAIL: no shell script found under $src"; exit 1; }
[ "$fail" -eq 0 ] && echo "PASS: $n shell scripts, no shellcheck warning"
exit "$fail"
