// Where a slot's read of a prompt starts, on the CPU. llama.cpp's flash attention, which
// node-llama-cpp leaves to llama.cpp ("auto") and which is on there, reads a batch of 64 tokens
// or more in tiles, one matrix product per tile, and a smaller batch token by token, each over
// the whole context (use_tiled and GGML_FA_TILE_Q in
// node_modules/node-llama-cpp/llama/llama.cpp/ggml/src/ggml-cpu/). After a long prompt that
// costs an agent's warm turn most of its time: on the tiny model with 16,400 tokens held, reading
// 37 new tokens took 100 ms and 64 took 24 (docs/benchmarks.md, "A warm turn read in tiles").
// So a short read steps back into what the slot holds and reads the last few tokens again, to
// make one tile. Below an eighth of a tile the step back costs more than it saves (8 tokens read
// row by row took as long as 64 in a tile).

/** Tokens of a batch flash attention reads in tiles on the CPU (GGML_FA_TILE_Q). */
export const READ_TILE = 64;

/**
 * Where a read of `toRead` new tokens after the `held` tokens a slot keeps should start: `held`,
 * or as far back as makes the read one tile, when the read is short but not too short to gain,
 * and the slot holds a tile or more (less is read row by row in no time).
 */
export function tiledReadStart(held: number, toRead: number, tile = READ_TILE): number {
  if (toRead < tile / 8 || toRead >= tile || held < tile) return held;
  return held - (tile - toRead);
}
