// A thought that ends in tool calls, with no reply after it, streams as a thought to its end
// (conversation/run-turn.ts): the turn's last buffered text is the thought's, written at the turn's
// end as a "reasoning" event and carried on the signal that relays it. It was carried as reply
// text, so a streaming client saw the thought's last words as content (gemma4's family test,
// test/engine/family-apis-2.test.ts, on a machine fast enough to end within one write's spacing).
import t from "tap";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { TestEngine } from "../helpers/scripted-engine.js";
import { inProcessPsyche } from "../helpers/in-process.js";
import { sseEvents } from "../helpers/sse-events.js";

const THOUGHT = ["I", " should", " look", " it", " up."];

/**
 * Thinks, then calls a tool: the first piece, written at once, then a pause while the client
 * follows, then the rest and the end within one write's spacing (--stream-flush-ms), so the rest
 * is the turn's last buffered text, relayed by the signal that carries it.
 */
class ThinkThenCall extends TestEngine {
  readonly modelName = "thinker";
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    request.onReasoning?.(THOUGHT[0]!, 1);
    await new Promise((resolve) => setTimeout(resolve, 40));
    for (const piece of THOUGHT.slice(1)) request.onReasoning?.(piece, 1);
    return {
      text: "",
      reasoning: THOUGHT.join(""),
      reasoningTokens: THOUGHT.length,
      finishReason: "tool_calls",
      promptTokens: 9,
      completionTokens: THOUGHT.length + 1,
      toolCalls: [{ name: "get_weather", arguments: JSON.stringify({ city: "Paris" }), problems: [] }],
    };
  }
}

const psyche = await inProcessPsyche(t, {}, { engine: new ThinkThenCall() });
interface Delta {
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: { function?: { name?: string } }[];
}

const tools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];

t.test("streamed: the whole thought as reasoning, no content, then the call", async (t) => {
  for (let i = 0; i < 3; i++) {
    const res = await psyche.request("/v1/chat/completions", {
      body: { model: "psyche", stream: true, tools, messages: [{ role: "user", content: `Weather in Paris? (${i})` }] },
    });
    const deltas = (await sseEvents(res))
      .filter((e) => e.data !== "[DONE]")
      .flatMap((e) => (e.data as { choices: { delta: Delta }[] }).choices.map((c) => c.delta));
    t.equal(deltas.map((d) => d.reasoning_content ?? "").join(""), THOUGHT.join(""));
    t.equal(deltas.map((d) => d.content ?? "").join(""), "");
    t.equal(deltas.flatMap((d) => d.tool_calls ?? []).find((c) => c.function?.name)?.function?.name, "get_weather");
  }
});

t.test("and the stored message agrees", async (t) => {
  const res = await psyche.request("/v1/chat/completions", {
    body: { model: "psyche", tools, messages: [{ role: "user", content: "Weather in Paris?" }] },
  });
  const message = ((await res.json()) as { choices: { message: { content: string | null; reasoning_content?: string } }[] }).choices[0]!
    .message;
  t.equal(message.reasoning_content, THOUGHT.join(""));
  t.notOk(message.content);
});
