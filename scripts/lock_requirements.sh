#!/usr/bin/env bash
# Recompiles the Python locks scripts/requirements/*.txt from the *.in beside them, with every
# file's hash, using a pinned pip-tools in a throw-away venv. Run it after changing a pin in a
# .in file; then run the whole test command and commit the .in and .txt together.
#
#   bash scripts/lock_requirements.sh          every lock
#   bash scripts/lock_requirements.sh test     only scripts/requirements/test.txt
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PIP_TOOLS=pip-tools==7.6.2

dir=$MAX_C_ROOT/scripts/requirements
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools"
"$tools/bin/python" -m pip install --quiet "$PIP_TOOLS"

names=("$@")
if ((${#names[@]} == 0)); then
  for f in "$dir"/*.in; do names+=("$(basename "$f" .in)"); done
fi
for name in "${names[@]}"; do
  [[ -f $dir/$name.in ]] || die "no $dir/$name.in"
  log "compiling scripts/requirements/$name.txt"
  # A machine's local wheel folder (PIP_FIND_LINKS) must not leak into the lock.
  (cd "$dir" && PIP_FIND_LINKS= "$tools/bin/pip-compile" --quiet --generate-hashes --allow-unsafe \
     --strip-extras --no-header --no-emit-find-links -o "$name.txt" "$name.in")
done
