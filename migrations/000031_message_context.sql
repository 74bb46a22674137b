-- The mood and memories a turn was answered with stay where they were put (src/conversation/run-turn.ts,
-- buildPrompt): before the user message they were recalled for. A later turn of the conversation
-- renders them there again, so the model's cached reading of the transcript stays valid past them,
-- and the steps of an agent loop that answer the same user message reuse them without recalling.
alter table messages add column context text;
comment on column messages.context is
  'The mood and memories put before this user message when a turn answered it (null: none placed)';
