// POST /v1/completions, OpenAI's legacy text completions, for the parts Psyche serves.
import { z } from "zod";
import { LogitBiasSchema, PenaltySchema } from "../../tools/schemas.js";

const onePrompt = "send one prompt, as text: this server completes one prompt per request";

export const CompletionRequestSchema = z.object({
  model: z.string({ error: "model is required" }).min(1, "model is required"),
  prompt: z.union([z.string(), z.array(z.string(), { error: onePrompt }).length(1, onePrompt)], { error: onePrompt }),
  suffix: z.string().nullish(),
  max_tokens: z.number().int().nonnegative().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  n: z.literal(1, { error: "n must be 1: this server generates one choice per request" }).nullish(),
  best_of: z.literal(1, { error: "best_of must be 1: this server generates one choice per request" }).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  echo: z.boolean().nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
  seed: z.number().int().nullish(),
  presence_penalty: PenaltySchema.nullish(),
  frequency_penalty: PenaltySchema.nullish(),
  logit_bias: LogitBiasSchema.nullish(),
  logprobs: z.literal(0, { error: "logprobs are not available from this server: its engine gives no token probabilities" }).nullish(),
  // Accepted because it cannot change the reply.
  user: z.string().optional(),
});
export type CompletionRequestBody = z.infer<typeof CompletionRequestSchema>;

/** OpenAI's max_tokens default for text completions. */
export const DEFAULT_COMPLETION_TOKENS = 16;
