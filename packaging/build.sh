#!/usr/bin/env bash
# Build the one-folder PyInstaller bundle of openclaw-desktop.
#   packaging/build.sh [DIST_DIR]      (default: dist/, gitignored)
# Prints the path of the built executable on its last line. Needs the project venv (.venv,
# made by ./dev run or ./dev test); installs PyInstaller into it when missing. Downloads and
# PyInstaller's binary cache stay under ~/.cache; intermediate files go to
# $OPENCLAW_BUILD_WORK (default build/pyinstaller, gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${OPENCLAW_DEV_VENV:-.venv}"
PY="$VENV/bin/python"
DIST="${1:-dist}"
WORK="${OPENCLAW_BUILD_WORK:-build/pyinstaller}"

[[ -x "$PY" ]] || { echo "no $VENV here: run ./dev run (or ./dev test) once first" >&2; exit 2; }
if ! "$PY" -c 'import PyInstaller' 2>/dev/null; then
  echo "==> installing PyInstaller into $VENV" >&2
  "$PY" -m pip install -q 'pyinstaller>=6.10' 2>&1 | grep -v '^WARNING: Location' >&2 || true
fi
set +e
"$PY" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$DIST" --workpath "$WORK" packaging/openclaw-desktop.spec 2>&1 \
  | grep -v -E 'WARNING: (Library .* required via ctypes not found|Ignoring .* imported from)' >&2
status=${PIPESTATUS[0]}
set -e
[[ $status -eq 0 ]] || { echo "PyInstaller failed (exit $status)" >&2; exit 1; }
exe="$DIST/openclaw-desktop/openclaw-desktop"
[[ -x "$exe" ]] || { echo "the build produced no $exe" >&2; exit 1; }
echo "$exe"
