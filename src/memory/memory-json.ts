// A memory as the API and MCP show it.
import type { MemoryRow } from "../db/sql/memories.js";

export function memoryJson(m: MemoryRow) {
  return {
    id: m.id,
    object: "memory",
    kind: m.kind,
    content: m.content,
    summary: m.summary,
    tags: m.tags,
    importance: m.importance,
    valence: m.valence,
    arousal: m.arousal,
    source: { kind: m.source_kind, id: m.source_id },
    conversation_id: m.conversation_id,
    citations: m.citations,
    embedder: m.embedder,
    created_at: m.created_at,
    last_accessed_at: m.last_accessed_at,
    access_count: m.access_count,
    reinforcements: m.reinforcements,
    version: m.version,
    updated_at: m.updated_at,
    supersedes: m.supersedes,
    superseded_by: m.superseded_by,
    superseded_at: m.superseded_at,
    scope: m.scope,
  };
}
