// Statements as the code sends them, explained on a real database instead of run: a Queryable
// that prefixes EXPLAIN and keeps each plan (tests of which indexes a statement reads).
import type pg from "pg";
import type { Pool, Queryable } from "../../src/db/pool.js";

export interface Plan {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: Plan[];
}

export function* planNodes(plan: Plan): Generator<Plan> {
  yield plan;
  for (const child of plan.Plans ?? []) yield* planNodes(child);
}

/** A Queryable that explains each statement on `pool` (nothing runs) and keeps its plan; it answers no rows. */
export function explaining(pool: Pool): { db: Queryable; plans: Plan[] } {
  const plans: Plan[] = [];
  const db: Queryable = {
    query: (async (text: string, values?: unknown[]) => {
      const res = await pool.query(`explain (format json) ${text}`, values);
      plans.push((res.rows[0]["QUERY PLAN"] as { Plan: Plan }[])[0]!.Plan);
      return { rows: [], rowCount: 0 } as unknown as pg.QueryResult;
    }) as Queryable["query"],
  };
  return { db, plans };
}

/** The tables `plan` reads row by row, of those named. */
export const scansOf = (plan: Plan, tables: readonly string[]): string[] =>
  [...planNodes(plan)]
    .filter((n) => n["Node Type"] === "Seq Scan" && tables.includes(n["Relation Name"] ?? ""))
    .map((n) => n["Relation Name"]!);
