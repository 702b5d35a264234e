#!/usr/bin/env bash
# Build the wheel, install it (not editable) into a fresh venv and run the quickstart from an
# empty directory: proves the installed package carries its campaigns, schedules and templates
# and that nothing but `lsrep` lands at the top of site-packages.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip wheel --quiet --no-deps -w "$work/dist" . 2>/dev/null
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$work"/dist/lsrep-*.whl 2>/dev/null
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
top=$(cat "$site"/lsrep-*.dist-info/top_level.txt)
if [ "$top" != "lsrep" ]; then
  echo "wheel-smoke: top-level modules besides lsrep: $top" >&2
  exit 1
fi
for name in adapters reports probes systems schedules campaigns; do
  if [ -e "$site/$name" ]; then echo "wheel-smoke: $site/$name installed at top level" >&2; exit 1; fi
done
mkdir "$work/empty"
(cd "$work/empty" && "$work/venv/bin/lsrep" --version && "$work/venv/bin/lsrep" quickstart -o out >"$work/quickstart.log")
test -s "$work/empty/out/report.html" || { echo "wheel-smoke: no report.html" >&2; cat "$work/quickstart.log"; exit 1; }
tail -n 4 "$work/quickstart.log"
echo "wheel-smoke: ok"
