// What Postgres cannot keep is refused before anything is stored (src/conversation/storable-text.ts):
// a NUL character itself, wherever a turn stores text or JSON; never the six characters `\u0000`
// that a coding agent's tool description quotes (Claude Code's do).
import t from "tap";
import { checkStorableText, checkStorableTurn } from "../../src/conversation/storable-text.js";
import { turnRequest } from "../../src/conversation/turn-request.js";
import type { ToolSpec } from "../../src/tools/types.js";

const NUL = String.fromCharCode(0);
const request = (parts: Partial<Parameters<typeof turnRequest>[0]> = {}) =>
  turnRequest({ model: "m", messages: [{ role: "user", content: "hi" }], conversation: { kind: "own" }, scope: "default", ...parts });
const tool = (description: string, parameters: Record<string, unknown> = { type: "object", properties: {} }): ToolSpec => ({
  name: "grep",
  description,
  parameters,
});

t.test("quoted escapes pass; the character itself is refused, naming the field", async (t) => {
  t.doesNotThrow(() => checkStorableTurn(request({ tools: [tool("Split on \\u0000 with -print0")] })), "a description quoting \\u0000");
  t.doesNotThrow(() => checkStorableTurn(request({ messages: [{ role: "user", content: "what is \\u0000?" }] })));
  t.throws(() => checkStorableTurn(request({ tools: [tool(`a ${NUL} byte`)] })), { param: "tools", status: 400, message: /NUL/ });
  t.throws(() => checkStorableTurn(request({ tools: [tool("ok", { type: "object", properties: { [`k${NUL}`]: {} } })] })), {
    param: "tools",
    message: /NUL/,
  });
  t.throws(
    () =>
      checkStorableTurn(
        request({
          messages: [
            { role: "system", content: "x" },
            { role: "user", content: `a ${NUL}` },
          ],
        }),
      ),
    { param: "messages[1]", message: /NUL/ },
  );
  const call = { id: "c1", name: "grep", arguments: `{"q":"${NUL}"}` };
  t.throws(() => checkStorableTurn(request({ messages: [{ role: "assistant", content: "", toolCalls: [call] }] })), {
    param: "messages[0]",
    message: /NUL/,
  });
  t.throws(() => checkStorableTurn(request({ instructions: `be ${NUL}` })), { param: "instructions", message: /NUL/ });
  t.throws(() => checkStorableTurn(request({ sampling: { ...request().sampling, stop: [NUL] } })), { param: "stop", message: /NUL/ });
  t.throws(
    () => checkStorableTurn(request({ responseFormat: { type: "json_schema", name: "a", schema: { description: NUL }, strict: false } })),
    { param: "response_format", message: /NUL/ },
  );
  t.doesNotThrow(() => checkStorableText("prompt", "def f(): return '\\u0000'"));
  t.throws(() => checkStorableText("suffix", `x${NUL}`), { param: "suffix", message: /NUL/ });
});
