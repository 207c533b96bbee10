# Shared helpers of the scripts in this folder; sourced, not run.
# shellcheck shell=bash

MAX_C_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DEBIAN_FRONTEND=noninteractive
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1

# Progress lines carry the script's name, so a CI log shows which script spoke.
log() { printf '[%s] %s\n' "$(basename "$0" .sh)" "$*"; }
die() {
  printf '[%s] error: %s\n' "$(basename "$0" .sh)" "$*" >&2
  exit 1
}

# Runs a command as root: directly when we are root, through sudo (never prompting) when it
# is there, and fails with the command it could not run otherwise.
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n env DEBIAN_FRONTEND=noninteractive "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

# Fails naming every command of the list that is not on PATH.
require_commands() {
  local missing=() c
  for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
  ((${#missing[@]} == 0)) || die "missing required tools: ${missing[*]} (run scripts/setup.sh)"
}

# Seconds since the epoch, for durations.
now_s() { date +%s; }

# The real-model corpus's folder (scripts/fetch_models.sh fills it): outside the clone, so every
# clone on this machine shares it, and named after the lock's hash, so a changed pin re-fetches.
# bench/real_corpus.py computes the same path; MAX_C_MODELS_DIR overrides both.
models_dir() {
  local lock=$MAX_C_ROOT/scripts/requirements/models.txt
  echo "${MAX_C_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/max_c/models/$(sha256sum "$lock" | cut -c1-16)}"
}
