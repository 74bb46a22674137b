// A short seeded chat request, as the engine tests ask the tiny model: the same seed gives the
// same reply on a CPU, so a test can compare the engine's ways of getting there.
import type { GenerateRequest } from "../../src/inference/engine.js";

export const seededAsk = (content: string, seed: number, extra: Partial<GenerateRequest> = {}): GenerateRequest => ({
  messages: [
    { role: "system", content: "You are Psyche." },
    { role: "user", content },
  ],
  maxTokens: 32,
  temperature: 0.8,
  seed,
  ...extra,
});
