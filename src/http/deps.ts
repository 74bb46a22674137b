import type PgBoss from "pg-boss";
import type { Pool } from "../db/pool.js";
import type { SignalBus } from "../jobs/bus.js";
import type { Logger } from "../log.js";
import type { Embedder } from "../memory/embedder.js";
import type { Memory } from "../memory/memory.js";
import type { MoodKeeper } from "../mood/mood-keeper.js";
import type { DreamSettings } from "../dreams/settings.js";

/** What the HTTP layer is built from; a web process builds these once and passes them in. */
export interface HttpDeps {
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
  /** When set, /v1/* requires `Authorization: Bearer <apiKey>`. */
  apiKey?: string | undefined;
  /** Liveness window for inference workers' heartbeats (ms). */
  workerStaleMs: number;
  /** Browser origins besides loopback pages that may use /mcp. */
  mcpAllowedOrigins: readonly string[];
  /** The dream settings' defaults (from the flags); PATCH /dream/config overrides them. */
  dreamDefaults: DreamSettings;
}
