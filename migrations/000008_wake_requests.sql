-- A wake request is a fact, not only a signal: a reverie polls for it (dreams/wake-watch.ts),
-- so POST /dream/wake wakes it on deployments where LISTEN/NOTIFY does not reach the worker.
alter table dream_settings add column wake_requested_at timestamptz;
comment on column dream_settings.wake_requested_at is 'The last POST /dream/wake (or MCP wake): a reverie started before it stops';
