#!/usr/bin/env bash
# Mutation testing of one scoped package with cosmic-ray (see docs/mutation.md).
#   scripts/mutation.sh baselines|ice|thalia|exia [SESSION.sqlite]
# Mutates files IN PLACE: run it in a clean checkout (a git worktree) you are not editing.
# Re-running with the same session resumes; `--retest-survivors` re-runs only the survivors
# (after adding tests); mutants not run yet stay pending.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?package: baselines, ice, thalia or exia}"
config="scripts/mutation/${name}.toml"
session="${2:-runs/mutation-${name}.sqlite}"
mkdir -p "$(dirname "$session")"
if [ ! -x .venv/bin/cosmic-ray ]; then .venv/bin/python -m pip install --quiet -e ".[mutation]"; fi
if [ "${3:-}" = "--retest-survivors" ]; then
  # Only the survivors: mutants not run yet are deferred (marked, then unmarked after exec).
  sqlite3 "$session" "insert into work_results (worker_outcome, output, job_id) select 'SKIPPED', 'deferred', job_id
                      from mutation_specs where job_id not in (select job_id from work_results)"
  undefer() { sqlite3 "$session" "delete from work_results where worker_outcome = 'SKIPPED' and output = 'deferred'"; }
  trap undefer EXIT
  sqlite3 "$session" "delete from work_results where test_outcome = 'SURVIVED'"
elif [ ! -f "$session" ]; then
  .venv/bin/cosmic-ray init "$config" "$session"
  .venv/bin/python scripts/mutation_scope.py "$config" "$session"
fi
.venv/bin/cosmic-ray baseline "$config"
.venv/bin/cosmic-ray exec "$config" "$session"
if [ "${3:-}" = "--retest-survivors" ]; then undefer; trap - EXIT; fi
.venv/bin/python scripts/mutation_report.py "$session"
