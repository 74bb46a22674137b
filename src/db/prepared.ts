// Parameterized queries as named prepared statements: Postgres plans each once and then
// reuses the plan; on the embedded (WASM) Postgres planning cost many times the execution
// (docs/decisions.md, "Statements prepared by name").
//
// The embedded server shares one backend among all connections (pg_backend_pid() is the same
// on every one; test/db/prepared.test.ts),
// so a statement prepared by one connection (or by a process long gone) already exists for
// the next. Names are therefore one per query text, and before a connection first uses one it
// asks pg_prepared_statements whether the backend has it. Two connections can still ask at the
// same moment and both prepare: the loser's "already exists" is taken as "use it", and inside a
// transaction that first Parse runs under a savepoint so the failure cannot abort it. What one
// connection learnt, the process's other connections to the same backend know too (a fresh
// pool of ten asked each statement's question up to ten times before).
//
// A real Postgres gives each connection a backend of its own, where no statement exists until
// the connection prepares it: there the question and the savepoint are round trips for nothing,
// so each connection asks once which kind of server it talks to, and prepares directly on a
// real one.
import { createHash } from "node:crypto";
import pg from "pg";

const names = new Map<string, string>();

/**
 * The statements known to exist in each shared backend this process talks to, keyed by where
 * it listens and when it started: a restarted server has none of the old one's, and its start
 * time tells it apart. Bounded: a long test run starts many embedded servers.
 */
const sharedStatements = new Map<string, Set<string>>();
const SHARED_BACKENDS_KEPT = 16;

function statementsOf(backend: string): Set<string> {
  let statements = sharedStatements.get(backend);
  if (!statements) {
    if (sharedStatements.size >= SHARED_BACKENDS_KEPT) sharedStatements.delete(sharedStatements.keys().next().value!);
    statements = new Set();
    sharedStatements.set(backend, statements);
  }
  return statements;
}

/** The statement name of a query text. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `psyche_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

const DUPLICATE_PREPARED_STATEMENT = "42P05";

/** "cached plan must not change result type": a migration changed a table under a plan. */
const isStalePlan = (err: unknown) => (err as { code?: string }).code === "0A000" && /cached plan/.test(String(err));

/**
 * A query whose text starts with this is planned for its values every time (an unnamed
 * statement), not prepared: for queries whose best plan depends on the values, such as
 * full-text search, where a generic plan cannot tell a rare word from a common one.
 */
export const CUSTOM_PLAN = "/* plan: custom */";

/** The parts of pg's internal Connection (pg 8.23.1, pinned in package.json) this relies on. */
interface PgConnection extends NodeJS.EventEmitter {
  parsedStatements: Record<string, string>;
}

/**
 * The client's internal connection, checked to be what this was written for: a pg upgrade
 * that changes it fails loudly at connect time instead of preparing wrongly.
 */
export function pgConnectionOf(client: object): PgConnection {
  const connection = (client as { connection?: Partial<PgConnection> }).connection;
  if (
    !connection ||
    typeof connection.on !== "function" ||
    typeof connection.parsedStatements !== "object" ||
    connection.parsedStatements === null
  ) {
    throw new Error(
      "pg's Client internals are not the ones src/db/prepared.ts was written for (pg 8.23.1): install the version package.json pins",
    );
  }
  return connection as PgConnection;
}

/**
 * A pg Client that prepares `query(text, values)` calls. Queries without parameters (migration
 * scripts, pg-boss's schema) keep the simple protocol, which allows several statements.
 */
export class PreparingClient extends pg.Client {
  /** Statements this connection knows to exist in its backend. */
  private readonly known = new Set<string>();
  /** Keeps this client's queries in call order across the async existence check. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Whether the server last reported this session inside a transaction (ReadyForQuery's status). */
  private inTransaction = false;
  private readonly pgConnection: PgConnection;
  /**
   * The statements of this connection's backend where it is shared with others (the embedded
   * server), false where it is the connection's own; asked once.
   */
  private sharedBackend: Promise<Set<string> | false> | undefined;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.pgConnection = pgConnectionOf(this);
    this.pgConnection.on("readyForQuery", (msg: { status?: string }) => {
      this.inTransaction = msg.status === "T" || msg.status === "E";
    });
  }

  // pg's query() has many overloads. Submittables (cursors, streams) pass straight through;
  // every other query runs in call order, prepared when it is `(text, values)`, and answers
  // its callback if it came with one (pg.Pool.query does).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const [text, values] = args;
    if (typeof (text as { submit?: unknown } | null)?.submit === "function") {
      return super.query(...(args as Parameters<pg.Client["query"]>));
    }
    const last: unknown = args[args.length - 1];
    const callback = typeof last === "function" ? (last as (err: unknown, res?: pg.QueryResult) => void) : undefined;
    const preparable = typeof text === "string" && Array.isArray(values) && values.length > 0 && !text.startsWith(CUSTOM_PLAN);
    const run: Promise<pg.QueryResult> = this.chain.then(() =>
      preparable ? this.prepared(text, values) : super.query(text, Array.isArray(values) ? values : undefined),
    );
    this.chain = run.catch(() => undefined);
    if (!callback) return run;
    run.then(
      (res) => callback(null, res),
      (err: unknown) => callback(err),
    );
    return undefined;
  }

  private markParsed(name: string, text: string, shared: Set<string>): void {
    // pg skips Parse for statements it has recorded as parsed on this connection.
    this.pgConnection.parsedStatements[name] = text;
    this.known.add(name);
    shared.add(name);
  }

  private backendStatements(): Promise<Set<string> | false> {
    this.sharedBackend ??= super.query("select version() like '%PGlite%' as shared, pg_postmaster_start_time()::text as started").then(
      (res: pg.QueryResult<{ shared: boolean; started: string }>) => {
        const row = res.rows[0];
        return row?.shared === true && statementsOf(`${this.host}:${this.port}/${this.database}@${row.started}`);
      },
      (err: unknown) => {
        this.sharedBackend = undefined;
        throw err;
      },
    );
    return this.sharedBackend;
  }

  private async prepared(text: string, values: unknown[]): Promise<pg.QueryResult> {
    const name = statementName(text);
    if (!this.known.has(name)) {
      const shared = await this.backendStatements();
      if (!shared) {
        // Its own backend: nothing there but what this connection prepared.
        const result = await super.query({ name, text, values });
        this.known.add(name);
        return result;
      }
      if (shared.has(name)) this.markParsed(name, text, shared);
      else {
        const exists = await super.query("select 1 from pg_prepared_statements where name = $1", [name]);
        if (exists.rowCount) this.markParsed(name, text, shared);
        else return this.prepareFirst(name, text, values, shared);
      }
    }
    return this.execute(name, text, values);
  }

  /** The first Parse of `name` in a shared backend, tolerating another connection's winning it. */
  private async prepareFirst(name: string, text: string, values: unknown[], shared: Set<string>): Promise<pg.QueryResult> {
    const guarded = this.inTransaction;
    if (guarded) await super.query("savepoint psyche_prepare");
    try {
      const result = await super.query({ name, text, values });
      if (guarded) await super.query("release savepoint psyche_prepare");
      this.known.add(name);
      shared.add(name);
      return result;
    } catch (err) {
      if ((err as { code?: string }).code !== DUPLICATE_PREPARED_STATEMENT) throw err;
      if (guarded) await super.query("rollback to savepoint psyche_prepare");
      this.markParsed(name, text, shared);
      return this.execute(name, text, values);
    }
  }

  private async execute(name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
    try {
      return await super.query({ name, text, values });
    } catch (err) {
      if (isStalePlan(err)) return super.query(text, values);
      throw err;
    }
  }
}
