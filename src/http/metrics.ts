// GET /metrics in Prometheus's text format, through prom-client (docs/operations.md). Facts that
// live in the database (the queue, memories, reveries, tokens, the mood, the workers) are read
// from it at each scrape, so every web process reports the same; what only this process sees
// (its HTTP requests, the first tokens it relayed) is labelled with `process`.
import { hostname } from "node:os";
import type { Context, Next } from "hono";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { databaseFacts } from "../db/sql/metrics.js";
import { liveWorkers } from "../db/sql/workers.js";
import { INFERENCE_QUEUE, MAINTENANCE_QUEUE, MEMORY_QUEUE } from "../jobs/queue.js";
import type { MoodKeeper } from "../mood/mood-keeper.js";
import type { Pool } from "../db/pool.js";
import { PSYCHE_VERSION } from "../version.js";

const QUEUES = [INFERENCE_QUEUE, MEMORY_QUEUE, MAINTENANCE_QUEUE];
/** Seconds; from a tiny model's milliseconds to a big one's slow prompt evaluation. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Distinct field names the ignored-fields counter labels before it says "other". */
const MAX_FIELD_LABELS = 100;

export class PsycheMetrics {
  readonly registry = new Registry();
  private readonly process = `${hostname()}:${process.pid}`;
  private readonly requests = new Counter({
    name: "psyche_http_requests_total",
    help: "HTTP requests answered by this process",
    labelNames: ["route", "method", "status", "process"],
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: "psyche_http_request_duration_seconds",
    help: "Time to the response's headers (a stream's first byte), by route, in this process",
    labelNames: ["route", "method", "process"],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly ignored = new Counter({
    name: "psyche_ignored_request_fields_total",
    help: "Request fields a client sent that the server does not know and ignored (--strict-params refuses them), by API and field",
    labelNames: ["api", "field", "process"],
    registers: [this.registry],
  });
  /** The field names labelled so far: a client sending random names cannot grow the metric without end. */
  private readonly fieldNames = new Set<string>();
  private readonly ttft = new Histogram({
    name: "psyche_chat_time_to_first_token_seconds",
    help: "From a chat or response request to its first generated text, as this process relayed it (queue, recall and prompt evaluation included)",
    labelNames: ["process"],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: "psyche_chat_tokens_total",
    help: "Tokens of all turns, by kind (prompt, completion)",
    labelNames: ["kind"],
    registers: [this.registry],
  });
  private readonly queue = new Gauge({
    name: "psyche_queue_jobs",
    help: "pg-boss jobs by queue and state",
    labelNames: ["queue", "state"],
    registers: [this.registry],
  });
  private readonly wake = new Histogram({
    name: "psyche_dream_wake_latency_seconds",
    help: "From what woke a reverie (a chat request, a wake request or a client arriving, the earliest) to its generation stopping",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
    registers: [this.registry],
  });
  private readonly reveries = new Counter({
    name: "psyche_reveries_total",
    help: "Dream journal entries by kind and status",
    labelNames: ["kind", "status"],
    registers: [this.registry],
  });
  private readonly memories = new Gauge({
    name: "psyche_memories",
    help: "Live memories (not deleted, not folded) by kind",
    labelNames: ["kind"],
    registers: [this.registry],
  });
  private readonly valence = new Gauge({
    name: "psyche_mood_valence",
    help: "The mood's valence now (-1..1), decayed toward its baseline",
    registers: [this.registry],
  });
  private readonly arousal = new Gauge({
    name: "psyche_mood_arousal",
    help: "The mood's arousal now (-1..1), decayed toward its baseline",
    registers: [this.registry],
  });
  private readonly workerUp = new Gauge({
    name: "psyche_worker_up",
    help: "1 when an inference worker's heartbeat is fresh, else 0",
    registers: [this.registry],
  });
  private readonly workers = new Gauge({
    name: "psyche_workers",
    help: "Inference workers with a fresh heartbeat",
    registers: [this.registry],
  });

  constructor(private readonly deps: { pool: Pool; mood: MoodKeeper; workerStaleMs: number; modelId: string }) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: "psyche_info",
      help: "The version and the served model",
      labelNames: ["version", "model"],
      registers: [this.registry],
    }).set({ version: PSYCHE_VERSION, model: deps.modelId }, 1);
  }

  /** Counts and times each request by its route pattern (not its path: ids would explode the labels). */
  middleware() {
    return async (c: Context, next: Next) => {
      const started = performance.now();
      await next();
      const route = c.req.routePath === "/*" || c.req.routePath === "*" ? "unmatched" : c.req.routePath;
      const labels = { route, method: c.req.method, process: this.process };
      this.requests.inc({ ...labels, status: String(c.res.status) });
      this.duration.observe(labels, (performance.now() - started) / 1000);
    };
  }

  firstToken(seconds: number): void {
    this.ttft.observe({ process: this.process }, seconds);
  }

  /** Fields clients send that the server ignored (http/request-fields.ts); past MAX_FIELD_LABELS names, "other". */
  ignoredFields(api: string, fields: readonly string[]): void {
    for (const field of fields) {
      const name =
        /^[A-Za-z0-9_.-]{1,64}$/.test(field) && (this.fieldNames.has(field) || this.fieldNames.size < MAX_FIELD_LABELS) ? field : "other";
      this.fieldNames.add(name);
      this.ignored.inc({ api, field: name, process: this.process });
    }
  }

  /** The text format, after reading the database's facts. */
  async render(): Promise<string> {
    const [facts, mood, workers] = await Promise.all([
      databaseFacts(this.deps.pool, QUEUES),
      this.deps.mood.current(),
      liveWorkers(this.deps.pool),
    ]);
    this.tokens.reset();
    this.tokens.inc({ kind: "prompt" }, Number(facts.tokens.prompt));
    this.tokens.inc({ kind: "completion" }, Number(facts.tokens.completion));
    this.queue.reset();
    for (const q of QUEUES) for (const state of ["created", "retry", "active"]) this.queue.set({ queue: q, state }, 0);
    for (const r of facts.queue) this.queue.set({ queue: r.queue, state: r.state }, r.n);
    this.reveries.reset();
    for (const r of facts.reveries) this.reveries.inc({ kind: r.kind, status: r.status }, r.n);
    this.memories.reset();
    for (const m of facts.memories) this.memories.set({ kind: m.kind }, m.n);
    this.wake.reset();
    for (const s of facts.wakeLatencies) this.wake.observe(s);
    this.valence.set(mood.valence);
    this.arousal.set(mood.arousal);
    const alive = workers.filter((w) => w.seconds_since_heartbeat * 1000 < this.deps.workerStaleMs).length;
    this.workers.set(alive);
    this.workerUp.set(alive > 0 ? 1 : 0);
    return this.registry.metrics();
  }
}
