-- The reasoning effort the client asked for, where the family renders one in its prompt
-- (gpt-oss's Harmony "Reasoning: low"; src/inference/llama-engine.ts): beside the thought
-- budget, which bounds the thought's tokens on every family. Null: none asked.
alter table turns add column thought_effort text check (thought_effort in ('low', 'medium', 'high'));
