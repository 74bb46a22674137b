#!/usr/bin/env bash
# Installs the coding agents that test/e2e/coding-agents.test.ts runs (Claude Code, Codex,
# OpenCode, Qwen Code) into scripts/coding-agents/node_modules: hundreds of MB that a user who
# only runs Psyche never needs, so they are not in Psyche's own package.json. npm's cache makes
# a second install fast; an install that is already complete is left as it is.
set -euo pipefail
cd "$(dirname "$0")/coding-agents"
bins=(claude codex opencode qwen)
ready=1
for b in "${bins[@]}"; do [[ -x "node_modules/.bin/$b" ]] || ready=0; done
if [[ $ready == 1 ]] && [[ package-lock.json -ot node_modules/.package-lock.json ]]; then exit 0; fi
# Their install scripts only fetch what the packages already hold (the native binaries ship
# in per-platform packages): not run, so nothing outside the npm registry is reached.
npm install --no-audit --no-fund --ignore-scripts --loglevel=error
