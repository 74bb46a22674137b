// One schema over environment variables and command-line flags (flags win).
import { availableParallelism, homedir } from "node:os";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UserError, type UserErrorOptions } from "./errors.js";
import { type ApiKey, parseApiKeys } from "./api-keys.js";

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
const weight = z.coerce.number().min(0).max(100);
const unitInterval = z.coerce.number().min(0).max(1);
const signedUnit = z.coerce.number().min(-1).max(1);
const bool = z
  .union([z.boolean(), z.enum(["1", "0", "true", "false", "yes", "no"])])
  .transform((v) => v === true || v === "1" || v === "true" || v === "yes");

export const ConfigSchema = z.object({
  /** A JSON file of settings, keyed by the flags' names (`{"port": 9000, "data-dir": "..."}`): under the environment and the flags. */
  config: z.string().min(1).optional(),
  /** The running server `psyche mcp` bridges to; default: http://<host>:<port> (127.0.0.1 for a wildcard host). */
  serverUrl: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  /** Address the HTTP server binds to. Anything but loopback requires an API key. */
  host: z.string().min(1).default("127.0.0.1"),
  /** HTTP port; 0 picks a free one. */
  port: port.default(8741),
  /** Where the embedded database and downloaded/generated models live. */
  dataDir: z.string().min(1).default(join(homedir(), ".psyche")),
  /** Port of the embedded Postgres (`psyche serve` without DATABASE_URL, and `psyche db`). */
  dbPort: port.default(8742),
  /** Any Postgres with pgvector. Unset: the embedded database in the data directory. */
  databaseUrl: z.string().url().optional(),
  /** A GGUF path, an `hf:` URI, or `tiny` (a generated random model, for trying things offline). */
  // A family's test model (Qwen3's tokenizer and template, a 32k context): a coding agent's
  // prompt fits, and thinking and tool calls go through a real family's wrapper (docs/models.md).
  model: z.string().min(1).default("tiny-qwen3"),
  /** The id clients put in `model`; `/v1/models` lists it. */
  modelId: z.string().min(1).default("psyche"),
  /** CPU threads for inference; default: the number of cores. */
  threads: positiveInt.default(availableParallelism()),
  /**
   * Tokens of context per sequence. Unset: the model's trained length, as much of it as the
   * machine's memory holds (node-llama-cpp measures), so that a coding agent's long prompt fits.
   */
  contextSize: positiveInt.optional(),
  /** Tokens the model reads per batch (unset: node-llama-cpp's default). */
  batchSize: positiveInt.max(8192).optional(),
  /**
   * Chats generated at once (slots: sequences of one context, decoded in one batch). Each slot
   * holds a context of its own, so memory for the context grows with it. Unset: 4 on a CPU, as
   * many as the free memory holds on a GPU (inference/choose-parallel.ts).
   */
  parallel: positiveInt.max(64).optional(),
  /**
   * MiB of disk for the slot states of prompts given up to other chats, so a conversation or an
   * agent session that comes back loads its prefix instead of reading it again
   * (inference/prompt-cache.ts), in the system's temporary folder; 0 keeps none.
   */
  promptCacheMb: nonNegativeInt.default(2048),
  /**
   * A batch's chats sampled in one native call instead of one each, and in the decode's own call
   * (a step one hop to libuv's pool, not two), where the engine npm install built runs (its addon
   * is patched; inference/llama-internals.ts); the prebuilt binary samples one call each regardless. On by default: as the server runs (one libuv thread, every core to
   * the model), chats at once decoded 1.5-1.9 times as fast on two cores (docs/benchmarks.md).
   */
  sampleInOneCall: bool.default(true),
  /**
   * Decodes made on the JavaScript thread instead of in a hop to libuv's pool, where the engine
   * npm install built runs (its addon is patched; the prebuilt binary always hops). Off: the
   * engine alone decoded the tiny model's one stream some 1.1 times as fast so, but the server
   * does its database and HTTP work on that thread, beside the decodes in the hop and after them
   * here: one stream read 30% of llama-server's against 73% (docs/benchmarks.md).
   */
  decodeOnMainThread: bool.default(false),
  /**
   * The most steps of a chat generating alone decoded and sampled in one native call, where the
   * engine npm install built runs (its addon is patched; inference/llama-internals.ts,
   * decodeAhead); 0 or 1: one step a call. A small model's step, or a GPU's, is shorter than the
   * hop to libuv's pool and the decode loop's JavaScript around it (docs/benchmarks.md).
   */
  decodeAhead: z.coerce.number().int().min(0).max(256).default(16),
  /**
   * A batch decoded while this process's JavaScript thread takes a turn in (reads, checks and
   * stores it) or readies a slot runs on one thread fewer, where the model's threads are at
   * least the cores (inference/core-share.ts): that thread's work and the model's threads
   * otherwise outnumber the cores. On two cores, four chats at once had their last first token
   * sooner, a lone stream's decode as before (docs/benchmarks.md).
   */
  yieldCore: bool.default(true),
  /**
   * `auto` (the default: the GPU npm install built for, else the CPU), `false` (the CPU),
   * `cuda`, `vulkan`, `metal`. Auto, because scripts/build-engine.mjs builds the GPU engine
   * where it finds one, and a user who waited for that build expects it used.
   */
  gpu: z.enum(["false", "auto", "cuda", "vulkan", "metal"]).default("auto"),
  /**
   * Browser origins besides loopback pages that may use /mcp, comma-separated
   * (e.g. "https://app.example.com"); other origins get 403.
   */
  mcpAllowedOrigins: z
    // A list too, so a loaded Config can be loaded again with changes.
    .union([z.string(), z.array(z.string()).transform((a) => a.join(","))])
    .default("")
    .transform((s, ctx) => {
      const origins = s
        .split(",")
        .map((o) => o.trim())
        .filter(Boolean);
      for (const o of origins) {
        if (!URL.canParse(o) || new URL(o).origin !== o)
          ctx.addIssue({ code: "custom", message: `'${o}' is not an origin like https://example.com (scheme, host, optional port)` });
      }
      return origins;
    }),
  /** Required when binding to anything but loopback. Opens every scope; what Psyche's own clients send. */
  apiKey: z.string().min(8, "must be at least 8 characters").optional(),
  /** More keys, space-separated: KEY (every scope) or KEY=scope1,scope2 (only those: src/api-keys.ts). */
  apiKeys: z
    .unknown()
    .optional()
    .transform((spec, ctx): ApiKey[] => {
      // A loaded config loads again: its keys are parsed already.
      if (spec === undefined || Array.isArray(spec)) return (spec as ApiKey[] | undefined) ?? [];
      try {
        return parseApiKeys(String(spec));
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Largest request body accepted, in bytes. */
  bodyLimit: positiveInt.default(1_000_000),
  /** Default and ceiling for max_tokens (a request above it is clamped to it). */
  /**
   * Default and ceiling of a reply's tokens. High by default: a reply also stops at what the
   * context leaves (conversation/context-fit.ts), and an agent's tool call that writes a file
   * is long; a ceiling of a thousand cut such calls off.
   */
  maxTokens: positiveInt.default(32768),
  /**
   * Refuse, with a 400 or 404, what is otherwise served: request fields this server does not
   * know (otherwise ignored and named), a max_tokens above --max-tokens (otherwise clamped),
   * and another model's name (otherwise answered by the one model).
   */
  strictParams: bool.default(false),
  /** Fallback polling interval for jobs and events when no signal arrives (ms). */
  pollMs: positiveInt.default(250),
  /**
   * The least time between two pieces of one stream's text (each is a row in turn_events, which
   * a client's stream relays): more often reads smoother and takes more of the model's cores
   * (src/conversation/run-turn.ts).
   */
  streamFlushMs: positiveInt.min(10).max(1000).default(100),
  /** Inference worker heartbeat (ms); a worker silent for 5 heartbeats is presumed dead. */
  heartbeatMs: positiveInt.default(2000),
  /** Seconds SIGTERM waits for in-flight work before giving up on it. */
  shutdownGraceSeconds: positiveInt.default(15),
  /** Persona put before every conversation. */
  persona: z.string().default("You are Psyche, a thoughtful companion with a long memory and moods of your own."),
  /**
   * `auto` (the default): the built-in embedder with `--model tiny`, otherwise DEFAULT_EMBEDDING_MODEL,
   * falling back to the built-in one if it cannot be had. Or `builtin`, a GGUF path, an `hf:` URI.
   */
  embeddingModel: z.string().min(1).default("auto"),
  /** Where `hf:` models are downloaded from; default the HF_ENDPOINT variable, else the Hugging Face hub. */
  hfEndpoint: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  /**
   * Start-up never waits on the network longer than this: the default embedding model's download
   * gives up after it (the built-in embedder stands in), a `--model` download when nothing
   * arrives for it. `psyche model pull` fetches models ahead, with no limit.
   */
  downloadTimeoutSeconds: z.coerce.number().positive().max(3600).default(10),
  /** Embedding threads (piscina); default: the number of cores. */
  embeddingThreads: positiveInt.default(availableParallelism()),
  /** Retrieval (memory/ranking.ts): the vector similarity's share of relevance; the rest is BM25. */
  recallWeightVector: unitInterval.default(0.2),
  /** How much the best match of a memory's conversation lifts its relevance. */
  recallWeightConversation: weight.default(0.5),
  /**
   * The most recency and importance can each add, as a fraction of relevance: recency up to
   * half (what was said lately is more often what a question follows up), importance a tie-breaker.
   */
  recallWeightRecency: weight.default(0.5),
  recallWeightImportance: weight.default(0.1),
  /** Hours after a memory was formed at which its recency has halved: a week. */
  recallHalfLifeHours: z.coerce.number().positive().default(168),
  /** The share of a search's top k kept for the best memory of each strong conversation (memory/ranking.ts); 0: by score alone. */
  recallConversationSeats: unitInterval.default(0.5),
  /** Vector neighbours less similar than this do not count as relevant. */
  recallMinSimilarity: z.coerce.number().min(-1).max(1).default(0.1),
  /** Coding-agent hooks (agents/hooks.ts): tool uses between GHAP check-ins, and the prompt context's token budget. */
  hookCheckInEvery: positiveInt.default(10),
  hookMaxTokens: positiveInt.default(1500),
  /** Tokens of remembered text put into the system prompt before a turn; 0 turns it off. */
  recallPromptTokens: nonNegativeInt.default(400),
  /**
   * What a memory must reach to go into that prompt (memory/ranking.ts, bearsOn): its relevance
   * against the best's, and the share of the message's weight among the words it matches.
   */
  recallMinShare: unitInterval.default(0.5),
  recallMinCoverage: unitInterval.default(0.15),
  /** A new memory this similar to an existing one reinforces it instead of adding a row. */
  duplicateSimilarity: unitInterval.default(0.95),
  /**
   * A turn's memory waits at most this long for the chats under way to end (workers/memory-worker.ts); 0: formed at once.
   * Thirty seconds covers a burst of chats, which forming memories beside it slowed (docs/decisions.md, "...and at most 30 s").
   */
  memoryDeferSeconds: nonNegativeInt.max(600).default(30),
  /** ...and is formed only once no chat has been under way this long (a client's next request comes right after a reply); 0: no wait. */
  memoryQuietMs: nonNegativeInt.max(60_000).default(1000),
  /** Soft-deleted memories are purged this many seconds later. */
  memoryPurgeAfterSeconds: nonNegativeInt.default(86_400),
  /** Dream journal entries that did not become a memory are deleted this many days after they ended; 0 keeps every one. */
  journalKeepDays: nonNegativeInt.max(36_500).default(90),
  /** Offer the model Psyche's own memory tools (recall_memory, store_memory) beside a request's tools. */
  memoryTools: bool.default(true),
  /** Generations one turn may make around Psyche's own tool calls. */
  toolIterations: positiveInt.max(20).default(5),
  /** Dream after this many seconds without a request; 0: only dreams queued through the API. */
  dreamDelaySeconds: nonNegativeInt.default(300),
  /** Seconds between the end of one self-started dream and the start of the next. */
  dreamCooldownSeconds: nonNegativeInt.default(600),
  /** A client that heartbeats POST /v1/presence (Hermes) is gone this long after its last one; it is asked to beat three times as often. */
  presenceTtlSeconds: positiveInt.max(3600).default(45),
  /** No dream starts within this many seconds of any request (a client reconnecting). */
  wakeLockSeconds: nonNegativeInt.default(5),
  /** A dream's budget: tokens, and seconds. */
  dreamMaxTokens: positiveInt.max(8192).default(512),
  dreamMaxSeconds: positiveInt.default(120),
  /** The share of the model's time reveries may take while someone is about (src/dreams/scheduler.ts); 1: no bound. */
  dreamBudget: unitInterval.default(0.1),
  /** The window that share is counted over, in seconds. */
  dreamBudgetWindowSeconds: positiveInt.max(86_400).default(60),
  /** Fold near-duplicate memories together on the maintenance schedule. */
  consolidation: bool.default(true),
  /** The mood's resting point. */
  moodBaselineValence: signedUnit.default(0.1),
  moodBaselineArousal: signedUnit.default(-0.1),
  /** Minutes for the mood's distance from its baseline to halve. */
  moodHalfLifeMinutes: z.coerce.number().positive().default(60),
  /** How far one exchange moves the mood toward its own affect. */
  moodSensitivity: z.coerce.number().gt(0).max(1).default(0.3),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Print the embedded database's connection string and other start-up hints. */
  quiet: bool.default(false),
});
export type Config = z.infer<typeof ConfigSchema>;

/** The one setting whose variable is not PSYCHE_<KEY>: every Postgres tool reads DATABASE_URL. */
const UNPREFIXED_ENV: Partial<Record<keyof Config, string>> = { databaseUrl: "DATABASE_URL" };

/** A setting's environment variable: PSYCHE_ and the key in upper snake case (dataDir: PSYCHE_DATA_DIR). */
export const envName = (key: keyof Config): string =>
  UNPREFIXED_ENV[key] ?? `PSYCHE_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

/** Environment variable for each setting; the flag is the kebab-case of the key. */
export const ENV_NAMES = Object.fromEntries(Object.keys(ConfigSchema.shape).map((key) => [key, envName(key as keyof Config)])) as Record<
  keyof Config,
  string
>;

export const flagName = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export class ConfigError extends UserError {
  override name = "ConfigError";
  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { exitCode: 2, ...opts });
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** Settings whose values are secrets (a database URL may hold a password). */
const SECRET_KEYS = new Set(["apiKey", "apiKeys", "databaseUrl"]);

/**
 * Builds the configuration from the environment and flags. An invalid value throws a
 * ConfigError naming the flag and the variable, and how to fix it.
 */
export function loadConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Config {
  const file = (flags.config as string | undefined) ?? (env[ENV_NAMES.config] || undefined);
  // The file first, then the environment, then the flags: the flags win.
  const raw: Record<string, unknown> = file ? readConfigFile(file) : {};
  for (const [key, envName] of Object.entries(ENV_NAMES)) {
    const fromEnv = env[envName];
    if (fromEnv !== undefined && fromEnv !== "") raw[key] = fromEnv;
    if (flags[key] !== undefined) raw[key] = flags[key];
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      const envName = ENV_NAMES[key as keyof Config];
      // A secret is never echoed, not even a rejected one.
      const given =
        raw[key] === undefined ? "" : SECRET_KEYS.has(key) ? " (the value given is not shown)" : ` (got ${JSON.stringify(raw[key])})`;
      return `invalid --${flagName(key)} / ${envName}${given}: ${issue.message}`;
    });
    throw new ConfigError(lines.join("\n"));
  }
  const config = parsed.data;
  if (!LOOPBACK.has(config.host) && !config.apiKey && !config.apiKeys.length) {
    throw new ConfigError(
      `--host ${config.host} listens beyond this machine: set an API key with --api-key or PSYCHE_API_KEY, or bind to 127.0.0.1`,
    );
  }
  return config;
}

/** A config file's settings by key: JSON, keyed by the flags' names (or the keys), each value as the flag takes it. */
function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(
      `--config / ${ENV_NAMES.config}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ConfigError(`${path} must be a JSON object of settings, such as {"port": 9000, "data-dir": "/srv/psyche"}`);
  const byFlag = new Map(Object.keys(ENV_NAMES).map((key) => [flagName(key), key]));
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(parsed)) {
    const key = byFlag.get(name) ?? (name in ENV_NAMES ? name : undefined);
    if (!key || key === "config")
      throw new ConfigError(
        `${path}: unknown setting "${name}" (the keys are the flags' names, such as "data-dir"; psyche --help lists them)`,
      );
    if (value !== null && typeof value === "object")
      throw new ConfigError(`${path}: "${name}" must be a string, a number or a boolean, as its flag takes it`);
    if (value !== null) out[key] = typeof value === "string" ? value : String(value);
  }
  return out;
}

/** Every key the server accepts: --api-key (every scope) and --api-keys. */
export function serverKeys(config: Pick<Config, "apiKey" | "apiKeys">): ApiKey[] {
  return [...(config.apiKey ? [{ key: config.apiKey, scopes: null }] : []), ...config.apiKeys.filter((k) => k.key !== config.apiKey)];
}
