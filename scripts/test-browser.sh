#!/usr/bin/env bash
# The dashboard in a real browser: installs Debian's chromium when it is missing (as root), then
# runs test/e2e/dashboard.test.ts with the browser required (without chromium, `npm test` skips
# that file). puppeteer-core drives the system browser; nothing is downloaded but the package.
#
#   npm run test:browser             (after npm install; builds dist/ first)
#   PSYCHE_CHROMIUM=/path/to/chrome npm run test:browser
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
chromium=${PSYCHE_CHROMIUM:-/usr/bin/chromium}
say() { printf 'test-browser: %s\n' "$*"; }

if [ ! -x "$chromium" ]; then
  if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null; then
    say "no browser at $chromium, and installing Debian's chromium needs root"
    exit 1
  fi
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  say "installing Debian's chromium"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq chromium >/dev/null
fi

cd "$root"
PSYCHE_CHROMIUM="$chromium" PSYCHE_TEST_BROWSER=required npx tap test/e2e/dashboard.test.ts
