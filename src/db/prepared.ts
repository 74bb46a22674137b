// Parameterized queries as named prepared statements: Postgres plans each once and then
// reuses the plan. On the embedded (WASM) Postgres, planning pg-boss's fetch took 0.5-13 ms
// against 0.1 ms of execution; on the chat path every millisecond counts.
//
// The embedded server shares one backend among all connections (shared/notes/postgres-here.md),
// so a statement prepared by one connection (or by a process long gone) already exists for
// the next. Names are therefore one per query text, and before a connection first uses one it
// asks pg_prepared_statements whether the backend has it: a failed Parse would abort an open
// transaction. On a real Postgres the answer is simply no, once per statement and connection.
import { createHash } from "node:crypto";
import pg from "pg";

const names = new Map<string, string>();

/** The statement name of a query text. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `psyche_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** "cached plan must not change result type": a migration changed a table under a plan. */
const isStalePlan = (err: unknown) => (err as { code?: string }).code === "0A000" && /cached plan/.test(String(err));

/**
 * A pg Client that prepares `query(text, values)` calls. Queries without parameters (migration
 * scripts, pg-boss's schema) keep the simple protocol, which allows several statements.
 */
export class PreparingClient extends pg.Client {
  /** Statements this connection knows to exist in its backend. */
  private readonly known = new Set<string>();
  /** Keeps this client's queries in call order across the async existence check. */
  private chain: Promise<unknown> = Promise.resolve();

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
    const preparable = typeof text === "string" && Array.isArray(values) && values.length > 0;
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

  private async prepared(text: string, values: unknown[]): Promise<pg.QueryResult> {
    const name = statementName(text);
    if (!this.known.has(name)) {
      const exists = await super.query("select 1 from pg_prepared_statements where name = $1", [name]);
      if (exists.rowCount) {
        // pg skips Parse for statements it has recorded as parsed on this connection.
        (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements[name] = text;
      }
      this.known.add(name);
    }
    try {
      return await super.query({ name, text, values });
    } catch (err) {
      if (isStalePlan(err)) return super.query(text, values);
      throw err;
    }
  }
}
