// Statements that number their own parameters (src/db/statement.ts): values become $n in the
// order they appear, nested fragments are numbered in place, and a foreign statement keeps its
// own $1..$k while ours follow its values.
import t from "tap";
import { build, empty, foreign, join, raw, sql } from "../../src/db/statement.js";

t.test("values are numbered in the order they appear, nested fragments in place", async (t) => {
  const where = (id: number) => sql`id = ${id}`;
  const s = build(sql`select ${"a"}, ${raw("'lit'")} from t where ${where(7)} and name = ${"n"}${empty}`);
  t.equal(s.text, "select $1, 'lit' from t where id = $2 and name = $3");
  t.same(s.values, ["a", 7, "n"]);
});

t.test("a value used twice is two parameters; a null is a value, not text", async (t) => {
  const id = "x";
  const s = build(sql`${id} ${id} ${null}`);
  t.equal(s.text, "$1 $2 $3");
  t.same(s.values, ["x", "x", null]);
});

t.test("a foreign statement keeps its numbers, and ours follow its values", async (t) => {
  const job = { text: "insert into job (a, b) values ($1, $2) on conflict do nothing returning id", values: [10, 20] };
  const s = build(sql`with job as (${foreign(job)}) select ${"mine"}, $1 as theirs`, job);
  t.equal(s.text, "with job as (insert into job (a, b) values ($1, $2) on conflict do nothing returning id) select $3, $1 as theirs");
  t.same(s.values, [10, 20, "mine"]);
});

t.test("a foreign statement is placed once, and only the one given", async (t) => {
  const job = { text: "select $1", values: [1] };
  t.throws(() => build(sql`${foreign(job)}`), /placed once, and given/);
  t.throws(() => build(sql`${foreign(job)} ${foreign(job)}`, job), /placed once/);
  t.throws(() => build(sql`select 1`, job), /not placed/);
});

t.test("join", async (t) => {
  t.equal(build(join([sql`${1}`, sql`${2}`, sql`${3}`], ", ")).text, "$1, $2, $3");
  t.equal(build(join([], ", ")).text, "");
});
