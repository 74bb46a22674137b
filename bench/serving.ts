// Serving measured the same way on any OpenAI-compatible server (Psyche, llama-server): one
// stream, K streams at once, an agent session's next request after a side request, a burst of
// short chats. Streams are read as a client reads them; tokens are the server's own count.
import { request } from "node:http";

export interface StreamRun {
  ttftMs: number;
  tokens: number;
  promptTokens: number;
  /** Tokens after the first, over the time after it. */
  decodeTps: number;
  startedAt: number;
  firstAt: number;
  endedAt: number;
}

type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[] }
  | { role: "tool"; content: string; tool_call_id: string };

/**
 * A POST whose answer is read as it streams, through node:http: fetch (undici) gives up on a body
 * silent for 300 s, and a cold 20k-token prompt on a small CPU is read for longer than that
 * before its first token.
 */
function postStream(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; chunks: AsyncIterable<Buffer> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      // A connection of its own (agent: false): Node 20's global agent keeps sockets alive, and
      // reusing one the server has since closed as idle fails as "socket hang up" (ECONNRESET).
      {
        method: "POST",
        agent: false,
        headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => resolve({ status: res.statusCode ?? 0, chunks: res }),
    );
    req.on("error", reject);
    req.end(body);
  });
}

export async function streamChat(
  url: string,
  messages: Message[],
  maxTokens: number,
  seed: number,
  headers: Record<string, string> = {},
): Promise<StreamRun & { text: string }> {
  const startedAt = performance.now();
  const res = await postStream(
    `${url}/v1/chat/completions`,
    JSON.stringify({
      model: "psyche",
      messages,
      max_tokens: maxTokens,
      temperature: 0.7,
      seed,
      stream: true,
      stream_options: { include_usage: true },
    }),
    headers,
  );
  if (res.status !== 200) {
    let text = "";
    for await (const chunk of res.chunks) text += String(chunk);
    throw new Error(`${url}: ${res.status} ${text}`);
  }
  const decoder = new TextDecoder();
  let buffer = "";
  let firstAt = 0;
  let lastAt = 0;
  let chunks = 0;
  let text = "";
  let usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
  for await (const value of res.chunks) {
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = /^data: (.*)$/m.exec(event)?.[1];
      if (!data || data === "[DONE]") continue;
      const json = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; usage?: typeof usage };
      const content = json.choices?.[0]?.delta?.content;
      if (content) {
        lastAt = performance.now();
        if (!firstAt) firstAt = lastAt;
        chunks++;
        text += content;
      }
      if (json.usage) usage = json.usage;
    }
  }
  const endedAt = performance.now();
  const tokens = usage?.completion_tokens ?? chunks;
  return {
    ttftMs: firstAt - startedAt,
    tokens,
    promptTokens: usage?.prompt_tokens ?? 0,
    decodeTps: lastAt > firstAt ? ((tokens - 1) * 1000) / (lastAt - firstAt) : 0,
    startedAt,
    firstAt,
    endedAt,
    text,
  };
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const TOPICS = ["the harbour", "a kiln", "bread", "the night train", "a letter", "rain", "the garden", "an old map"];
const ask = (i: number): Message[] => [{ role: "user", content: `Tell me about ${TOPICS[i % TOPICS.length]} (${i}).` }];

/** One stream at a time: medians of time to first token and decode rate. */
export async function oneStream(url: string, runs: number, maxTokens: number): Promise<{ ttftMs: number; decodeTps: number }> {
  const rs: StreamRun[] = [];
  for (let i = 0; i < runs; i++) rs.push(await streamChat(url, ask(i), maxTokens, i + 1));
  return { ttftMs: median(rs.map((r) => r.ttftMs)), decodeTps: median(rs.map((r) => r.decodeTps)) };
}

/** The median and quartiles of `xs`. */
export function quartiles(xs: number[]): { q1: number; median: number; q3: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => {
    const i = q * (s.length - 1);
    const lo = Math.floor(i);
    return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (i - lo);
  };
  return { q1: at(0.25), median: at(0.5), q3: at(0.75) };
}

export interface PairedStreams {
  a: { ttftMs: number; decodeTps: number };
  b: { ttftMs: number; decodeTps: number };
  /** b's time to first token minus a's, pair by pair. */
  ttftDiffMs: { q1: number; median: number; q3: number };
  /** b's decode rate over a's, pair by pair. */
  decodeRatio: { q1: number; median: number; q3: number };
}

/**
 * One stream on each of two servers, the same request to both in turn, `runs` times, the first
 * of each pair alternating: on a shared machine a server's first token moves by tens of ms from
 * one moment to the next, so each pair is compared within itself (its difference, its ratio), as
 * the stream benchmark compares HTTP with raw decoding (bench/stream-vs-raw.ts).
 */
export async function pairedStreams(a: string, b: string, runs: number, maxTokens: number): Promise<PairedStreams> {
  const pairs: { a: StreamRun; b: StreamRun }[] = [];
  for (let i = 0; i < runs; i++) {
    const first = i % 2 === 0 ? a : b;
    const one = await streamChat(first, ask(i), maxTokens, i + 1);
    const other = await streamChat(first === a ? b : a, ask(i), maxTokens, i + 1);
    pairs.push(first === a ? { a: one, b: other } : { a: other, b: one });
  }
  const side = (k: "a" | "b") => ({ ttftMs: median(pairs.map((p) => p[k].ttftMs)), decodeTps: median(pairs.map((p) => p[k].decodeTps)) });
  return {
    a: side("a"),
    b: side("b"),
    ttftDiffMs: quartiles(pairs.map((p) => p.b.ttftMs - p.a.ttftMs)),
    decodeRatio: quartiles(pairs.map((p) => p.b.decodeTps / p.a.decodeTps)),
  };
}

export interface ConcurrentResult {
  k: number;
  /** All tokens over the wall time from the first request to the last token. */
  aggregateTps: number;
  ttftMedianMs: number;
  ttftLastMs: number;
  wallMs: number;
}

/** K different chats sent at once. */
export async function concurrent(url: string, k: number, maxTokens: number, offset = 0): Promise<ConcurrentResult> {
  const start = performance.now();
  const rs = await Promise.all(Array.from({ length: k }, (_, i) => streamChat(url, ask(offset + i), maxTokens, offset + i + 1)));
  const wallMs = Math.max(...rs.map((r) => r.endedAt)) - start;
  const ttfts = rs.map((r) => r.firstAt - start);
  return {
    k,
    aggregateTps: (rs.reduce((n, r) => n + r.tokens, 0) * 1000) / wallMs,
    ttftMedianMs: median(ttfts),
    ttftLastMs: Math.max(...ttfts),
    wallMs,
  };
}

/** A system prompt of about `words` words, the same for every server (a coding agent's tools and rules). */
export function agentPrompt(words: number): string {
  const lexicon = [
    "file",
    "tool",
    "read",
    "write",
    "the",
    "agent",
    "must",
    "never",
    "run",
    "tests",
    "edit",
    "path",
    "when",
    "user",
    "asks",
  ];
  let seed = 7;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    out.push(lexicon[seed % lexicon.length]!);
  }
  return `You are a coding agent. ${out.join(" ")}`;
}

export interface SessionResult {
  promptTokens: number;
  coldTtftMs: number;
  /** The session's next request, after a small unrelated request in between. */
  warmTtftMs: number;
  warmShareOfCold: number;
  /** Its request after that, once as many chats at once as there are slots have taken every slot. */
  afterTakenTtftMs: number;
  afterTakenShareOfCold: number;
  /** The human's next message after the agent's loop of tool results (absent from older results). */
  afterLoopTtftMs?: number;
  afterLoopShareOfCold?: number;
  afterLoopPromptTokens?: number;
}

/** Tool results in the session's loop, and the lines of each (some 13 tokens a line on the bench model). */
export const LOOP_STEPS = 4;
const LOOP_LINES = 40;
const toolOutput = (step: number) =>
  Array.from({ length: LOOP_LINES }, (_, k) => `line ${k} of src/f${step}.ts: const x${k} = read(${(k * 7919) % 997});`).join("\n");

/**
 * An agent session's first request (cold), a side request, then its next request (warm); then
 * `slots` chats at once, so that one of them must take the session's slot, and its next request;
 * then a loop of tool results (the agent reading files) and the human's next message. The
 * session's own requests name it as Claude Code's and Codex's do (`conversation`, sent as
 * X-Psyche-Conversation, which llama-server ignores).
 */
export async function agentSession(url: string, words: number, slots: number, opening = "", conversation?: string): Promise<SessionResult> {
  const named: Record<string, string> = conversation ? { "x-psyche-conversation": conversation } : {};
  const system: Message = { role: "system", content: opening + agentPrompt(words) };
  const first: Message[] = [system, { role: "user", content: "List the files." }];
  const cold = await streamChat(url, first, 8, 1, named);
  // A side request between two of the session's (Claude Code sends titles and summaries so).
  await streamChat(url, [{ role: "user", content: "A title for this chat, please." }], 8, 2);
  const second: Message[] = [...first, { role: "assistant", content: cold.text }, { role: "user", content: "Now read the first one." }];
  const warm = await streamChat(url, second, 8, 3, named);
  await Promise.all(Array.from({ length: slots }, (_, i) => streamChat(url, ask(200 + i), 16, 4 + i)));
  const third: Message[] = [...second, { role: "assistant", content: warm.text }, { role: "user", content: "And the second." }];
  const afterTaken = await streamChat(url, third, 8, 4 + slots, named);
  let loop: Message[] = [...third];
  for (let step = 0; step < LOOP_STEPS; step++) {
    const id = `call_${step}`;
    loop = [
      ...loop,
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: `{"path":"src/f${step}.ts"}` } }],
      },
      { role: "tool", tool_call_id: id, content: toolOutput(step) },
    ];
    await streamChat(url, loop, 8, 5 + slots + step, named);
  }
  const human: Message[] = [
    ...loop,
    { role: "assistant", content: "Read them all." },
    { role: "user", content: "Good. Now fix the second." },
  ];
  const afterLoop = await streamChat(url, human, 8, 5 + slots + LOOP_STEPS, named);
  return {
    promptTokens: cold.promptTokens,
    coldTtftMs: cold.ttftMs,
    warmTtftMs: warm.ttftMs,
    warmShareOfCold: warm.ttftMs / cold.ttftMs,
    afterTakenTtftMs: afterTaken.ttftMs,
    afterTakenShareOfCold: afterTaken.ttftMs / cold.ttftMs,
    afterLoopTtftMs: afterLoop.ttftMs,
    afterLoopShareOfCold: afterLoop.ttftMs / cold.ttftMs,
    afterLoopPromptTokens: afterLoop.promptTokens,
  };
}

/** `n` short chats at once: the wall time until the last ends, and the median request's. */
export async function burst(url: string, n: number, maxTokens: number): Promise<{ n: number; wallMs: number; medianMs: number }> {
  const start = performance.now();
  const rs = await Promise.all(Array.from({ length: n }, (_, i) => streamChat(url, ask(i), maxTokens, i + 1)));
  const ends = rs.map((r) => r.endedAt - start);
  return { n, wallMs: Math.max(...ends), medianMs: median(ends) };
}
