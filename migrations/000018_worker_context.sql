-- The tokens of context each inference worker's model has per conversation, so that a web
-- process without the model can refuse a prompt that does not fit before it is queued
-- (src/conversation/context-fit.ts).
alter table inference_workers add column context_size integer;
comment on column inference_workers.context_size is 'tokens of context per conversation (per sequence) of the loaded model; null when unknown';
