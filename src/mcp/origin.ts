// DNS-rebinding protection for /mcp (docs/coding-agents.md, "MCP"). A page on a hostile site can make a
// browser send requests to 127.0.0.1 under its own name, but not with a loopback Origin.
// Requests without an Origin (command-line clients, hook scripts) are not from a browser.

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether a request with this Origin header may use /mcp: none, a loopback page, or one configured. */
export function originAllowed(origin: string | undefined, configured: readonly string[]): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed or file: page) and anything unreadable
  }
  if (configured.includes(url.origin)) return true;
  return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_NAMES.has(url.hostname);
}
