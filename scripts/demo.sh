#!/usr/bin/env bash
# The README's demo: sets up what is missing, builds, and runs examples/c/demo.c, which goes
# through the public C ABI only (see that file for what it shows).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bash "$MAX_C_ROOT/scripts/setup.sh"
bash "$MAX_C_ROOT/scripts/build.sh" dev --target example_demo
log "running build/examples/c/demo"
exec "$MAX_C_ROOT/build/examples/c/demo"
