// Prompts a slot had read, kept on disk when the slot is given to another chat, so that the
// conversation or agent session they belong to, coming back, loads its prefix in milliseconds
// instead of reading it again in seconds (docs/decisions.md, "A kept token costs a 32nd"). Each
// file is a sequence's KV state as llama.cpp writes it,
// for this process's model only: the folder is made at start and removed at the end, and
// folders left by processes that died are removed by the next one.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharedPrefix } from "./slots.js";

/** What the cache needs of a context sequence (node-llama-cpp's LlamaContextSequence). */
export interface StateSequence {
  readonly contextTokens: readonly number[];
  saveStateToFile(path: string): Promise<{ fileSize: number }>;
  loadStateFromFile(path: string, risk: { acceptRisk: true }): Promise<void>;
  clearHistory(): Promise<void>;
}

export interface KeptPrompt {
  readonly tokens: readonly number[];
  readonly file: string;
  readonly bytes: number;
  used: number;
  /** Loads under way: a pinned entry is not evicted. */
  pinned: number;
}

const PREFIX = "psyche-prompts-";

/** Removes the folders of processes that are gone (their pid is in the name). */
export function removeStaleFolders(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^psyche-prompts-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    rmSync(join(parent, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class PromptCache {
  private readonly entries: KeptPrompt[] = [];
  private clock = 0;
  private files = 0;
  /** Bytes of state per token, known from the first save. */
  private perToken: number | undefined;
  readonly dir: string;

  /** `maxBytes`: the most the kept states take on disk together; 0 keeps nothing. */
  constructor(
    readonly maxBytes: number,
    parent = tmpdir(),
  ) {
    mkdirSync(parent, { recursive: true });
    removeStaleFolders(parent);
    this.dir = mkdtempSync(join(parent, `${PREFIX}${process.pid}-`));
  }

  get size(): number {
    return this.entries.length;
  }

  /** Bytes of state per token, once a state has been written. */
  get bytesPerToken(): number | undefined {
    return this.perToken;
  }

  get bytes(): number {
    return this.entries.reduce((n, e) => n + e.bytes, 0);
  }

  /** Whether a state of `tokens` tokens would fit in the budget, as far as is known. */
  fits(tokens: number): boolean {
    return this.maxBytes > 0 && tokens > 0 && (this.perToken === undefined || tokens * this.perToken <= this.maxBytes);
  }

  /** The kept prompt that shares the most leading tokens with `prompt`, and how many. */
  best(prompt: readonly number[]): { entry: KeptPrompt; shared: number } | undefined {
    let best: { entry: KeptPrompt; shared: number } | undefined;
    for (const entry of this.entries) {
      const shared = Math.min(sharedPrefix(entry.tokens, prompt), prompt.length);
      if (shared > 0 && (!best || shared > best.shared || (shared === best.shared && entry.used > best.entry.used)))
        best = { entry, shared };
    }
    return best;
  }

  /**
   * Keeps what `sequence` holds. A kept prompt that holds all of it already is only marked used;
   * kept prompts it extends are replaced. The least recently used go when over the budget.
   * Whether a state was written.
   */
  async save(sequence: StateSequence): Promise<boolean> {
    const tokens = [...sequence.contextTokens];
    if (!this.fits(tokens.length)) return false;
    const holder = this.entries.find((e) => e.tokens.length >= tokens.length && sharedPrefix(e.tokens, tokens) === tokens.length);
    if (holder) {
      holder.used = ++this.clock;
      return false;
    }
    const file = join(this.dir, `${++this.files}.state`);
    // A write that fails (a full disk) leaves no part of a file behind.
    const { fileSize } = await sequence.saveStateToFile(file).catch(async (err: unknown) => {
      await unlink(file).catch(() => undefined);
      throw err;
    });
    this.perToken = fileSize / tokens.length;
    for (const old of this.entries.filter((e) => e.pinned === 0 && sharedPrefix(e.tokens, tokens) === e.tokens.length)) this.drop(old);
    this.entries.push({ tokens, file, bytes: fileSize, used: ++this.clock, pinned: 0 });
    this.evict();
    return true;
  }

  /** Replaces what `sequence` holds with `entry`'s state. On failure the sequence is left empty. */
  async load(sequence: StateSequence, entry: KeptPrompt): Promise<void> {
    entry.pinned++;
    try {
      // Emptied first: a load that fails leaves node-llama-cpp counting no tokens, and the
      // sequence must then hold none.
      await sequence.clearHistory();
      await sequence.loadStateFromFile(entry.file, { acceptRisk: true });
      entry.used = ++this.clock;
    } catch (err) {
      this.drop(entry);
      throw err;
    } finally {
      entry.pinned--;
    }
  }

  dispose(): void {
    this.entries.length = 0;
    rmSync(this.dir, { recursive: true, force: true });
  }

  private evict(): void {
    const order = [...this.entries].sort((a, b) => a.used - b.used);
    for (const e of order) {
      if (this.bytes <= this.maxBytes) return;
      if (e.pinned === 0) this.drop(e);
    }
  }

  private drop(entry: KeptPrompt): void {
    const i = this.entries.indexOf(entry);
    if (i === -1) return;
    this.entries.splice(i, 1);
    void unlink(entry.file).catch(() => undefined);
  }
}
