// The reference client loop against a real server: seed 001's scenarios 1 and 2 (file tools
// run by the client), with the real tiny model forced to call, and with a scripted model that
// chains two tools; the workspace sandbox refuses paths outside it.
import t from "tap";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { FileToolClient } from "../helpers/file-tool-client.js";
import { ScriptedEngine, sinceUser } from "../helpers/scripted-engine.js";
import { startPsyche } from "../helpers/psyche.js";
import { serverDir } from "../helpers/testdir.js";

const dir = serverDir(t);
const workspace = join(dir, "workspace");
mkdirSync(join(workspace, "src"), { recursive: true });
writeFileSync(join(workspace, "README.md"), "# Psyche\nA server with a memory.\n");
writeFileSync(join(workspace, "src", "main.ts"), "console.log('hi');\n");
writeFileSync(join(dir, "secret.txt"), "do not read\n");
symlinkSync(join(dir, "secret.txt"), join(workspace, "escape.txt"));

t.test("the sandbox: inside is read, outside is refused", async (t) => {
  const c = new FileToolClient(new OpenAI({ apiKey: "unused", baseURL: "http://127.0.0.1:9/v1" }), workspace);
  t.equal(c.runTool("read_file", '{"path":"README.md"}'), "# Psyche\nA server with a memory.\n");
  t.equal(c.runTool("list_directory", "{}"), "README.md\nescape.txt\nsrc/");
  t.match(c.runTool("read_file", '{"path":"../secret.txt"}'), /refused: .* outside the workspace/);
  t.match(c.runTool("read_file", '{"path":"escape.txt"}'), /refused: .* outside the workspace/, "a symlink out is refused too");
  t.match(c.runTool("read_file", `{"path":${JSON.stringify(join(dir, "secret.txt"))}}`), /refused: .* absolute/);
  t.match(c.runTool("read_file", '{"path":"missing.txt"}'), /^error: ENOENT/);
  t.match(c.runTool("rm", "{}"), /no tool named rm/);
});

t.test("scenario 1 with the real tiny model: a forced call, run locally, then a text reply", async (t) => {
  const psyche = await startPsyche(t, { recallPromptTokens: 0 });
  const c = new FileToolClient(new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 }), workspace);
  const answer = await c.ask("Read the contents of README.md", { firstChoice: "required", seed: 2, maxTokens: 300 });
  t.equal(c.ran.length, 1, "one tool ran, on the client");
  t.ok(["read_file", "list_directory"].includes(c.ran[0]!.name));
  t.equal(answer.rounds, 2);
  t.not(answer.finishReason, "tool_calls");
  t.equal(answer.messages.at(-1)?.role, "tool", "the result went back to the server");
});

t.test("scenario 2 with a scripted model: list, then read, then a summary", async (t) => {
  const engine = new ScriptedEngine((request) => {
    const results = sinceUser(request)
      .after.filter((m) => m.role === "tool")
      .map((m) => m.content);
    if (results.length === 0) return { toolCalls: [{ name: "list_directory", arguments: { path: "." } }] };
    if (results.length === 1)
      return { toolCalls: [{ name: "read_file", arguments: { path: results[0]!.includes("README.md") ? "README.md" : "nothing" } }] };
    if (results.length === 2) return { toolCalls: [{ name: "read_file", arguments: { path: "../secret.txt" } }] };
    return { text: `Files: ${results[0]!.split("\n").join(", ")}. README: ${results[1]!.split("\n")[0]}. Outside: ${results[2]}` };
  });
  const psyche = await startPsyche(t, {}, { engine });
  const c = new FileToolClient(new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 }), workspace);
  const answer = await c.ask("List the files and then read the README.md");
  t.same(
    c.ran.map((r) => r.name),
    ["list_directory", "read_file", "read_file"],
  );
  t.equal(answer.finishReason, "stop");
  t.match(answer.content, /^Files: README.md, escape.txt, src\/\. README: # Psyche\. Outside: error: refused/);
});
