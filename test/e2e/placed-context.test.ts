/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// An agent's conversation on the real stack (the tiny model, memories on): the mood and memories
// a turn was answered with stay before the user message they were recalled for
// (conversation/run-turn.ts, buildPrompt), so when the human speaks again after a loop of tool
// results, the model's slot still holds the whole loop and reads only what is new. Before, the
// memories moved to the new message, and everything after their old place was read again. The
// families' templates each render the kept contexts as system messages inside the transcript.
import t from "tap";
import { startPsyche } from "../helpers/psyche.js";
import { familyModel } from "../helpers/family-engine.js";

const conversation = "placed-context-agent";

const system = `You are a careful coding agent. ${Array.from({ length: 25 }, (_, i) => `Rule ${i}: check the work twice.`).join(" ")}`;
/** A tool's result of some hundreds of tokens, different for each step. */
const output = (step: number) => Array.from({ length: 20 }, (_, i) => `src/file${step}_${i}.ts:${(i * 7919) % 997}: ok`).join("\n");

async function chatAt(url: string, messages: unknown[]): Promise<{ prompt: number; cached: number }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-psyche-conversation": conversation },
    body: JSON.stringify({ model: "psyche", messages, max_tokens: 4, temperature: 0 }),
  });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(body)}`);
  return { prompt: body.usage.prompt_tokens, cached: body.usage.prompt_tokens_details.cached_tokens };
}

for (const family of ["chatml", "qwen3", "gpt-oss", "gemma4"])
  t.test(`${family}: after an agent's loop, the human's next message reads only what is new`, async (t) => {
    // The families' models are made once per checkout and shared (helpers/family-engine.ts).
    const model = family === "chatml" ? "tiny" : await familyModel(family);
    const psyche = await startPsyche(t, { model, parallel: 1, maxTokens: 8 });
    const chat = (messages: unknown[]) => chatAt(psyche.url, messages);
    const transcript: unknown[] = [
      { role: "system", content: system },
      { role: "user", content: "Find the failing file and fix it." },
    ];
    const turns = [await chat(transcript)];
    for (const step of [1, 2, 3]) {
      const id = `call_${step}`;
      transcript.push(
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id, type: "function", function: { name: "grep", arguments: `{"step":${step}}` } }],
        },
        { role: "tool", tool_call_id: id, content: output(step) },
      );
      turns.push(await chat(transcript));
    }
    transcript.push({ role: "assistant", content: "The third file fails." }, { role: "user", content: "Good. Now run the tests." });
    turns.push(await chat(transcript));

    // Each request held everything the one before it read (a few tokens of slack where the reply's
    // text meets its header). As shipped before, the last turn's cached share was the system prompt's.
    for (let i = 1; i < turns.length; i++)
      t.ok(
        turns[i]!.cached >= turns[i - 1]!.prompt - 8,
        `turn ${i}: ${turns[i]!.cached} of ${turns[i]!.prompt} tokens held, after a prompt of ${turns[i - 1]!.prompt}`,
      );
    const last = turns.at(-1)!;
    t.ok(last.prompt - turns[3]!.prompt > 0 && last.prompt > 800, "the loop is in the last prompt");

    const placed = await psyche.db.pool.query(
      `select content, context from messages where conversation_id = $1 and role = 'user' and superseded_at is null order by position`,
      [conversation],
    );
    t.equal(placed.rows.length, 2);
    t.ok(
      placed.rows.every((r) => typeof r.context === "string" && r.context.length > 0),
      "each of the human's messages keeps the context it was answered with",
    );
  });
