#!/usr/bin/env bash
# Install LSREP into .venv and run the bundled example end to end (offline, SQLite).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
exec .venv/bin/lsrep quickstart "$@"
