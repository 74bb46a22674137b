// Which tools a turn's model is offered. Psyche's own (memory) come beside a client's tools: a
// plain chat gets its memories through recall instead, without function documentation in every
// prompt. A named choice is the client's tool alone; "none" offers nothing. The worker offers
// them (conversation/run-turn.ts) and the context check counts them (conversation/context-fit.ts).
import type { ToolChoice, ToolSpec } from "./types.js";

/** Whether Psyche's own tools are offered beside these client tools. */
export function offersServerTools(clientTools: readonly ToolSpec[], choice: ToolChoice | null | undefined): boolean {
  return clientTools.length > 0 && choice !== "none" && typeof choice !== "object";
}

/** The client's tools, then Psyche's own where offered and not named by the client's. */
export function offeredTools(
  clientTools: readonly ToolSpec[],
  choice: ToolChoice | null | undefined,
  serverTools: readonly ToolSpec[] | undefined,
): ToolSpec[] {
  if (!serverTools?.length || !offersServerTools(clientTools, choice)) return [...clientTools];
  const named = new Set(clientTools.map((t) => t.name));
  return [...clientTools, ...serverTools.filter((s) => !named.has(s.name))];
}
