import type { Queryable } from "../pool.js";
import { PgErrorCode, pgErrorCode } from "../errors.js";
import { build, empty, type ForeignStatement, foreign, raw, type Sql, sql } from "../statement.js";
import type { CheckedToolCall, ToolCall, ToolChoice, ToolSpec } from "../../tools/types.js";
import type { ResponseFormat } from "../../tools/response-format.js";
import { messageArrays, type NewMessage } from "./conversations.js";
import type { TurnEvent } from "./turn-events.js";
import { completeJobSql, insertTakenJob, takeJobSql } from "./pgboss-jobs.js";
import { asJsonb, asReal } from "../jsonb-value.js";
import { DEFAULT_SCOPE } from "../../scope.js";

export type TurnStatus = "queued" | "running" | "done" | "failed" | "cancelled";
export type FinishReason = "stop" | "length" | "cancelled" | "tool_calls";

export interface Turn {
  id: string;
  /** Null for a text completion (purpose "completion"), which belongs to no conversation. */
  conversation_id: string | null;
  status: TurnStatus;
  model: string;
  temperature: number | null;
  top_p: number | null;
  top_k: number | null;
  max_tokens: number;
  seed: number | null;
  stop: string[];
  stream: boolean;
  job_id: string | null;
  worker_id: string | null;
  attempts: number;
  content: string | null;
  /** A reasoning model's thought, apart from its content (migrations/000026_reasoning.sql); null where it had none. */
  reasoning: string | null;
  reasoning_tokens: number | null;
  /** The most tokens the thought may take (0: thinking off); null: the family's default. */
  thought_budget: number | null;
  thought_effort: ThoughtEffort | null;
  finish_reason: FinishReason | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Of the prompt tokens, those the model's slot already held; null where unknown. */
  cached_tokens: number | null;
  error: string | null;
  cancel_requested_at: Date | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  /** The prompt is the active transcript up to this position. */
  prompt_end_position: number | null;
  tools: ToolSpec[] | null;
  tool_choice: ToolChoice | null;
  tool_calls: CheckedToolCall[] | null;
  parallel_tool_calls: boolean | null;
  response_format: ResponseFormat | null;
  presence_penalty: number | null;
  frequency_penalty: number | null;
  logit_bias: Record<string, number> | null;
  /** A system message for this turn only (the Responses API's instructions). */
  instructions: string | null;
  /** Why it was asked for: a chat, an exploration, or a text completion. */
  purpose: TurnPurpose;
  /** A text completion's prompt and suffix (migrations/000027_completions.sql); null for a conversation's turn. */
  prompt: string | null;
  suffix: string | null;
}

/** The columns of a Turn, read from `t`. */
const TURN_COLUMNS = `t.id, t.conversation_id, t.status, t.model, t.temperature, t.top_p, t.top_k, t.max_tokens, t.seed, t.stop,
  t.stream, t.job_id, t.worker_id, t.attempts, t.content, t.reasoning, t.reasoning_tokens, t.thought_budget, t.thought_effort, t.finish_reason, t.prompt_tokens, t.completion_tokens, t.cached_tokens,
  t.error, t.cancel_requested_at, t.created_at, t.started_at, t.finished_at, t.prompt_end_position, t.tools, t.tool_choice,
  t.tool_calls, t.parallel_tool_calls, t.response_format, t.presence_penalty, t.frequency_penalty, t.logit_bias, t.instructions,
  t.purpose, t.prompt, t.suffix`;

/** A Turn's columns, from `alias` instead of `t`. */
export const turnColumns = (alias: string) => TURN_COLUMNS.replace(/\bt\./g, `${alias}.`);

export interface NewTurn {
  conversationId: string;
  model: string;
  temperature: number | null;
  topP: number | null;
  /** Sample from the k likeliest tokens (Anthropic's top_k). */
  topK?: number | null;
  maxTokens: number;
  seed: number | null;
  stop: string[];
  stream: boolean;
  tools?: ToolSpec[] | null;
  toolChoice?: ToolChoice | null;
  parallelToolCalls?: boolean | null;
  responseFormat?: ResponseFormat | null;
  presencePenalty?: number | null;
  frequencyPenalty?: number | null;
  /** Token id -> bias added to its logit. */
  logitBias?: Record<string, number> | null;
  /** A system message for this turn only, after the persona; not carried to the next turn. */
  instructions?: string | null;
  /** The most tokens the thought may take (0: off); null or unset: the family's default. */
  thoughtBudget?: number | null;
  /** The effort a family that renders one in its prompt is told (gpt-oss); null or unset: its default. */
  thoughtEffort?: ThoughtEffort | null;
  /** Why it was asked for (migrations/000017_turn_purpose.sql); default chat. */
  purpose?: TurnPurpose;
  /** The scope a new conversation gets (src/scope.ts); a stored one keeps its own. */
  scope?: string;
}

/** A reasoning effort as the families that render one name it (inference/engine.ts's ReasoningEffort). */
export type ThoughtEffort = "low" | "medium" | "high";

/** The purposes a client may name (X-Psyche-Purpose); a text completion is its own route's. */
export const TURN_PURPOSES = ["chat", "exploration"] as const;
export type TurnPurpose = (typeof TURN_PURPOSES)[number] | "completion";

export interface TurnWithMessages extends NewTurn {
  turnId: string;
  jobId: string;
  /** Stored messages from this position on are superseded (the client rewrote history). */
  supersedeFrom: number | null;
  /** Position of the first new message. */
  firstPosition: number;
  messages: readonly NewMessage[];
  promptEndPosition: number;
  /**
   * Stored already claimed by this worker, its job inserted taken (insertTakenJob): the worker
   * of the storing process runs it as handed (conversation/start-turn.ts).
   */
  claimedBy?: string | undefined;
}

/** A turn as its storing statement wrote it, with its conversation's scope (null for a text completion's). */
export type StoredTurn = Turn & { scope: string | null };

/** A turn's status, worker, attempts and start as it is inserted: queued, or claimed by `claimedBy`. */
const insertedClaim = (claimedBy: string | undefined) =>
  claimedBy === undefined ? sql`'queued', null::uuid, 0, null::timestamptz` : sql`'running', ${claimedBy}::uuid, 1, now()`;

/** Whether a statement failed at psyche_require (migrations/000025_require.sql) for `what`. */
export const failedRequirement = (err: unknown, what: string) =>
  pgErrorCode(err) === PgErrorCode.requirementFailed && (err as Error).message.includes(what);

const JOB_QUEUED = "the job was queued";
const TURN_HELD = "the worker holds the turn";

/**
 * Stores a queued turn, the request's new messages and any superseding, creating the
 * conversation if needed, and queues its job (pg-boss's own insert, `job`): one statement, so
 * the request costs one round trip, and a new conversation needs no transaction around it. A
 * job pg-boss does not insert fails the whole statement, so no turn is stored without its job.
 */
export async function insertTurnWithMessages(db: Queryable, t: TurnWithMessages, job: ForeignStatement): Promise<StoredTurn> {
  const m = messageArrays(t.messages);
  const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
  const queued = t.claimedBy === undefined ? job : insertTakenJob(job);
  const statement = build(
    sql`with job as (${foreign(queued)}),
     conv as (
       insert into conversations (id, scope) values (${t.conversationId}, coalesce(${t.scope ?? null}::text, 'default'))
       on conflict (id) do nothing returning id),
     sup as (
       update messages set superseded_at = now()
       where conversation_id = ${t.conversationId} and ${t.supersedeFrom}::int is not null and position >= ${t.supersedeFrom}
         and superseded_at is null returning 1),
     turn as (
       insert into turns as t (id, conversation_id, model, temperature, top_p, top_k, max_tokens, seed, stop, stream, job_id,
                          prompt_end_position, tools, tool_choice, parallel_tool_calls, response_format, presence_penalty,
                          frequency_penalty, logit_bias, instructions, purpose, thought_budget, thought_effort,
                          status, worker_id, attempts, started_at)
       values (${t.turnId}, ${t.conversationId}, ${t.model}, ${t.temperature}, ${t.topP}, ${t.topK ?? null}, ${t.maxTokens}, ${t.seed},
               ${t.stop}, ${t.stream}, ${t.jobId}, ${t.promptEndPosition}, ${t.tools?.length ? json(t.tools) : null}::jsonb,
               ${json(t.toolChoice)}::jsonb, ${t.parallelToolCalls ?? null}, ${json(t.responseFormat)}::jsonb,
               ${t.presencePenalty ?? null}, ${t.frequencyPenalty ?? null},
               ${t.logitBias && Object.keys(t.logitBias).length ? json(t.logitBias) : null}::jsonb, ${t.instructions ?? null},
               ${t.purpose ?? "chat"}, ${t.thoughtBudget ?? null}::int, ${t.thoughtEffort ?? null}::text,
               ${insertedClaim(t.claimedBy)})
       returning ${raw(TURN_COLUMNS)}),
     ins as (
       insert into messages (conversation_id, position, role, content, name, tool_calls, tool_call_id, turn_id)
       select ${t.conversationId}, ${t.firstPosition} + m.ord - 1, m.role, m.content, m.name, m.tool_calls::jsonb, m.tool_call_id, ${t.turnId}
       from unnest(${m.roles}::text[], ${m.contents}::text[], ${m.names}::text[], ${m.toolCalls}::text[], ${m.toolCallIds}::text[])
         with ordinality as m(role, content, name, tool_calls, tool_call_id, ord)
       returning 1)
     select ${raw(turnColumns("s"))},
            -- A conversation made by this statement is not visible to it: its scope is the one given.
            coalesce((select v.scope from conversations v where v.id = s.conversation_id), ${t.scope ?? null}::text, 'default') as scope,
            (select count(*) from ins) as inserted, psyche_require((select count(*) from job) = 1, ${JOB_QUEUED}) as queued
       from turn s`,
    queued,
  );
  try {
    const res = await db.query<StoredTurn>(statement.text, statement.values);
    return storedTurn(res.rows[0]);
  } catch (err) {
    if (failedRequirement(err, JOB_QUEUED)) throw new Error("pg-boss did not accept the chat job", { cause: err });
    throw err;
  }
}

/**
 * The row insertTurnWithMessages returns for `t` stored claimed by `t.claimedBy`, made here
 * before the statement runs: the worker beside the web role begins a turn while it is stored
 * (jobs/hand-off.ts). Column for column as the statement writes them, the JSON columns as jsonb
 * gives them back and the real ones as float4 does (db/jsonb-value.ts); `at` stands for the
 * statement's now(). test/jobs/hand-off.test.ts compares it with a claim of the stored turn.
 */
export function insertedTurn(t: TurnWithMessages & { claimedBy: string }, at: Date): StoredTurn {
  return {
    id: t.turnId,
    conversation_id: t.conversationId,
    status: "running",
    model: t.model,
    temperature: asReal(t.temperature),
    top_p: asReal(t.topP),
    top_k: t.topK ?? null,
    max_tokens: t.maxTokens,
    seed: t.seed,
    stop: [...t.stop],
    stream: t.stream,
    job_id: t.jobId,
    worker_id: t.claimedBy,
    attempts: 1,
    content: null,
    reasoning: null,
    reasoning_tokens: null,
    thought_budget: t.thoughtBudget ?? null,
    thought_effort: t.thoughtEffort ?? null,
    finish_reason: null,
    prompt_tokens: null,
    completion_tokens: null,
    cached_tokens: null,
    error: null,
    cancel_requested_at: null,
    created_at: at,
    started_at: at,
    finished_at: null,
    prompt_end_position: t.promptEndPosition,
    tools: t.tools?.length ? (asJsonb(t.tools) as ToolSpec[]) : null,
    tool_choice: asJsonb(t.toolChoice) as ToolChoice | null,
    tool_calls: null,
    parallel_tool_calls: t.parallelToolCalls ?? null,
    response_format: asJsonb(t.responseFormat) as ResponseFormat | null,
    presence_penalty: asReal(t.presencePenalty),
    frequency_penalty: asReal(t.frequencyPenalty),
    logit_bias: t.logitBias && Object.keys(t.logitBias).length ? (asJsonb(t.logitBias) as Record<string, number>) : null,
    instructions: t.instructions ?? null,
    purpose: t.purpose ?? "chat",
    prompt: null,
    suffix: null,
    scope: t.scope ?? DEFAULT_SCOPE,
  };
}

/** The row a storing statement returned, without the columns that only checked it. */
function storedTurn(row: (StoredTurn & { inserted?: unknown; queued?: unknown }) | undefined): StoredTurn {
  if (!row) throw new Error("storing the turn returned no row");
  const { inserted: _inserted, queued: _queued, ...turn } = row;
  return turn;
}

/** A text completion as it is queued: its prompt (and suffix) on the turn, no conversation. */
export interface NewCompletion {
  turnId: string;
  jobId: string;
  model: string;
  prompt: string;
  suffix: string | null;
  temperature: number | null;
  topP: number | null;
  topK: number | null;
  maxTokens: number;
  seed: number | null;
  stop: string[];
  stream: boolean;
  presencePenalty: number | null;
  frequencyPenalty: number | null;
  logitBias: Record<string, number> | null;
  /** As TurnWithMessages.claimedBy. */
  claimedBy?: string | undefined;
}

/** Stores a queued text completion and queues its job, in one statement (as insertTurnWithMessages does a chat's). */
export async function insertCompletion(db: Queryable, t: NewCompletion, job: ForeignStatement): Promise<StoredTurn> {
  const queued = t.claimedBy === undefined ? job : insertTakenJob(job);
  const statement = build(
    sql`with job as (${foreign(queued)}),
     turn as (
       insert into turns as t (id, conversation_id, model, temperature, top_p, top_k, max_tokens, seed, stop, stream, job_id,
                          presence_penalty, frequency_penalty, logit_bias, purpose, prompt, suffix, status, worker_id, attempts, started_at)
       values (${t.turnId}, null, ${t.model}, ${t.temperature}, ${t.topP}, ${t.topK}, ${t.maxTokens}, ${t.seed}, ${t.stop}, ${t.stream},
               ${t.jobId}, ${t.presencePenalty}, ${t.frequencyPenalty},
               ${t.logitBias && Object.keys(t.logitBias).length ? JSON.stringify(t.logitBias) : null}::jsonb, 'completion', ${t.prompt}, ${t.suffix},
               ${insertedClaim(t.claimedBy)})
       returning ${raw(TURN_COLUMNS)})
     select ${raw(turnColumns("s"))}, null::text as scope,
            psyche_require((select count(*) from job) = 1, ${JOB_QUEUED}) as queued
       from turn s`,
    queued,
  );
  try {
    const res = await db.query<StoredTurn>(statement.text, statement.values);
    return storedTurn(res.rows[0]);
  } catch (err) {
    if (failedRequirement(err, JOB_QUEUED)) throw new Error("pg-boss did not accept the completion's job", { cause: err });
    throw err;
  }
}

export async function getTurn(db: Queryable, id: string): Promise<Turn | undefined> {
  const res = await db.query<Turn>(`select ${TURN_COLUMNS} from turns t where t.id = $1`, [id]);
  return res.rows[0];
}

/** A message of a claimed turn's transcript, where it stands in it, and any context placed before it. */
export interface PromptTranscriptMessage {
  position: number;
  role: string;
  content: string;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  /** The mood and memories an earlier turn put before this user message (migrations/000031_message_context.sql). */
  context: string | null;
}

export interface ClaimedTurn extends Turn {
  /** The prompt's messages: the active transcript up to the turn's prompt end. */
  prompt_messages: PromptTranscriptMessage[];
  /** Text an earlier worker already streamed for this turn, its tokens and last sequence number. */
  streamed_text: string;
  streamed_tokens: number;
  last_seq: number;
  /** Its conversation's scope: what the turn recalls from and stores its memories in; null for a text completion's. */
  scope: string | null;
}

/**
 * Takes a queued turn for `workerId` and returns it with everything generation needs, in one
 * round trip. Only the turn's current job may claim it: a stale job (one replaced when its
 * worker died) finds nothing to do, as does a finished or cancelled turn.
 */
export async function claimTurn(db: Queryable, id: string, jobId: string, workerId: string): Promise<ClaimedTurn | undefined> {
  const statement = build(sql`with claimed as (${claimSql(id, sql`${jobId}::uuid`, workerId)}) select ${CLAIMED_COLUMNS} from claimed c`);
  const res = await db.query<ClaimedTurn>(statement.text, statement.values);
  return res.rows[0];
}

/** Marks turn `id` running under `workerId` if `job` (an SQL fragment) is still its job; returns the turn's row. */
const claimSql = (id: string, job: Sql, workerId: string) =>
  sql`update turns t set status = 'running', worker_id = ${workerId}::uuid, attempts = attempts + 1,
         started_at = coalesce(started_at, now())
     where t.id = ${id}::uuid and t.job_id = ${job} and t.status = 'queued' returning ${raw(TURN_COLUMNS)}`;

/** A claimed turn `c` with everything generation needs (ClaimedTurn). */
const CLAIMED_COLUMNS = raw(`${turnColumns("c")},
       coalesce((select json_agg(json_build_object('position', m.position, 'role', m.role, 'content', m.content, 'tool_calls', m.tool_calls,
                                            'tool_call_id', m.tool_call_id, 'context', m.context) order by m.position)
                 from messages m
                 where m.conversation_id = c.conversation_id and m.superseded_at is null
                   and (c.prompt_end_position is null or m.position <= c.prompt_end_position)), '[]'::json) as prompt_messages,
       coalesce((select string_agg(e.content, '' order by e.seq) from turn_events e where e.turn_id = c.id and e.kind = 'delta'), '') as streamed_text,
       coalesce((select sum(e.tokens)::int from turn_events e where e.turn_id = c.id), 0) as streamed_tokens,
       coalesce((select max(e.seq) from turn_events e where e.turn_id = c.id), 0) as last_seq,
       (select v.scope from conversations v where v.id = c.conversation_id) as scope`);

/** What takeQueuedTurn took: the job, and the turn unless it was no longer queued. */
export interface TakenTurn {
  jobId: string;
  turn: ClaimedTurn | undefined;
}

/**
 * Takes queued turn `id` by its job and claims it for `workerId`, in one round trip: the fetch
 * and the claim a chat makes on its way to the engine, for a worker signalled with the turn's
 * id (workers/inference-worker.ts). Undefined when its job is no longer waiting (another worker
 * took it, or it waits for a retry's time); a taken job whose turn was cancelled in between comes
 * back without the turn, for the worker to complete.
 */
export async function takeQueuedTurn(db: Queryable, id: string, queue: string, workerId: string): Promise<TakenTurn | undefined> {
  const statement = build(
    sql`with job as (${takeJobSql(queue, sql`(select t.job_id from turns t where t.id = ${id}::uuid and t.status = 'queued')`)}),
     claimed as (${claimSql(id, sql`(select id from job)`, workerId)})
     select j.id as taken_job_id, ${CLAIMED_COLUMNS}
     from job j left join claimed c on true`,
  );
  const res = await db.query<ClaimedTurn & { taken_job_id: string }>(statement.text, statement.values);
  const row = res.rows[0];
  if (!row) return undefined;
  const { taken_job_id: jobId, ...turn } = row;
  return { jobId, turn: turn.id ? turn : undefined };
}

/** A turn's last streamed text, written with its end (finishTurn). */
export interface TailEvent {
  seq: number;
  content: string;
  tokens: number;
  /** Default "delta": the reply's text. */
  kind?: "delta" | "reasoning";
}

export interface TurnResult {
  content: string;
  /** The thought, where the model had one. */
  reasoning?: string | undefined;
  reasoningTokens?: number | undefined;
  finishReason: FinishReason;
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number | undefined;
  toolCalls?: CheckedToolCall[] | undefined;
  /** Psyche's own tool calls made during the turn, with their results. */
  serverToolCalls?: { name: string; arguments: string; result: string }[] | undefined;
}

/**
 * Finishes a turn held by `workerId` in one statement: its result, the reply as the
 * conversation's next message, the closing `done` event (its content the finish reason), the
 * conversation's last activity, `memoryJob` (pg-boss's own insert, jobs/queue.ts
 * sendStatement) where given, and the completion of `chatJob`, the job the worker took the turn
 * with, where given. Returns the closing event, or undefined (nothing written, no job queued or
 * completed) if the worker no longer holds the turn. One round trip: as a transaction (begin,
 * this, the job, commit) it was four, and pg-boss's complete one more, each a wake of the
 * backend that the next turns in a burst wait behind (bench/vs-llama-server.ts). `tail`, the
 * stream's last text not yet written (conversation/event-writer.ts), goes in as its delta event
 * just before the closing one: a separate write was one more round trip for every turn.
 * `context`, the mood and memories the turn recalled, is kept on the user message it was put
 * before (migrations/000031_message_context.sql), unless that message has one already.
 */
export async function finishTurn(
  db: Queryable,
  id: string,
  workerId: string,
  r: TurnResult,
  reply: NewMessage,
  {
    memoryJob,
    chatJob,
    tail,
    context,
  }: {
    memoryJob?: ForeignStatement | undefined;
    chatJob?: { queue: string; id: string } | undefined;
    tail?: TailEvent | undefined;
    context?: { position: number; text: string } | undefined;
  } = {},
): Promise<TurnEvent | undefined> {
  const m = messageArrays([reply]);
  // A data-modifying part runs whatever the others do: the memory job's insert is undone only
  // by the statement failing, where the turn was not the worker's to finish (`fin` is empty) or
  // pg-boss inserted nothing (`job`). The chat job's id comes through `fin`: a turn not finished
  // here completes nothing.
  const statement = build(
    sql`with ${memoryJob ? sql`job as (${foreign(memoryJob)}),` : empty}
       fin as (
         update turns set status = case when ${r.finishReason} = 'cancelled' then 'cancelled' else 'done' end,
                content = ${r.content}, reasoning = ${r.reasoning || null}, reasoning_tokens = ${r.reasoning ? (r.reasoningTokens ?? 0) : null}::int,
                finish_reason = ${r.finishReason}, prompt_tokens = ${r.promptTokens},
                completion_tokens = ${r.completionTokens}, tool_calls = ${r.toolCalls?.length ? JSON.stringify(r.toolCalls) : null}::jsonb,
                server_tool_calls = ${r.serverToolCalls?.length ? JSON.stringify(r.serverToolCalls) : null}::jsonb,
                cached_tokens = ${r.cachedTokens ?? null}, finished_at = now()
         where id = ${id} and worker_id = ${workerId} and status = 'running'
         returning id, conversation_id),
       reply as (
         insert into messages (conversation_id, position, role, content, name, tool_calls, tool_call_id, turn_id)
         select f.conversation_id, coalesce((select max(position) from messages where conversation_id = f.conversation_id), 0) + 1,
                ${m.roles[0]}, ${m.contents[0]}, ${m.names[0]}, ${m.toolCalls[0]}::jsonb, ${m.toolCallIds[0]}, f.id
         from fin f
         -- A text completion belongs to no conversation: its text is the turn's alone.
         where f.conversation_id is not null
         returning 1),
       ${
         tail
           ? sql`tail as (
         insert into turn_events (turn_id, seq, kind, content, tokens)
         select f.id, ${tail.seq}::int, ${tail.kind ?? "delta"}, ${tail.content}, ${tail.tokens}::int from fin f
         returning seq),`
           : empty
       }
       closing as (
         insert into turn_events (turn_id, seq, kind, content)
         select f.id, greatest(coalesce((select max(e.seq) from turn_events e where e.turn_id = f.id), 0)${tail ? sql`, (select seq from tail)` : empty}) + 1,
                'done', ${r.finishReason}
         from fin f
         returning seq),
       ${
         context
           ? sql`placed as (
         update messages set context = ${context.text}
         where conversation_id = (select conversation_id from fin) and position = ${context.position}::int and role = 'user'
           and superseded_at is null and context is null
         returning 1),`
           : empty
       }
       touched as (
         update conversations set last_active_at = now() where id in (select conversation_id from fin) returning 1)
       ${chatJob ? sql`, completed as (${completeJobSql(chatJob.queue, sql`(select ${chatJob.id}::uuid from fin)`)})` : empty}
       ${
         memoryJob
           ? sql`select (select seq from closing) as seq,
                    psyche_require(exists (select 1 from fin), ${TURN_HELD}) as held,
                    psyche_require((select count(*) from job) = 1, ${JOB_QUEUED}) as queued`
           : sql`select seq from closing`
       }`,
    memoryJob,
  );
  let res: { rows: { seq: number | null }[] };
  try {
    res = await db.query<{ seq: number | null }>(statement.text, statement.values);
  } catch (err) {
    // A turn taken from this worker is the expected case: nothing written.
    if (failedRequirement(err, TURN_HELD)) return undefined;
    if (failedRequirement(err, JOB_QUEUED)) throw new Error("pg-boss did not accept the turn's memory job", { cause: err });
    throw err;
  }
  const seq = res.rows[0]?.seq;
  return seq === undefined || seq === null ? undefined : { seq, kind: "done", content: r.finishReason };
}

export async function failTurn(db: Queryable, id: string, error: string): Promise<boolean> {
  const res = await db.query(
    `update turns set status = 'failed', error = $2, finished_at = now()
     where id = $1 and status in ('queued', 'running')`,
    [id, error],
  );
  return res.rowCount === 1;
}

/** Whether any turn is queued or being generated (the partial index turns_unfinished answers it). */
export async function chatsUnderWay(db: Queryable): Promise<boolean> {
  const res = await db.query<{ busy: boolean }>("select exists (select 1 from turns where status in ('queued', 'running')) as busy");
  return res.rows[0]?.busy === true;
}

/** Records a cancellation request; returns the turn's status, or undefined if no such turn. */
export async function requestCancel(db: Queryable, id: string): Promise<TurnStatus | undefined> {
  const res = await db.query<{ status: TurnStatus }>(
    `update turns set cancel_requested_at = coalesce(cancel_requested_at, now())
     where id = $1 returning status`,
    [id],
  );
  return res.rows[0]?.status;
}

/** Running turns whose worker is gone: no heartbeat for `staleMs`, stopped, or never registered. */
export async function orphanedTurns(
  db: Queryable,
  staleMs: number,
): Promise<{ id: string; job_id: string | null; attempts: number; worker_id: string | null; pid: number | null; host: string | null }[]> {
  const res = await db.query(
    `select t.id, t.job_id, t.attempts, t.worker_id, w.pid, w.host, w.heartbeat_at
     from turns t left join inference_workers w on w.id = t.worker_id
     where t.status = 'running'
       and (w.id is null or w.stopped_at is not null or w.heartbeat_at < now() - make_interval(secs => $1::float8 / 1000))`,
    [staleMs],
  );
  return res.rows;
}

/** Running turns held by workers on `host`, with their pids: for the fast dead-pid check. */
export async function runningTurnsOnHost(
  db: Queryable,
  host: string,
  exceptWorker: string,
): Promise<{ id: string; job_id: string | null; worker_id: string; pid: number; attempts: number }[]> {
  const res = await db.query(
    `select t.id, t.job_id, t.worker_id, t.attempts, w.pid from turns t join inference_workers w on w.id = t.worker_id
     where t.status = 'running' and w.host = $1 and w.id <> $2`,
    [host, exceptWorker],
  );
  return res.rows;
}

/** Puts a running turn back in the queue, if `fromWorker` (or nobody) still holds it. */
export async function requeueTurn(db: Queryable, id: string, fromWorker: string | null, jobId: string): Promise<boolean> {
  const res = await db.query(
    `update turns set status = 'queued', worker_id = null, job_id = $3
     where id = $1 and status = 'running' and worker_id is not distinct from $2`,
    [id, fromWorker, jobId],
  );
  return res.rowCount === 1;
}

/** Of `ids`, the turns `workerId` still holds running. */
export async function heldTurns(
  db: Queryable,
  workerId: string,
  ids: readonly string[],
): Promise<{ id: string; job_id: string | null; attempts: number; worker_id: string | null }[]> {
  const res = await db.query(
    `select id, job_id, attempts, worker_id from turns where worker_id = $1 and status = 'running' and id = any($2::uuid[])`,
    [workerId, ids],
  );
  return res.rows;
}

/** Moves a turn that is still queued from a stranded job to a new one (jobs/reclaim.ts). */
export async function moveQueuedTurn(db: Queryable, id: string, fromJob: string, toJob: string): Promise<boolean> {
  const res = await db.query("update turns set job_id = $3 where id = $1 and status = 'queued' and job_id = $2", [id, fromJob, toJob]);
  return res.rowCount === 1;
}

export interface TurnExchange {
  status: TurnStatus;
  conversation_id: string;
  /** The latest user message of the turn's prompt. */
  user: string | null;
  reply: string | null;
  purpose: TurnPurpose;
  /** Its conversation's scope. */
  scope: string;
}

/** What a finished turn was about: the last thing the user said and the reply. */
export async function turnExchange(db: Queryable, id: string): Promise<TurnExchange | undefined> {
  const res = await db.query<TurnExchange>(
    `select t.status, t.conversation_id, t.content as reply, t.purpose,
       (select v.scope from conversations v where v.id = t.conversation_id) as scope,
       (select m.content from messages m
        where m.conversation_id = t.conversation_id and m.role = 'user' and m.position <= t.prompt_end_position
        order by m.position desc limit 1) as user
     from turns t where t.id = $1`,
    [id],
  );
  return res.rows[0];
}

/** The turn that wrote a message (an assistant message's turn, whose settings a continuation reuses). */
export async function turnOfMessage(db: Queryable, messageId: number): Promise<Turn | undefined> {
  const res = await db.query<Turn>(`select ${TURN_COLUMNS} from messages m join turns t on t.id = m.turn_id where m.id = $1`, [messageId]);
  return res.rows[0];
}
