#!/usr/bin/env bash
# The two UIs in real clients: the dashboard in Debian's chromium, Hermes in Debian's tmux.
# Installs whichever is missing (as root), then runs test/e2e/dashboard.test.ts and
# test/e2e/hermes-tui.test.ts with them required (without them, `npm test` skips those files).
# puppeteer-core drives the system browser; nothing is downloaded but the packages.
#
#   npm run test:browser             (after npm install; builds dist/ first)
#   PSYCHE_CHROMIUM=/path/to/chrome npm run test:browser
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
chromium=${PSYCHE_CHROMIUM:-/usr/bin/chromium}
say() { printf 'test-browser: %s\n' "$*"; }

missing=()
[ -x "$chromium" ] || missing+=(chromium)
command -v tmux >/dev/null || missing+=(tmux)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null; then
    say "missing ${missing[*]}, and installing Debian's packages needs root"
    exit 1
  fi
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  say "installing Debian's ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cd "$root"
PSYCHE_CHROMIUM="$chromium" PSYCHE_TEST_BROWSER=required PSYCHE_TEST_TMUX=required npx tap dist/test/e2e/dashboard.test.js dist/test/e2e/hermes-tui.test.js dist/test/e2e/hermes-tui-tools.test.js
