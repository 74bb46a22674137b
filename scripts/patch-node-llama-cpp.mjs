// Run by `npm install` (postinstall). Two changes to node-llama-cpp 3.22.1's decode loop, each
// idempotent; a version without the lines they replace is left alone, with a warning.
//
// 1. It yields the context's lock between batches. The loop held it for as long as any sequence
//    had tokens queued. With several chats generating at once (Psyche's slots,
//    src/inference/llama-engine.ts), a new chat whose slot must first drop tokens it no longer
//    shares (eraseContextTokenRanges, which takes the same lock) waited until every other chat
//    had finished: measured here, 12 s for a 6-token reply beside two 400-token ones. The loop
//    now ends after each batch and schedules the next one, so the lock's queue (first come,
//    first served) lets the waiting erase in between two batches.
// 2. It adds a batch's sequences in the order of their ids. The context keeps a KV stream per
//    sequence, and llama.cpp then decodes a batch's sequences together only while their ids
//    run consecutively (llama_batch_allocr::split_equal, "accept only increasing sequence ids"):
//    four chats added as 2, 0, 3, 1 were four passes over the weights instead of one. Measured
//    here on the bench model, four streams at once went from 47 to 70 tokens/s with batches
//    gathered whole (src/inference/gather-batch.ts), for which the loop also says, in
//    `_psycheBatchUnderWay`, when a batch is being decoded and sampled, and tells
//    `_psycheOnBatch` how many sequences each batch holds.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const file = join(root, "node_modules", "node-llama-cpp", "dist", "evaluator", "LlamaContext", "LlamaContext.js");

const patches = [
  {
    marker: "psyche: yield the context lock between batches",
    said: "the decode loop yields its lock between batches",
    missing: "a chat may wait for others to finish before it starts",
    before: `                        await decodeTokenBatchItems(currentBatchItems, currentBatchSize);
                        shouldHaveAnotherLoop = this._queuedDecodes.length > 0;`,
    after: (marker) => `                        await decodeTokenBatchItems(currentBatchItems, currentBatchSize);
                        // ${marker} (scripts/patch-node-llama-cpp.mjs)
                        shouldHaveAnotherLoop = false;
                        if (this._queuedDecodes.length > 0)
                            this._scheduleDecode();`,
  },
  {
    marker: "psyche: a batch's sequences in id order",
    said: "a batch's sequences are added in id order",
    missing: "chats generating at once may be decoded one by one",
    before: `                    const { currentBatchItems, currentBatchSize } = fitQueuedDecodesToABatch(orderedQueuedDecodes, this._batchSize);`,
    after: (
      marker,
    ) => `                    const { currentBatchItems, currentBatchSize } = fitQueuedDecodesToABatch(orderedQueuedDecodes, this._batchSize);
                    // ${marker} (scripts/patch-node-llama-cpp.mjs)
                    currentBatchItems.sort((a, b) => a.queuedDecode.sequenceId - b.queuedDecode.sequenceId);
                    this._psycheOnBatch?.(currentBatchItems.length);`,
  },
  {
    marker: "psyche: the batch under way",
    said: "a batch says while it is decoded and sampled",
    missing: "a batch may be gathered while the last one is still sampling",
    // Set inside the try whose finally clears it, so it cannot outlive a failed decode.
    edits: [
      {
        before: `                    try {
                        await decodeTokenBatchItems(currentBatchItems, currentBatchSize);`,
        after: (marker) => `                    try {
                        // ${marker} (scripts/patch-node-llama-cpp.mjs)
                        this._psycheBatchUnderWay = true;
                        await decodeTokenBatchItems(currentBatchItems, currentBatchSize);`,
      },
      {
        before: `                    finally {
                        decodeLock?.dispose();
                        preventDisposalHandle.dispose();`,
        after: () => `                    finally {
                        this._psycheBatchUnderWay = false;
                        decodeLock?.dispose();
                        preventDisposalHandle.dispose();`,
      },
    ],
  },
];

if (!existsSync(file)) {
  console.warn(`patch-node-llama-cpp: ${file} is missing; nothing patched`);
} else {
  let source = readFileSync(file, "utf8");
  const original = source;
  for (const p of patches) {
    if (source.includes(p.marker)) continue;
    const edits = p.edits ?? [{ before: p.before, after: p.after }];
    if (edits.every((e) => source.includes(e.before))) {
      for (const e of edits) source = source.replace(e.before, e.after(p.marker));
      console.log(`patch-node-llama-cpp: ${p.said}`);
    } else {
      console.warn(`patch-node-llama-cpp: this node-llama-cpp's decode loop is not the one the patch knows; left alone (${p.missing})`);
    }
  }
  if (source !== original) writeFileSync(file, source);
}
