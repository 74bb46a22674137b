// Run by `npm install` (postinstall). node-llama-cpp 3.22.1 decodes the sequences of a context
// in a loop that holds the context's lock for as long as any sequence has tokens queued. With
// several chats generating at once (Psyche's slots, src/inference/llama-engine.ts), a new chat
// whose slot must first drop tokens it no longer shares (eraseContextTokenRanges, which takes
// the same lock) waited until every other chat had finished: measured here, 12 s for a 6-token
// reply beside two 400-token ones. The patch ends the loop after each batch and schedules the
// next one, so the lock's queue (first come, first served) lets the waiting erase in between
// two batches. Idempotent; a version without the line is left alone, with a warning.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const file = join(root, "node_modules", "node-llama-cpp", "dist", "evaluator", "LlamaContext", "LlamaContext.js");
export const MARKER = "psyche: yield the context lock between batches";

const before = `                        await decodeTokenBatchItems(currentBatchItems, currentBatchSize);
                        shouldHaveAnotherLoop = this._queuedDecodes.length > 0;`;
const after = `                        await decodeTokenBatchItems(currentBatchItems, currentBatchSize);
                        // ${MARKER} (scripts/patch-node-llama-cpp.mjs)
                        shouldHaveAnotherLoop = false;
                        if (this._queuedDecodes.length > 0)
                            this._scheduleDecode();`;

if (!existsSync(file)) {
  console.warn(`patch-node-llama-cpp: ${file} is missing; nothing patched`);
} else {
  const source = readFileSync(file, "utf8");
  if (source.includes(MARKER)) {
    // already patched
  } else if (source.includes(before)) {
    writeFileSync(file, source.replace(before, after));
    console.log("patch-node-llama-cpp: the decode loop yields its lock between batches");
  } else {
    console.warn(
      "patch-node-llama-cpp: this node-llama-cpp's decode loop is not the one the patch knows; left alone (a chat may wait for others to finish before it starts)",
    );
  }
}
