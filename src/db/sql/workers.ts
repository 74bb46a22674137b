import type { Queryable } from "../pool.js";

export async function registerWorker(db: Queryable, w: { id: string; host: string; pid: number; model: string }): Promise<void> {
  await db.query("insert into inference_workers (id, host, pid, model) values ($1, $2, $3, $4)", [w.id, w.host, w.pid, w.model]);
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
