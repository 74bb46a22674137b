// The context check where a request arrives counts what the model will read: the persona, the
// messages, and every tool offered, Psyche's own beside a client's (tools/offered.ts).
import t from "tap";
import { fitReply, type KnownLimits } from "../../src/conversation/context-fit.js";
import { ContextOverflow } from "../../src/errors.js";
import type { ToolSpec } from "../../src/tools/types.js";

const count = async (text: string) => text.length;
const tool = (name: string, description: string): ToolSpec => ({ name, description, parameters: { type: "object" } });
const serverTools = [tool("search_memories", "x".repeat(900))];
const limits: KnownLimits = { countTokens: count, contextSize: 1000, persona: "p".repeat(100), serverTools };
const messages = [{ content: "hello" }];

t.test("Psyche's own tools count where they are offered: beside a client's tools, unless the choice is none or names one", async (t) => {
  const client = { client: [tool("read_file", "Read a file")] };
  await t.rejects(fitReply(limits, messages, client, 100), ContextOverflow, "offered beside the client's: past the context");
  t.equal(await fitReply({ ...limits, serverTools: undefined }, messages, client, 100), 100, "without them it fits");
  t.equal(await fitReply(limits, messages, { ...client, choice: "none" }, 100), 100, "none: nothing offered");
  t.equal(await fitReply(limits, messages, { ...client, choice: { name: "read_file" } }, 100), 100, "a named tool alone");
  t.equal(await fitReply(limits, messages, { client: [] }, 100), 100, "a plain chat gets recall instead of tools");
});

t.test("the reply gets what the context leaves; the persona counts", async (t) => {
  const budget = await fitReply(limits, messages, { client: [] }, 5000);
  t.ok(budget < 1000 - 100 - 5, `clamped below the context less the persona and message (${budget})`);
  await t.rejects(fitReply({ ...limits, persona: "p".repeat(1000) }, messages, { client: [] }, 10), ContextOverflow);
  t.equal(
    await fitReply({ ...limits, contextSize: undefined }, messages, { client: [] }, 5000),
    5000,
    "an unknown context: nothing checked",
  );
});
