// A new conversation's turn, its messages and its job are one statement (src/conversation/
// start-turn.ts, opened by conversation/open-turn.ts): no transaction around it, and the job is
// the one pg-boss's own send would have queued. A job pg-boss does not insert takes the turn with it.
import t from "tap";
import { randomUUID } from "node:crypto";
import { insertTurnWithMessages } from "../../src/db/sql/turns.js";
import { openTurn } from "../../src/conversation/open-turn.js";
import { INFERENCE_QUEUE, Priority, sendStatement } from "../../src/jobs/queue.js";
import { countedPool } from "../helpers/counted-pool.js";
import { testDatabase, turnDeps, userTurn } from "../helpers/database.js";

const turn = {
  model: "psyche",
  temperature: null,
  topP: null,
  maxTokens: 4,
  seed: null,
  stop: [],
  stream: false,
  messages: [{ role: "user" as const, content: "hello there" }],
};

/** The columns of a job that pg-boss works out from its queue and its settings. */
const JOB_COLUMNS = `name, priority, state::text, retry_limit, retry_delay, retry_backoff, expire_in::text,
  (keep_until - start_after)::text as kept_for, policy, dead_letter, singleton_key`;

/** One database for the file: each test works on turns and jobs of its own, by id. */
const db = await testDatabase(t);

t.test("a new conversation's turn is one statement, and its job is the one pg-boss's send queues", async (t) => {
  // No worker: the job is left in the queue to be looked at.
  const { pool, boss } = db;
  const { pool: counted, statements } = countedPool(pool);

  const started = await openTurn(
    turnDeps({ ...db, pool: counted }),
    userTurn("hello there", { budget: { maxTokens: 4, field: "max_tokens" } }),
  );
  started.follower.close();
  t.same(
    statements.map((s) => (s === "connect" ? s : "query")),
    ["connect", "query"],
    "one statement, on a connection taken for it (conversation/start-turn.ts), no transaction around it",
  );
  const stored = (await pool.query("select status, job_id, conversation_id from turns where id = $1", [started.turnId])).rows[0];
  t.match(stored, { status: "queued", conversation_id: started.conversationId });
  const messages = (await pool.query("select role, content, position from messages where turn_id = $1", [started.turnId])).rows;
  t.same(messages, [{ role: "user", content: "hello there", position: 1 }]);

  const ours = (await pool.query(`select ${JOB_COLUMNS}, data from pgboss.job where id = $1`, [stored.job_id])).rows[0];
  t.same(ours.data, { kind: "chat", turnId: started.turnId });
  const sentId = await boss.send(INFERENCE_QUEUE, { kind: "chat", turnId: randomUUID() }, { priority: Priority.chat });
  const sent = (await pool.query(`select ${JOB_COLUMNS} from pgboss.job where id = $1`, [sentId])).rows[0];
  const { data: _, ...rest } = ours;
  t.same(rest, sent, "the same retries, expiry, retention and priority as boss.send gives");
  t.equal(ours.name, INFERENCE_QUEUE);
  t.equal(ours.state, "created");

  // The worker takes it as it takes any job.
  const [fetched] = await boss.fetch(INFERENCE_QUEUE, { priority: true });
  t.equal(fetched?.id, stored.job_id, "fetched first: a chat's priority");
});

t.test("a job pg-boss does not insert: no turn, no messages, no conversation", async (t) => {
  const { pool, boss } = db;
  const taken = await boss.send(INFERENCE_QUEUE, { kind: "chat", turnId: randomUUID() }, { priority: Priority.chat });
  // The same id again: pg-boss's insert does nothing on the conflict.
  const job = await sendStatement(boss, INFERENCE_QUEUE, { kind: "chat" }, { id: taken!, priority: Priority.chat });
  const ids = { conversationId: randomUUID(), turnId: randomUUID() };
  const err = await insertTurnWithMessages(
    pool,
    {
      ...turn,
      ...ids,
      jobId: taken!,
      supersedeFrom: null,
      firstPosition: 1,
      promptEndPosition: 1,
    },
    job,
  ).then(
    () => undefined,
    (e: unknown) => e as Error & { cause?: { code?: string } },
  );
  t.match(err, { message: /pg-boss did not accept the chat job/, cause: { code: "PS001" } }, "the statement fails, saying why");
  const left = await pool.query(
    `select (select count(*)::int from turns where id = $1) as turns,
            (select count(*)::int from messages where turn_id = $1) as messages,
            (select count(*)::int from conversations where id = $2) as conversations`,
    [ids.turnId, ids.conversationId],
  );
  t.same(left.rows[0], { turns: 0, messages: 0, conversations: 0 });
});
