#!/usr/bin/env bash
# Run one setup step with a banner, its duration, and on failure a clear message.
# usage: scripts/step.sh "WHAT IT DOES" "WHAT TO DO IF IT FAILS" command [args...]
set -uo pipefail
what=$1
hint=$2
shift 2
start=$(date +%s)
echo "==> ${what}"
"$@"
rc=$?
took=$(( $(date +%s) - start ))
if [ "$rc" -ne 0 ]; then
  echo "" >&2
  echo "step failed (exit ${rc}, after ${took}s): ${what}" >&2
  echo "  what to do: ${hint}" >&2
  exit "$rc"
fi
echo "    done in ${took}s: ${what}"
