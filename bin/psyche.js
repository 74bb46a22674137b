#!/usr/bin/env node
// The installed `psyche` command: runs the compiled CLI (built by `npm install` via prepare).
import "../dist/src/cli.js";
