import type { Queryable } from "../pool.js";

export async function registerWorker(
  db: Queryable,
  w: { id: string; host: string; pid: number; model: string; contextSize?: number | undefined },
): Promise<void> {
  await db.query("insert into inference_workers (id, host, pid, model, context_size) values ($1, $2, $3, $4, $5)", [
    w.id,
    w.host,
    w.pid,
    w.model,
    w.contextSize ?? null,
  ]);
}

/** The smallest context of the live workers (any of them may take a turn); undefined when none says. */
export async function workersContextSize(db: Queryable, staleSeconds: number): Promise<number | undefined> {
  const res = await db.query<{ size: number | null }>(
    `select min(context_size)::int as size from inference_workers
     where stopped_at is null and heartbeat_at > now() - make_interval(secs => $1)`,
    [staleSeconds],
  );
  return res.rows[0]?.size ?? undefined;
}

export async function heartbeat(db: Queryable, id: string): Promise<void> {
  await db.query("update inference_workers set heartbeat_at = now() where id = $1", [id]);
}

export async function markWorkerStopped(db: Queryable, id: string): Promise<void> {
  await db.query("update inference_workers set stopped_at = now() where id = $1", [id]);
}

export interface WorkerStatus {
  id: string;
  model: string;
  seconds_since_heartbeat: number;
}

/** Workers that are not stopped, with the age of their last heartbeat. */
export async function liveWorkers(db: Queryable): Promise<WorkerStatus[]> {
  const res = await db.query<WorkerStatus>(
    `select id, model, extract(epoch from now() - heartbeat_at)::float8 as seconds_since_heartbeat
     from inference_workers where stopped_at is null order by heartbeat_at desc limit 20`,
  );
  return res.rows;
}
