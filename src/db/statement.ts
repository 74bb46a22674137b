// Statements that number their own parameters. A value interpolated into `sql` becomes the next
// `$n` in the order it appears, a nested `sql` fragment is numbered in place, and another
// library's statement (pg-boss's insert of a job, jobs/queue.ts sendStatement) goes in verbatim:
// its own `$1`..`$k` stay as they are, because ours are numbered after its values. So the turn's
// statements (db/sql/turns.ts) keep their one round trip without hand-counted `$15`s or a
// rewrite of pg-boss's text.

/** A whole statement, as pg's `query(text, values)` takes it. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** A statement of another library's, run as part of one of ours. */
export interface ForeignStatement {
  readonly text: string;
  readonly values: readonly unknown[];
}

const FOREIGN = Symbol("foreign statement");

/** Marks a foreign statement's place in a fragment; `build` must be given the same statement. */
export const foreign = (statement: ForeignStatement) => ({ [FOREIGN]: statement });
type ForeignPlace = ReturnType<typeof foreign>;

/** SQL text with values in their places, not yet numbered. */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly parts: readonly unknown[],
  ) {}
}

/** A fragment: `${value}` becomes a parameter; `${sql`...`}` nests; `${foreign(statement)}` places a foreign statement. */
export const sql = (strings: TemplateStringsArray, ...parts: unknown[]): Sql => new Sql([...strings], parts);

/** SQL text as it is, never a value: for names this code makes (a queue's literal, db/sql/pgboss-jobs.ts), not for anything a request says. */
export const raw = (text: string): Sql => new Sql([text], []);

/** Nothing: for a part of a statement that is left out. */
export const empty = sql``;

/** `fragments` joined by `separator` (SQL text). */
export function join(fragments: readonly Sql[], separator: string): Sql {
  if (fragments.length === 0) return empty;
  return new Sql(["", ...fragments.slice(1).map(() => separator), ""], fragments);
}

const isForeignPlace = (part: unknown): part is ForeignPlace => typeof part === "object" && part !== null && FOREIGN in part;

/**
 * The statement: its text with `$n` numbered in order of appearance, after the foreign
 * statement's own values where one is placed (at most one, and it must be `using`).
 */
export function build(fragment: Sql, using?: ForeignStatement): Statement {
  const values: unknown[] = using ? [...using.values] : [];
  let placed = false;
  const render = (f: Sql): string => {
    let text = f.strings[0]!;
    f.parts.forEach((part, i) => {
      if (part instanceof Sql) text += render(part);
      else if (isForeignPlace(part)) {
        if (part[FOREIGN] !== using || placed) throw new Error("a foreign statement is placed once, and given to build()");
        placed = true;
        text += using.text;
      } else {
        values.push(part);
        text += `$${values.length}`;
      }
      text += f.strings[i + 1]!;
    });
    return text;
  };
  const text = render(fragment);
  if (using && !placed) throw new Error("the foreign statement given to build() is not placed in the fragment");
  return { text, values };
}
