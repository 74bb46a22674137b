// MCP's view of Psyche's inner state: mood, the working context of a conversation, the dream
// life (status, waking, the journal).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { conversationSummary } from "../db/sql/conversations.js";
import { JOURNAL_KINDS, JOURNAL_STATUSES, recentDreams } from "../db/sql/dreams.js";
import { dreamStatus, wakeUp } from "../dreams/status.js";
import type { WebServices } from "../web-services.js";
import { ConversationIdSchema } from "../conversation-id.js";
import { describeMood } from "../mood/mood.js";
import { failure, guarded, result } from "./result.js";

const day = (d: Date | string | null) => (d === null ? "never" : new Date(d).toISOString().replace("T", " ").slice(0, 19));

export function registerStateTools(server: McpServer, deps: WebServices): void {
  // get_mood, and get_emotion: its first name, which clients already call.
  for (const name of ["get_mood", "get_emotion"]) {
    server.registerTool(
      name,
      {
        title: "Psyche's mood",
        inputSchema: {},
        description:
          "Psyche's current mood: valence (unpleasant -1 to pleasant 1) and arousal (calm -1 to excited 1), decayed toward its baseline to now.",
        annotations: { readOnlyHint: true },
      },
      guarded(name, deps.log, async () => {
        const mood = await deps.mood.current();
        const text = describeMood(mood, "Psyche's current mood");
        return result(
          {
            valence: mood.valence,
            arousal: mood.arousal,
            updated_at: mood.updatedAt,
            baseline: deps.mood.settings.baseline,
            description: text,
          },
          text,
        );
      }),
    );
  }

  server.registerTool(
    "get_context_summary",
    {
      title: "Working context",
      description:
        "What Psyche is holding in mind: its mood, its dream state, and the latest messages of a conversation (the most recently active one by default).",
      inputSchema: {
        conversation_id: ConversationIdSchema.optional(),
        messages: z.number().int().min(1).max(50).default(6).describe("How many of the latest messages"),
      },
      annotations: { readOnlyHint: true },
    },
    guarded("get_context_summary", deps.log, async ({ conversation_id, messages }) => {
      const [conversation, mood, dream] = await Promise.all([
        conversationSummary(deps.pool, conversation_id ?? null, messages, 300),
        deps.mood.current(),
        dreamStatus(deps),
      ]);
      if (conversation_id && !conversation) return failure(`No conversation '${conversation_id}'`);
      const lines = [describeMood(mood, "Mood"), `Dream state: ${dream.state}${dream.kind ? ` (${dream.kind})` : ""}.`];
      if (conversation) {
        lines.push(
          "",
          `Conversation ${conversation.id}: ${conversation.message_count} messages, last active ${day(conversation.last_active_at)} UTC.`,
          ...conversation.recent.map(
            (m) => `- ${m.role}: ${m.content.replace(/\s+/g, " ")}${m.tool_calls ? ` [${m.tool_calls} tool calls]` : ""}`,
          ),
        );
      } else {
        lines.push("", "No conversation yet.");
      }
      return result(
        { mood: { valence: mood.valence, arousal: mood.arousal }, dream_state: dream.state, conversation: conversation ?? null },
        lines.join("\n"),
      );
    }),
  );

  server.registerTool(
    "dream_status",
    {
      title: "Dream status",
      inputSchema: {},
      description:
        "Whether Psyche is sleeping, dreaming (or reflecting, or in an idle thought), waking, or awake, and whether a chat may interrupt it (do-not-disturb).",
      annotations: { readOnlyHint: true },
    },
    guarded("dream_status", deps.log, async () => {
      const status = await dreamStatus(deps);
      const what = status.kind && status.kind !== "dream" ? `${status.state} (${status.kind})` : status.state;
      const dnd = status.dnd_until ? `; do-not-disturb until ${day(status.dnd_until)} UTC` : "";
      const about = status.topics.length ? `, about ${status.topics.join(", ")}` : "";
      const consolidating = status.consolidating ? "; consolidating memories" : "";
      return result(
        { ...status },
        `Psyche is ${what}${about}${status.since ? ` since ${day(status.since)} UTC` : ""}${dnd}${consolidating}.`,
      );
    }),
  );

  server.registerTool(
    "wake",
    {
      title: "Wake Psyche",
      inputSchema: {},
      description:
        "Interrupt a running dream, idle thought or reflection now (its partial text is kept in the journal), and end do-not-disturb.",
    },
    guarded("wake", deps.log, async () => {
      const woke = await wakeUp(deps);
      return result(
        { ...woke },
        woke.dream_id ? `Woke Psyche from ${woke.was} (journal entry ${woke.dream_id}).` : `Psyche was ${woke.was}; nothing to wake from.`,
      );
    }),
  );

  server.registerTool(
    "dream_journal",
    {
      title: "Dream journal",
      description:
        "Psyche's dream journal, newest first: dreams, reflections, idle thoughts and consolidations, with their text. Page back with `before`.",
      inputSchema: {
        limit: z.number().int().min(1).max(50).default(10),
        kind: z.enum(JOURNAL_KINDS).optional(),
        status: z.enum(JOURNAL_STATUSES).optional(),
        before: z.iso
          .datetime({ offset: true })
          .optional()
          .describe("Entries that began before this time (the previous page's next_before)"),
      },
      annotations: { readOnlyHint: true },
    },
    guarded("dream_journal", deps.log, async ({ limit, kind, status, before }) => {
      const rows = await recentDreams(deps.pool, { limit: limit + 1, kind, status, before: before ? new Date(before) : undefined });
      const page = rows.slice(0, limit);
      const nextBefore = rows.length > limit ? page.at(-1)!.started_at : null;
      const text = page.length
        ? page
            .map(
              (d) =>
                `### ${d.kind} ${d.id} (${d.status}, ${day(d.started_at)} UTC${d.focus ? `, on ${d.focus}` : ""})\n${d.content.trim() || "(no text)"}`,
            )
            .join("\n\n")
        : "The journal has no entries like that yet.";
      return result({ entries: page, next_before: nextBefore }, text);
    }),
  );
}
