// The APIs' reasoning controls as one thought budget (TurnRequest.thinking): OpenAI's
// reasoning_effort (chat) and reasoning.effort (Responses), Anthropic's thinking. The engine
// holds the thought to it with node-llama-cpp's thought budget, and turns thinking off (budget
// 0) by the family's own switch where it has one (inference/llama-engine.ts).
import { z } from "zod";
import type { TurnRequest } from "../conversation/turn-request.js";
import type { ReasoningEffort as FamilyEffort } from "../inference/engine.js";

export const ReasoningEffortSchema = z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]);
type ReasoningEffort = z.infer<typeof ReasoningEffortSchema>;

/**
 * Thought tokens per effort. "high" and above leave the family's default (no budget), as a
 * reasoning model's own server does; "none" turns thinking off. The figures are what a short
 * answer's thought takes at each level, not measured on a model here.
 */
const EFFORT_BUDGET: Record<ReasoningEffort, number | null> = {
  none: 0,
  minimal: 256,
  low: 1024,
  medium: 4096,
  high: null,
  xhigh: null,
};

/** Anthropic's `thinking`: enabled with a budget, disabled, or adaptive (the model decides). */
export const AnthropicThinkingSchema = z.union([
  z.object({ type: z.literal("enabled"), budget_tokens: z.number().int().nonnegative() }).passthrough(),
  z.object({ type: z.literal("disabled") }).passthrough(),
  z.object({ type: z.literal("adaptive") }).passthrough(),
]);

export const ResponsesReasoningSchema = z
  .object({ effort: ReasoningEffortSchema.nullish(), summary: z.string().nullish(), generate_summary: z.string().nullish() })
  .passthrough();

/** The effort a family that renders one (gpt-oss) is told: its three levels, the nearest. */
const FAMILY_EFFORT: Record<ReasoningEffort, FamilyEffort | null> = {
  none: "low",
  minimal: "low",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
};

/** An effort as a thought budget and the family's own effort; null where none was asked. */
export function effortThinking(effort: ReasoningEffort | null | undefined, field: string): TurnRequest["thinking"] {
  return effort ? { budget: EFFORT_BUDGET[effort], field, effort: FAMILY_EFFORT[effort] } : null;
}

/** A thought budget as the nearest of a family's efforts (Anthropic's budget_tokens, for gpt-oss). */
const budgetEffort = (budget: number): FamilyEffort =>
  budget <= EFFORT_BUDGET.low! ? "low" : budget <= EFFORT_BUDGET.medium! ? "medium" : "high";

export function anthropicThinking(thinking: z.infer<typeof AnthropicThinkingSchema> | null | undefined): TurnRequest["thinking"] {
  if (!thinking) return null;
  const budget = thinking.type === "enabled" ? thinking.budget_tokens : thinking.type === "disabled" ? 0 : null;
  return { budget, field: "thinking", effort: budget === null ? null : budgetEffort(budget) };
}
