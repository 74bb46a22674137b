// The web process's services: what the HTTP API and the MCP endpoint are both built from. A
// process builds them once (processes/roles.ts) and passes them in.
import type { ApiKey } from "./api-keys.js";
import type PgBoss from "pg-boss";
import type { Pool } from "./db/pool.js";
import type { SignalBus } from "./jobs/bus.js";
import type { Logger } from "./log.js";
import type { Embedder } from "./memory/embedder.js";
import type { Memory } from "./memory/memory.js";
import type { ToolSpec } from "./tools/types.js";
import type { ModelDescription } from "./inference/engine.js";
import type { MoodKeeper } from "./mood/mood-keeper.js";
import type { DreamSettings } from "./dreams/settings.js";
import type { AgentSessions } from "./agents/sessions.js";
import type { HookSettings } from "./agents/hooks.js";
import type { TurnTaker } from "./jobs/hand-off.js";

/** The web process's services; built once per process, shared by every request. */
export interface WebServices {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  log: Logger;
  memory: Memory;
  mood: MoodKeeper;
  embedder: Embedder;
  /** The id clients use in `model`. */
  modelId: string;
  /** Default and ceiling for max_tokens. */
  maxTokens: number;
  bodyLimit: number;
  pollMs: number;
  /** When any, /v1/*, /dream/*, /hooks/*, /metrics and /mcp require one of them (src/api-keys.ts). */
  apiKeys: readonly ApiKey[];
  /** Liveness window for inference workers' heartbeats (ms). */
  workerStaleMs: number;
  /** Browser origins besides loopback pages that may use /mcp. */
  mcpAllowedOrigins: readonly string[];
  /** The dream settings' defaults (from the flags); PATCH /dream/config overrides them. */
  dreamDefaults: DreamSettings;
  /** Coding agents' sessions and GHAP (agents/sessions.ts). */
  agents: AgentSessions;
  hooks: HookSettings;
  /** A client silent this long is no longer present (db/sql/clients.ts). */
  presenceTtlSeconds: number;
  /** Aborted when the process begins to stop: endless streams (GET /v1/events) end then, so that they do not hold the server for its grace period. */
  closing?: AbortSignal | undefined;
  /** Set by the HTTP app (http/metrics.ts): a new turn's time to its first text. */
  firstToken?: ((seconds: number) => void) | undefined;
  /** Set by the HTTP app (http/metrics.ts): request fields ignored, by API (http/request-fields.ts). */
  ignoredFields?: ((api: string, fields: readonly string[]) => void) | undefined;
  /** The model's tokenizer, where this process has the model (psyche serve): POST /v1/messages/count_tokens. */
  countTokens?: ((text: string) => Promise<number | undefined>) | undefined;
  /** Tokens of context per conversation of the model that answers: prompts that do not fit are refused (conversation/context-fit.ts). */
  contextSize?: (() => Promise<number | undefined>) | undefined;
  /** Whether the model that answers has a thinking channel, where this process has the model (psyche serve); a thought budget asked of one that has none is named as ignored. */
  thinks?: (() => Promise<boolean | undefined>) | undefined;
  /** The model as Ollama's /api/show describes it, where this process has the model (psyche serve). */
  describeModel?: (() => Promise<ModelDescription | undefined>) | undefined;
  /** Downloads a model into the data directory (Ollama's /api/pull), saying how far it got; resolves to its path. */
  pullModel?:
    ((spec: string, progress: (p: { total: number; completed: number }) => void, signal: AbortSignal) => Promise<string>) | undefined;
  /** The worker's system prompt, counted with every prompt. */
  persona?: string | undefined;
  /** Psyche's own tools, offered beside a client's and counted with its prompt (tools/offered.ts). */
  serverTools?: readonly ToolSpec[] | undefined;
  /** Refuse unknown fields, a max_tokens above the ceiling and other models' names (--strict-params). */
  strictParams: boolean;
  /** The inference worker of this process (psyche serve): a turn it has room for is stored claimed for it and handed over (jobs/hand-off.ts). */
  turnTaker?: TurnTaker | undefined;
}
