#!/usr/bin/env node
// The installed `psyche` command. It is CommonJS so that this runs before Node first uses
// libuv's thread pool, which sizes the pool once: an ES module entry has used it by the time
// its first line runs.
//
// A server's model takes one thread of that pool per call (each decode and each sampling is a
// call), and the engine's OpenMP threads form a team per calling thread: with the default four
// pool threads, decoding hopped between teams and got ~75% of the engine's speed for one
// stream and ~70% for four at once on a 2-core machine (bench/vs-llama-server.ts; the cause in
// docs/configuration.md). With one pool thread every call comes from the same thread. Set
// UV_THREADPOOL_SIZE yourself to choose otherwise.
"use strict";
const servers = ["serve", "start", "inference"];
if (process.env.UV_THREADPOOL_SIZE === undefined && servers.includes(process.argv[2])) process.env.UV_THREADPOOL_SIZE = "1";
import("./psyche.js");
