// What reading a prompt's tokens and loading a kept state (inference/prompt-cache.ts) cost on
// this machine, as the engine measures them, so that a kept prompt is loaded whenever that is
// quicker than reading what it holds beyond a slot's prefix: on a CPU a load pays for a few
// tokens, which a fixed minimum gain left to be read, and on a GPU only for many more
// (docs/decisions.md, "A kept prompt is loaded once loads are measured to pay").
import { LOAD_MIN_GAIN } from "./slots.js";

/** Recent measures kept of each kind; their median is used. */
const SAMPLES = 9;

/** Reads of fewer tokens say more about a step's fixed costs than about reading. */
export const MIN_READ_TOKENS = 4;

/**
 * A load must save at least this many times what loads are measured to cost: a state's
 * per-byte rate is measured on whole loads of various sizes, and a token's reading on whole
 * prompts.
 */
export const LOAD_PAYBACK = 2;

export class StateCosts {
  /** Milliseconds per token read. */
  private readonly reads: number[] = [];
  /** Milliseconds per byte of state loaded, and written. */
  private readonly loads: number[] = [];
  private readonly saves: number[] = [];

  /** A prompt's `tokens` read in `ms`, with nothing else generating. */
  noteRead(tokens: number, ms: number): void {
    if (tokens >= MIN_READ_TOKENS && ms > 0) keep(this.reads, ms / tokens);
  }

  noteLoad(bytes: number, ms: number): void {
    if (bytes > 0 && ms >= 0) keep(this.loads, ms / bytes);
  }

  noteSave(bytes: number, ms: number): void {
    if (bytes > 0 && ms >= 0) keep(this.saves, ms / bytes);
  }

  /** The medians in use: milliseconds per token read, and per byte of state loaded and written. */
  get measured(): { readMsPerToken?: number; loadMsPerByte?: number; saveMsPerByte?: number } {
    const [read, load, save] = [median(this.reads), median(this.loads), median(this.saves)];
    return {
      ...(read !== undefined ? { readMsPerToken: read } : {}),
      ...(load !== undefined ? { loadMsPerByte: load } : {}),
      ...(save !== undefined ? { saveMsPerByte: save } : {}),
    };
  }

  /**
   * How many more of a prompt's tokens a kept state of `bytes` must hold than a slot does to be
   * loaded in its place. Until a read and a write or load have been measured, LOAD_MIN_GAIN.
   */
  minLoadGain(bytes: number): number {
    const read = median(this.reads);
    // Before the first load, a write's rate stands for it: writing is the slower of the two.
    const load = median(this.loads) ?? median(this.saves);
    if (read === undefined || load === undefined) return LOAD_MIN_GAIN;
    return Math.max(1, Math.ceil((LOAD_PAYBACK * load * bytes) / read));
  }
}

function keep(samples: number[], value: number): void {
  samples.push(value);
  if (samples.length > SAMPLES) samples.shift();
}

function median(samples: readonly number[]): number | undefined {
  if (!samples.length) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
