#!/usr/bin/env node
// The installed `psyche` command: runs the compiled CLI (built by `npm install` via prepare).
// `psyche hook` runs in a new process per agent hook call, so it skips the CLI's imports (the
// model runtime, the database drivers) and loads only the hook relay. `psyche chat` is Hermes,
// a client: it needs none of them either.
if (process.argv[2] === "hook") {
  const { hookCommand } = await import("../dist/src/processes/hook.js");
  await hookCommand(process.argv.slice(3));
} else if (process.argv[2] === "chat") {
  const { hermesMain } = await import("../dist/src/processes/chat.js");
  await hermesMain(process.argv.slice(3));
  process.exit();
} else {
  await import("../dist/src/cli.js");
}
