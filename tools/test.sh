#!/usr/bin/env bash
# The test command: installs build dependencies, builds vmaf_cuda (and the patched
# static ffmpeg for the filter suite), then runs every meson test suite:
# golden, api, filter, gpu (gpu reports SKIP without a CUDA device), batch, report, fuzz; then
# tools/sanitize.sh (ASan + UBSan build, api suite, golden subset, filter suite, fuzzers).
# Arguments go to `meson test` (e.g. --suite api); with arguments the sanitizer step is
# left out unless SANITIZE=1; SANITIZE=0 leaves it out always.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
. tools/env.sh
builddir=${BUILDDIR:-build}
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" --buildtype=release
fi
ninja -C "$builddir"
rc=0
meson test -C "$builddir" --print-errorlogs --num-processes 2 "$@" || rc=$?
sanitize=""
if [ "${SANITIZE:-$([ $# -eq 0 ] && echo 1 || echo 0)}" = 1 ]; then
  sanitize=ok
  bash tools/sanitize.sh || { sanitize=FAILED; rc=1; }
fi
# Say why each skipped test was skipped (the gpu suite without a CUDA device).
python3 - "$builddir/meson-logs/testlog.json" <<'PY'
import json, sys
n = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    t = json.loads(line)
    r = t.get("result")
    n["OK" if r == "OK" else "SKIP" if r == "SKIP" else "FAIL"] += 1
    if r == "SKIP":
        why = [l for l in (t.get("stdout") or "").splitlines() if l.startswith("SKIPPED")]
        print("SKIP %s: %s" % (t["name"], why[0] if why else "(no reason printed)"))
print("%d passed, %d failed, %d skipped" % (n["OK"], n["FAIL"], n["SKIP"]))
PY
[ -z "$sanitize" ] || echo "sanitizers and fuzzing (tools/sanitize.sh): $sanitize"
exit $rc
