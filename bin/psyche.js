#!/usr/bin/env node
// The installed `psyche` command: runs the compiled CLI (built by `npm install` via prepare).
// `psyche hook` runs in a new process per agent hook call, so it skips the CLI's imports (the
// model runtime, the database drivers) and loads only the hook relay.
if (process.argv[2] === "hook") {
  const { hookCommand } = await import("../dist/src/agents/hook-command.js");
  await hookCommand(process.argv.slice(3));
} else {
  await import("../dist/src/cli.js");
}
