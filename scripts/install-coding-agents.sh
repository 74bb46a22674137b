#!/usr/bin/env bash
# Installs the coding agents that test/e2e/coding-agents.test.ts runs (Claude Code, Codex,
# OpenCode, Qwen Code, and Cline's CLI over Ollama's API) into scripts/coding-agents/node_modules: hundreds of MB that a user who
# only runs Psyche never needs, so they are not in Psyche's own package.json. npm's cache makes
# a second install fast; an install that is already complete is left as it is.
set -euo pipefail
cd "$(dirname "$0")/coding-agents"
ready=node_modules/.psyche-agents-ready
if [[ -f $ready ]] && [[ package-lock.json -ot $ready ]]; then exit 0; fi
rm -f "$ready"
# Install scripts are not run wholesale; the two that matter are run below. They only place
# the native binary that the per-platform package (an optional dependency, from the registry)
# already holds: Claude Code's and OpenCode's commands are that binary.
npm install --no-audit --no-fund --ignore-scripts --loglevel=error
node node_modules/@anthropic-ai/claude-code/install.cjs
(cd node_modules/opencode-ai && node postinstall.mjs)
for b in claude codex opencode qwen cline; do
  if ! out=$(node_modules/.bin/$b --version 2>&1); then
    echo "install-coding-agents: $b does not run after the install: $out" >&2
    exit 1
  fi
done
touch "$ready"
