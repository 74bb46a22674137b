-- Sampling controls a turn was asked for (OpenAI's presence_penalty, frequency_penalty and
-- logit_bias); null when not given.
alter table turns
  add column presence_penalty real,
  add column frequency_penalty real,
  add column logit_bias jsonb;
comment on column turns.logit_bias is 'Token id -> bias added to its logit (-100 bans it), as the client sent it';
