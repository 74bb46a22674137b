// The soak's checker fails when it should: a reply unlike the stored one, a turn left running,
// a missing memory job, a refused request's text in the database.
import t from "tap";
import OpenAI from "openai";
import { checkInvariants, allHold } from "../../bench/soak/invariants.js";
import { emptyLog, REJECTED_MARKER } from "../../bench/soak/clients.js";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

t.test("each invariant, broken on purpose, is reported", async (t) => {
  const psyche = await startPsyche(t, { recallPromptTokens: 0 });
  const pool = psyche.db.pool;
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const { data, response } = await client.chat.completions
    .create({ model: "psyche", messages: [{ role: "user", content: "hello" }], max_tokens: 6 })
    .withResponse();
  const turnId = response.headers.get("x-psyche-turn")!;
  const text = data.choices[0]!.message.content ?? "";
  await until("the memory job", async () =>
    (await pool.query("select 1 from pgboss.job where name = 'psyche-memory' and data->>'turnId' = $1", [turnId])).rowCount
      ? true
      : undefined,
  );
  const log = emptyLog();
  log.replies.push({ turnId, text, streamed: false, resumed: false });
  const clean = await checkInvariants(pool, log);
  t.ok(allHold(clean), JSON.stringify(clean));

  log.replies.push({ turnId, text: `${text} and more`, streamed: true, resumed: true });
  t.same((await checkInvariants(pool, log)).mismatched, [`${turnId} (streamed) (resumed)`]);
  log.replies.pop();

  await pool.query("update turns set status = 'running' where id = $1", [turnId]);
  t.same((await checkInvariants(pool, log)).lost, [`${turnId} (running)`]);
  await pool.query("update turns set status = 'done' where id = $1", [turnId]);

  await pool.query(
    "insert into turn_events (turn_id, seq, kind, content) select $1, max(seq) + 1, 'done', 'stop' from turn_events where turn_id = $1",
    [turnId],
  );
  t.same((await checkInvariants(pool, log)).duplicated, [turnId]);
  await pool.query("delete from turn_events where turn_id = $1 and seq = (select max(seq) from turn_events where turn_id = $1)", [turnId]);

  await pool.query("delete from pgboss.job where name = 'psyche-memory' and data->>'turnId' = $1", [turnId]);
  await pool.query("delete from pgboss.archive where name = 'psyche-memory' and data->>'turnId' = $1", [turnId]);
  t.same((await checkInvariants(pool, log)).memoryJobsWrong, [`${turnId} (0 jobs)`]);

  const conv = (await pool.query("select conversation_id from turns where id = $1", [turnId])).rows[0].conversation_id;
  await pool.query("insert into messages (conversation_id, position, role, content) values ($1, 99, 'user', $2)", [
    conv,
    `${REJECTED_MARKER} 1`,
  ]);
  t.equal((await checkInvariants(pool, log)).rejectedWritten, 1);
});
