// Signals between processes (docs/operations.md). A signal only says "look now": the facts
// are in tables, and every consumer also polls, so correctness never depends on delivery.
import { EventEmitter } from "node:events";
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Logger } from "../log.js";
import type { Pool } from "../db/pool.js";
import { listen, notify, notifyAll } from "../db/sql/server.js";

export const Channel = {
  /** A job was queued for the inference worker. */
  jobs: "psyche_jobs",
  /** A turn has new events; payload: the turn id. */
  turn: "psyche_turn",
  /** A turn's cancellation was requested; payload: the turn id. */
  cancel: "psyche_cancel",
  /** A memory or maintenance job was queued. */
  memory: "psyche_memory",
} as const;
export type Channel = (typeof Channel)[keyof typeof Channel];

export type BusMode = "local" | "local+notify";

export interface SignalBus {
  readonly mode: BusMode;
  /**
   * Whether every signal reaches this process's subscribers: every role is in this process, or
   * NOTIFY carries the others'. Where not (the polling fallback), only polling sees what other
   * processes did, so a consumer must not slow its polling down.
   */
  readonly complete: boolean;
  notify(channel: Channel, payload?: string): void;
  subscribe(channel: Channel, handler: (payload: string) => void): () => void;
  close(): Promise<void>;
}

/** In-process only: every role in one process (`psyche serve`), or no NOTIFY available. */
export class LocalBus implements SignalBus {
  readonly mode: BusMode = "local";
  protected emitter = new EventEmitter().setMaxListeners(0);

  /** `reachesAll: false` for the fallback where other processes' signals cannot arrive. */
  constructor(protected reachesAll = true) {}

  get complete(): boolean {
    return this.reachesAll;
  }

  notify(channel: Channel, payload = ""): void {
    this.emitter.emit(channel, payload);
  }

  subscribe(channel: Channel, handler: (payload: string) => void): () => void {
    this.emitter.on(channel, handler);
    return () => this.emitter.off(channel, handler);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/**
 * Local delivery plus Postgres LISTEN/NOTIFY for other processes. Payloads carry this
 * process's origin id so that its own notifications are not delivered twice.
 */
export class NotifyBus extends LocalBus {
  override readonly mode: BusMode = "local+notify";
  private readonly origin = randomUUID().slice(0, 8);

  private constructor(
    private readonly pool: Pool,
    private readonly listener: pg.Client,
    private readonly log: Logger,
  ) {
    super(true);
    listener.on("notification", (msg) => {
      const payload = msg.payload ?? "";
      const bar = payload.indexOf("|");
      if (payload.slice(0, bar) === this.origin) return;
      this.emitter.emit(msg.channel, payload.slice(bar + 1));
    });
    listener.on("error", (err) => {
      this.reachesAll = false;
      this.log.warn({ err }, "signal listener connection failed; polling only");
    });
  }

  /**
   * Connects a listener and checks that a NOTIFY sent through the pool arrives. Returns
   * undefined where it does not (PgBouncer in transaction mode, the embedded server over a
   * socket): callers then use a LocalBus and rely on polling across processes.
   */
  static async connect(pool: Pool, connectionString: string, log: Logger, probeMs = 500): Promise<NotifyBus | undefined> {
    const listener = new pg.Client({ connectionString });
    try {
      await listener.connect();
      for (const channel of [...Object.values(Channel), "psyche_probe"]) await listen(listener, channel);
      const arrived = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), probeMs);
        listener.on("notification", (msg) => {
          if (msg.channel === "psyche_probe") {
            clearTimeout(timer);
            resolve(true);
          }
        });
      });
      await notify(pool, "psyche_probe", "probe");
      if (await arrived) return new NotifyBus(pool, listener, log);
    } catch (err) {
      log.debug({ err }, "LISTEN/NOTIFY unavailable");
    }
    await listener.end().catch(() => undefined);
    return undefined;
  }

  /** Signals for other processes not sent yet. */
  private pending: { channel: string; payload: string }[] = [];
  /** Whether a statement of signals is on its way: those that come meanwhile wait for it. */
  private sending = false;

  override notify(channel: Channel, payload = ""): void {
    super.notify(channel, payload);
    // One statement for every signal of this turn of the event loop, and one at a time: each is a
    // round trip the turns' own queries wait behind (docs/decisions.md, "One notify statement at
    // a time"), and one at a time keeps their order across connections.
    if (this.pending.push({ channel, payload: `${this.origin}|${payload}` }) > 1 || this.sending) return;
    setImmediate(() => this.send());
  }

  private send(): void {
    const signals = this.pending;
    this.pending = [];
    this.sending = true;
    notifyAll(this.pool, signals)
      .catch((err: unknown) => {
        this.log.debug({ err, signals: signals.length }, "pg_notify failed; consumers will poll");
      })
      .finally(() => {
        this.sending = false;
        if (this.pending.length > 0) this.send();
      });
  }

  override async close(): Promise<void> {
    await super.close();
    await this.listener.end().catch(() => undefined);
  }
}

/**
 * `local` when every role shares this process and the database is the embedded one;
 * otherwise NOTIFY where the connection carries it, else local signals plus polling.
 */
export async function createBus(opts: {
  pool: Pool;
  connectionString: string;
  embeddedInProcess: boolean;
  log: Logger;
}): Promise<SignalBus> {
  if (opts.embeddedInProcess) return new LocalBus();
  const bus = await NotifyBus.connect(opts.pool, opts.connectionString, opts.log);
  if (!bus) opts.log.info("LISTEN/NOTIFY does not reach this process: falling back to polling between processes");
  return bus ?? new LocalBus(false);
}
