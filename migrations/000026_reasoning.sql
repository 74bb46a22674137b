-- A reasoning model's thought, kept apart from what it said (src/inference/llama-engine.ts
-- splits them as the family's chat wrapper marks them): the turn's reasoning and its tokens,
-- and the stream's reasoning pieces as their own events. Memory is formed from `content` alone.
alter table turns add column reasoning text;
alter table turns add column reasoning_tokens integer;
-- The most tokens the thought may take, as the client asked (reasoning_effort, Anthropic's
-- thinking): 0 turns thinking off; null is the family's own default.
alter table turns add column thought_budget integer;
alter table turn_events drop constraint turn_events_kind_check;
alter table turn_events add constraint turn_events_kind_check check (kind in ('delta', 'reasoning', 'done', 'error'));
