-- The mood's history keeps its first table name (users' SQL reads it); the code and the API
-- say "mood" (src/mood/, GET /v1/mood). Describe the table where psql's \d+ shows it.
comment on table emotion_log is 'The mood (valence and arousal in [-1, 1]) after each change: a turn, a dream, an API call, or decay toward the baseline. GET /v1/mood serves it.';
comment on column emotion_log.cause is 'What moved the mood: turn, dream, api or decay';
comment on column emotion_log.stimulus_valence is 'The valence of what happened (null for decay); valence is the mood after it';
