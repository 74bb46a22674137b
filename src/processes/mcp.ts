// `psyche mcp`: MCP over stdio for clients that spawn a process, a bridge to a running
// server's /mcp (mcp/stdio-bridge.ts). It loads no model and no database.
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { startStdioBridge } from "../mcp/stdio-bridge.js";

/** Relays until the client closes stdin. */
export async function runMcp(config: Config, log: Logger): Promise<void> {
  const bridge = await startStdioBridge(config, log);
  await bridge.closed;
}
