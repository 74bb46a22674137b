// The messages between the main thread and the embedding threads (workers/threads/embed.ts).
import { z } from "zod";

/** What a thread embeds with: the built-in lexical embedder or a GGUF file. */
export const EmbedSpecSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("lexical") }),
  z.object({ kind: z.literal("gguf"), path: z.string().min(1), name: z.string().min(1) }),
]);
export type EmbedSpec = z.infer<typeof EmbedSpecSchema>;

export const EmbedTaskSchema = z.object({
  texts: z.array(z.string()),
  /** Int32Array over it: set [0] to 1 to stop the task between two texts. */
  cancel: z.instanceof(SharedArrayBuffer).optional(),
});
export type EmbedTask = z.infer<typeof EmbedTaskSchema>;

export interface EmbedTaskResult {
  /** One unit-length vector per text, in order; fewer when cancelled. */
  vectors: Float32Array[];
  cancelled: boolean;
}
