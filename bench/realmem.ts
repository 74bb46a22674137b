// The RealMem dialogues (../shared/datasets/realmem, Apache-2.0): each persona's sessions in
// order, every turn keyed by session and position, and each query's evidence turns. The
// evidence is named by extracted-memory items; the turn they came from is found by its text
// (source_turn is 1-based in most items and 0-based in some, as the dataset's README says).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const TurnSchema = z.object({
  speaker: z.string(),
  content: z.string(),
  is_query: z.boolean().nullish(),
  query_id: z.string().nullish(),
  category_name: z.string().nullish(),
  memory_used: z.array(z.object({ session_uuid: z.string(), content: z.unknown() })).nullish(),
});
const SessionSchema = z.object({
  session_uuid: z.string(),
  current_time: z.string(),
  dialogue_turns: z.array(TurnSchema),
  // An item's content is text in most sessions and a structured object in a few.
  extracted_memory: z.array(z.object({ content: z.unknown(), source_content_snapshot: z.string().nullish() })).nullish(),
});
const FileSchema = z.object({ dialogues: z.array(SessionSchema) });

export interface Turn {
  /** `<session>#<position>`. */
  key: string;
  session: string;
  speaker: string;
  content: string;
  /** When it was said: its session's date, a second per position (sessionTime). */
  at: Date;
}

export interface Query {
  id: string;
  category: string;
  text: string;
  /** The session it is asked in: a chat there holds that session's turns in its transcript. */
  session: string;
  /** When it is asked (sessionTime). */
  at: Date;
  /** Turn keys of the evidence (only those whose text was found). */
  evidenceTurns: string[];
  evidenceSessions: string[];
}

/** What happens, in order: a turn to store, or a query to answer from what came before. */
export type Step = { kind: "turn"; turn: Turn } | { kind: "query"; query: Query };

export interface Persona {
  name: string;
  steps: Step[];
}

export function realmemDir(root: string): string | undefined {
  const dir = process.env.REALMEM_DIR ?? join(root, "..", "shared", "datasets", "realmem");
  return existsSync(dir) ? dir : undefined;
}

/**
 * A session's date ("2025-12-15 (Monday)", the dataset gives no hour) and a second per turn, so
 * the turns of a session keep their order by time (a turn is indexed beside the latest before it,
 * db/sql/memory-terms.ts).
 */
function sessionTime(currentTime: string, position: number): Date {
  const day = /^\d{4}-\d{2}-\d{2}/.exec(currentTime)?.[0];
  if (!day) throw new Error(`RealMem: a session's current_time is not a date: ${currentTime}`);
  return new Date(Date.parse(`${day}T00:00:00Z`) + position * 1000);
}

export function loadPersona(file: string): Persona {
  const { dialogues } = FileSchema.parse(JSON.parse(readFileSync(file, "utf8")));
  const bySession = new Map(dialogues.map((s) => [s.session_uuid, s]));
  const steps: Step[] = [];
  for (const s of dialogues) {
    s.dialogue_turns.forEach((t, i) => {
      if (t.is_query && t.query_id) {
        const used = s.dialogue_turns[i + 1]?.memory_used ?? [];
        const turns = new Set<string>();
        for (const u of used) {
          const source = bySession.get(u.session_uuid);
          const named = JSON.stringify(u.content);
          const snapshot = source?.extracted_memory?.find((m) => JSON.stringify(m.content) === named)?.source_content_snapshot;
          const at = snapshot ? source!.dialogue_turns.findIndex((x) => x.content === snapshot) : -1;
          if (at >= 0) turns.add(`${u.session_uuid}#${at}`);
        }
        steps.push({
          kind: "query",
          query: {
            id: t.query_id,
            category: t.category_name ?? "unknown",
            text: t.content,
            session: s.session_uuid,
            at: sessionTime(s.current_time, i),
            evidenceTurns: [...turns],
            evidenceSessions: [...new Set(used.map((u) => u.session_uuid))],
          },
        });
      }
      steps.push({
        kind: "turn",
        turn: {
          key: `${s.session_uuid}#${i}`,
          session: s.session_uuid,
          speaker: t.speaker,
          content: t.content,
          at: sessionTime(s.current_time, i),
        },
      });
    });
  }
  return { name: file.replace(/^.*\//, "").replace(/_dialogues_256k\.json$/, ""), steps };
}

export function personaFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => join(dir, f));
}
