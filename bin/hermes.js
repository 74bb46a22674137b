#!/usr/bin/env node
// The installed `hermes` command: `psyche chat` by its own name (dist/ is built by `npm install`).
const { hermesMain } = await import("../dist/src/processes/chat.js");
await hermesMain(process.argv.slice(2));
// Idle keep-alive sockets must not hold the exit once Hermes is done.
process.exit();
