#!/usr/bin/env node
// A prompt hook for agent tools (Claude Code's UserPromptSubmit, or anything that runs a
// command with the prompt on stdin and adds what it prints to the model's context).
//
// It asks a running Psyche for the memories and insights relevant to the prompt (the MCP tool
// assemble_context, one POST to /mcp) and prints the markdown. It never holds the prompt up:
// if Psyche is not running, is slow, or fails, it prints nothing and exits 0.
//
// stdin: Claude Code's hook JSON ({"prompt": "...", ...}) or the prompt as plain text.
// Environment: PSYCHE_SERVER_URL (default http://127.0.0.1:8741), PSYCHE_API_KEY (if the
// server has one), PSYCHE_HOOK_TIMEOUT_MS (default 500), PSYCHE_HOOK_MAX_TOKENS (default 800).

const base = (process.env.PSYCHE_SERVER_URL ?? "http://127.0.0.1:8741").replace(/\/+$/, "");
const timeoutMs = Number(process.env.PSYCHE_HOOK_TIMEOUT_MS ?? 500);
const maxTokens = Number(process.env.PSYCHE_HOOK_MAX_TOKENS ?? 800);

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString("utf8");
  try {
    const hook = JSON.parse(raw);
    if (hook && typeof hook.prompt === "string") return hook.prompt;
  } catch {
    // plain text
  }
  return raw;
}

async function main() {
  const prompt = (await readStdin()).trim();
  if (!prompt) return;
  const res = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(process.env.PSYCHE_API_KEY ? { authorization: `Bearer ${process.env.PSYCHE_API_KEY}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "assemble_context", arguments: { query: prompt.slice(0, 20000), max_tokens: maxTokens } },
    }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const body = await res.json();
  const result = body.result;
  if (!result || result.isError) throw new Error(result?.content?.[0]?.text ?? body.error?.message ?? "no result");
  const markdown = result.structuredContent?.markdown ?? "";
  if (markdown) process.stdout.write(`${markdown}\n`);
}

main().catch((err) => {
  // Context is a bonus: say why on stderr (the agent tool's debug log) and let the prompt go on.
  process.stderr.write(`psyche hook: no context (${err.name === "TimeoutError" ? `no answer in ${timeoutMs} ms` : err.message})\n`);
  process.exitCode = 0;
});
