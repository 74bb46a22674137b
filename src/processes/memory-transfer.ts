// psyche memory export|import: a running server's memories to NDJSON and back, over its HTTP
// API (GET /v1/memories/export, POST /v1/memories/import), so it works the same against
// `psyche serve`, a background server, or one on another machine (--server-url).
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Config } from "../config.js";
import { UserError } from "../errors.js";

/** What one import request carries at most: well under the default body limit (1 MB). */
const PART_BYTES = 256 * 1024;
const PART_LINES = 500;

interface Target {
  url: string;
  headers: Record<string, string>;
}

function target(config: Config): Target {
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const url = (config.serverUrl ?? `http://${host}:${config.port}`).replace(/\/+$/, "");
  return { url, headers: config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {} };
}

async function request(t: Target, path: string, init: RequestInit = {}): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${t.url}${path}`, { ...init, headers: { ...t.headers, ...(init.headers as Record<string, string>) } });
  } catch (err) {
    throw new UserError(
      `no Psyche server answers at ${t.url} (${(err as Error).cause ?? (err as Error).message}): start one (psyche serve, psyche start) or name it with --server-url`,
    );
  }
  if (res.ok || res.status === 413) return res;
  const body = await res.text();
  let message = body;
  try {
    message = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? body;
  } catch {
    // not JSON: the text as it came
  }
  throw new UserError(`${t.url}${path} answered ${res.status}: ${message}`);
}

/** Writes every memory to `out` (stdout without it); returns how many lines. */
export async function exportCommand(config: Config, opts: { out?: string | undefined; embeddings: boolean }): Promise<number> {
  const t = target(config);
  const res = await request(t, `/v1/memories/export${opts.embeddings ? "?embeddings=true" : ""}`);
  let lines = 0;
  const counted = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  counted.on("data", (chunk: Buffer) => {
    for (const byte of chunk) if (byte === 10) lines++;
  });
  await pipeline(counted, opts.out ? createWriteStream(opts.out) : process.stdout);
  return lines;
}

export interface ImportSummary {
  added: number;
  skipped: number;
  refused: { line: number; error: string }[];
}

/**
 * Sends `file` in parts of whole lines, each numbered from where it starts in the file, with a
 * progress bar on a terminal (`progress` gets the fraction read).
 */
export async function importCommand(
  config: Config,
  file: string,
  progress?: (fraction: number, lines: number) => void,
): Promise<ImportSummary> {
  const t = target(config);
  const size = await stat(file).then(
    (s) => s.size,
    (err: NodeJS.ErrnoException) => {
      throw new UserError(`cannot read ${file}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
    },
  );
  const total: ImportSummary = { added: 0, skipped: 0, refused: [] };
  const send = async (lines: string[], first: number): Promise<void> => {
    const res = await request(t, `/v1/memories/import?first_line=${first}`, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson" },
      body: lines.join("\n"),
    });
    if (res.status === 413) {
      await res.body?.cancel();
      if (lines.length === 1) total.refused.push({ line: first, error: "larger than the server's body limit (PSYCHE_BODY_LIMIT)" });
      else for (const [i, line] of lines.entries()) await send([line], first + i);
      return;
    }
    const report = (await res.json()) as ImportSummary;
    total.added += report.added;
    total.skipped += report.skipped;
    total.refused.push(...report.refused);
  };
  let part: string[] = [];
  let bytes = 0;
  let read = 0;
  let lineNo = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    lineNo++;
    part.push(line);
    bytes += Buffer.byteLength(line) + 1;
    if (bytes >= PART_BYTES || part.length >= PART_LINES) {
      await send(part, lineNo - part.length + 1);
      read += bytes;
      progress?.(size ? Math.min(1, read / size) : 1, lineNo);
      part = [];
      bytes = 0;
    }
  }
  if (part.length) await send(part, lineNo - part.length + 1);
  progress?.(1, lineNo);
  return total;
}

/** A one-line bar for stderr on a terminal. */
export function progressBar(file: string): (fraction: number, lines: number) => void {
  return (fraction, lines) => {
    const width = 30;
    const done = Math.round(fraction * width);
    process.stderr.write(`\r${file} [${"#".repeat(done)}${"-".repeat(width - done)}] ${Math.round(fraction * 100)}% ${lines} lines`);
    if (fraction >= 1) process.stderr.write("\n");
  };
}
