// The soak's clients: each keeps a conversation going (streamed and whole replies), stores and
// searches memories, and now and then sends a request that must be refused. A stream cut by a
// killed web process is resumed from its last event id once a web process answers again.

/** What the clients saw, for the invariant checks (bench/soak/invariants.ts). */
export interface ClientLog {
  /** Replies read to the end: the turn id and the text as the client assembled it. */
  replies: { turnId: string; text: string; streamed: boolean; resumed: boolean }[];
  /** Streams or requests given up on (the turn may still have finished in the database). */
  abandoned: number;
  /** Requests that never reached a web process (it was down). */
  refused: number;
  memoriesStored: number;
  searches: number;
  /** Bad requests answered 400, as they must be. */
  rejected: number;
  /** Bad requests answered otherwise (a defect). */
  wronglyAccepted: number;
  /** Why requests failed, counted by reason (a status and the error's message, or the fetch error). */
  failures: Record<string, number>;
}

/** Every bad request carries this; the database must never hold it. */
export const REJECTED_MARKER = "SOAK-REJECTED";

export function emptyLog(): ClientLog {
  return { replies: [], abandoned: 0, refused: 0, memoriesStored: 0, searches: 0, rejected: 0, wronglyAccepted: 0, failures: {} };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request answered otherwise than `expected`: its status and its error's message. */
async function unexpected(what: string, res: Response): Promise<Error> {
  const body = await res.text().catch(() => "");
  let message = body.slice(0, 160);
  try {
    message = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    // not JSON: the text as it came
  }
  return new Error(`${what} answered ${res.status}: ${message}`);
}

/** Reads an SSE body; returns the text, the last event id, and whether [DONE] came. */
async function readEvents(res: Response, into: { text: string; lastId: number }): Promise<boolean> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buffered += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n\n")) !== -1) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let id: number | undefined;
      let data = "";
      for (const line of event.split("\n")) {
        if (line.startsWith("id:")) id = Number(line.slice(3).trim());
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data === "[DONE]") return true;
      const parsed = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; error?: { message: string } };
      if (parsed.error) throw new Error(`stream error: ${parsed.error.message}`);
      into.text += parsed.choices?.[0]?.delta?.content ?? "";
      if (id !== undefined) into.lastId = id;
    }
  }
}

export interface ClientOptions {
  url: string;
  index: number;
  /** Stop starting new work once this aborts; work in flight is seen through. */
  signal: AbortSignal;
  log: ClientLog;
  /** How long a cut stream keeps trying to resume before it is given up. */
  resumeForMs?: number;
}

/** One client's loop until `signal` aborts. */
export async function runClient(o: ClientOptions): Promise<void> {
  const conversation = `soak-${o.index}`;
  let n = 0;
  while (!o.signal.aborted) {
    n++;
    // Each client's first request is a bad one, so every soak checks refusals, however few
    // requests a short one gets through; then one in ten.
    const roll = n === 1 ? 1 : Math.random();
    try {
      if (roll < 0.5) await streamedChat(o, conversation, n);
      else if (roll < 0.65) await wholeChat(o, conversation, n);
      else if (roll < 0.8) await storeMemory(o, n);
      else if (roll < 0.9) await search(o, n);
      else await badRequest(o, n);
    } catch (err) {
      o.log.refused++;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const reason = `${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ""}`.slice(0, 240);
      o.log.failures[reason] = (o.log.failures[reason] ?? 0) + 1;
      await sleep(200);
    }
    await sleep(Math.random() * 300);
  }
}

const chatBody = (o: ClientOptions, n: number, stream: boolean) =>
  JSON.stringify({
    model: "psyche",
    messages: [{ role: "user", content: `client ${o.index}, message ${n}: tell me something` }],
    max_tokens: 8 + Math.floor(Math.random() * 56),
    stream,
  });

async function streamedChat(o: ClientOptions, conversation: string, n: number): Promise<void> {
  const res = await fetch(`${o.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-psyche-conversation": conversation },
    body: chatBody(o, n, true),
  });
  if (res.status !== 200) throw await unexpected("chat", res);
  const turnId = res.headers.get("x-psyche-turn")!;
  const got = { text: "", lastId: 0 };
  let resumed = false;
  let done = await readEvents(res, got).catch(() => false);
  const giveUpAt = Date.now() + (o.resumeForMs ?? 90_000);
  while (!done && Date.now() < giveUpAt) {
    // Cut: the web process died. Another (or the restarted one) relays the rest.
    resumed = true;
    await sleep(250);
    try {
      const again = await fetch(`${o.url}/v1/turns/${turnId}/events?after=${got.lastId}`);
      if (again.status === 200) done = await readEvents(again, got).catch(() => false);
    } catch {
      // still down
    }
  }
  if (done) o.log.replies.push({ turnId, text: got.text, streamed: true, resumed });
  else o.log.abandoned++;
}

async function wholeChat(o: ClientOptions, conversation: string, n: number): Promise<void> {
  const res = await fetch(`${o.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-psyche-conversation": conversation },
    body: chatBody(o, n, false),
  });
  if (res.status !== 200) throw await unexpected("chat", res);
  const body = (await res.json()) as { choices: { message: { content: string | null } }[] };
  o.log.replies.push({
    turnId: res.headers.get("x-psyche-turn")!,
    text: body.choices[0]!.message.content ?? "",
    streamed: false,
    resumed: false,
  });
}

async function storeMemory(o: ClientOptions, n: number): Promise<void> {
  const res = await fetch(`${o.url}/v1/memories`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: `client ${o.index} fact ${n}: the lamp is ${n % 7} steps from the door` }),
  });
  // 201 stored; 200 when it reinforced a memory it matched (routes/memories.ts).
  if (res.status !== 201 && res.status !== 200) throw await unexpected("store", res);
  o.log.memoriesStored++;
}

async function search(o: ClientOptions, n: number): Promise<void> {
  const res = await fetch(`${o.url}/v1/memories/search?q=${encodeURIComponent(`lamp door ${n % 7}`)}&k=5`);
  if (res.status !== 200) throw await unexpected("search", res);
  await res.json();
  o.log.searches++;
}

/** A chat the server must refuse (max_tokens below 1) with the marker in its message. */
async function badRequest(o: ClientOptions, n: number): Promise<void> {
  const res = await fetch(`${o.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-psyche-conversation": `soak-${o.index}` },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: `${REJECTED_MARKER} ${n}` }], max_tokens: -1 }),
  });
  await res.text();
  if (res.status === 400) o.log.rejected++;
  else o.log.wronglyAccepted++;
}
