// The model's own store_memory (seed 001): a summary and a kind beside the content, the summary
// searched with it; a bad kind is the model's error to read, and nothing is stored. The real
// embedded database and memory threads, in this process.
import t from "tap";
import { randomUUID } from "node:crypto";
import { MemoryTools } from "../../src/memory/memory-tools.js";
import { testMemory } from "../helpers/in-process.js";

const psyche = await testMemory(t);
const tools = new MemoryTools(psyche.mem.memory);
const store = (args: object) => tools.run({ name: "store_memory", arguments: JSON.stringify(args) }, { turnId: randomUUID() });

t.test("store_memory keeps a summary and a kind, and the summary is searched", async (t) => {
  const result = JSON.parse(
    await store({ content: "We walked along the river until the lanterns came on", summary: "Evening in Hoi An", kind: "episodic" }),
  ) as { stored: string };
  const row = await psyche.mem.memory.get(result.stored);
  t.match(row, { kind: "episodic", summary: "Evening in Hoi An", content: /lanterns/ });
  const found = await psyche.mem.memory.search("Hoi An", 3);
  t.equal(found[0]?.memory.id, result.stored, "a word only in the summary finds it");

  const plain = JSON.parse(await store({ content: "The office plant is a monstera" })) as { stored: string };
  t.match(await psyche.mem.memory.get(plain.stored), { kind: "semantic", summary: null }, "without them: a fact, no summary");
});

t.test("a kind it does not know is the model's error, and nothing is stored", async (t) => {
  const before = await psyche.db.pool.query("select count(*)::int as n from memories");
  const out = JSON.parse(await store({ content: "Something", kind: "dream" })) as { error?: string };
  t.match(out.error, /invalid arguments.*kind/);
  const after = await psyche.db.pool.query("select count(*)::int as n from memories");
  t.equal(after.rows[0].n, before.rows[0].n);
});
