-- Text completions (POST /v1/completions, src/conversation/open-completion.ts): a prompt in,
-- text out, through the same queue, worker and event stream as a chat, but no conversation:
-- no persona, no recall, no memory formed, nothing in any transcript. Such a turn has no
-- conversation, its prompt (and a suffix, for fill-in-the-middle) kept on the turn itself.
alter table turns alter column conversation_id drop not null;
alter table turns add column prompt text;
alter table turns add column suffix text;
alter table turns drop constraint turns_purpose_check;
alter table turns add constraint turns_purpose_check check (purpose in ('chat', 'exploration', 'completion'));
alter table turns add constraint turns_completion_has_prompt
  check ((purpose = 'completion') = (conversation_id is null) and (purpose = 'completion') = (prompt is not null));
comment on column turns.prompt is 'A text completion''s prompt (purpose completion); null for a conversation''s turn';
comment on column turns.suffix is 'A text completion''s suffix: the text the completion leads into (fill-in-the-middle)';
