// `psyche install claude-code` / `psyche uninstall claude-code`: Psyche's hooks in Claude Code's
// settings (~/.claude/settings.json, or a project's .claude/settings.json) and its MCP server
// (~/.claude.json, or the project's .mcp.json). Idempotent; a changed file keeps a timestamped
// backup beside it; uninstall removes what install adds and nothing else (another hook in the
// same group, another MCP server, any other key stay as they are).
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { UserError } from "../errors.js";
import { packageRoot } from "../paths.js";
import { CLAUDE_EVENT_NAMES, HOOK_EVENTS, HOOK_FIRST_ANSWER_MS, HOOK_WAIT_MS, type HookEvent } from "./hook-events.js";

export const MCP_SERVER_NAME = "psyche";

/** Which tools each hook listens to: every tool is counted for the check-in; only the shell runs tests. */
const MATCHERS: Partial<Record<HookEvent, string>> = { "pre-tool-use": "*", "post-tool-use": "Bash" };
/** Seconds Claude Code waits for a hook (the relay gives up sooner, PSYCHE_HOOK_TIMEOUT_MS). */
const TIMEOUT_SECONDS = 10;
/** The prompt hook's: it waits for a starting server, then its first answer (processes/hook.ts). */
const PROMPT_TIMEOUT_SECONDS = Math.ceil((HOOK_WAIT_MS + HOOK_FIRST_ANSWER_MS) / 1000) + 5;
const timeoutOf = (event: HookEvent) => (event === "user-prompt-submit" ? PROMPT_TIMEOUT_SECONDS : TIMEOUT_SECONDS);

export interface InstallOptions {
  /** The project directory for --project; user scope when undefined. */
  project?: string | undefined;
  home?: string | undefined;
  /** HTTP hooks (no process per call) for every event but session-start, which must be able to start the server. */
  http?: boolean | undefined;
  /** The server's URL, for HTTP hooks and the MCP server. */
  serverUrl: string;
  apiKey?: string | undefined;
  /** The command that runs `psyche` (default: this Node and this package's bin/psyche.js). */
  psyche?: string | undefined;
}

export interface FileChange {
  path: string;
  before: string | null;
  after: string;
  changed: boolean;
  notes: string[];
}

type Json = Record<string, unknown>;
const HookSchema = z.object({ type: z.string() }).passthrough();
const GroupSchema = z.object({ matcher: z.string().optional(), hooks: z.array(HookSchema) }).passthrough();
const HooksSchema = z.record(z.string(), z.array(GroupSchema));

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`);
export const defaultPsycheCommand = () => `${quote(process.execPath)} ${quote(join(packageRoot(), "bin", "psyche.js"))}`;

const OURS_COMMAND = new RegExp(`psyche(\\.js)?"?\\s+hook\\s+(${HOOK_EVENTS.join("|")})\\b`);
const OURS_URL = new RegExp(`/hooks/(${HOOK_EVENTS.join("|")})(\\?|$)`);
/** A hook entry install added (its command runs `psyche hook <event>`, or its URL is a Psyche hook route). */
export const isOurs = (h: Json): boolean =>
  (h.type === "command" && typeof h.command === "string" && OURS_COMMAND.test(h.command)) ||
  (h.type === "http" && typeof h.url === "string" && OURS_URL.test(h.url));

export function hookEntry(event: HookEvent, o: InstallOptions): Json & { type: string } {
  if (o.http && event !== "session-start") {
    return {
      type: "http",
      url: `${o.serverUrl.replace(/\/+$/, "")}/hooks/${event}`,
      timeout: TIMEOUT_SECONDS,
      ...(o.apiKey ? { headers: { Authorization: "Bearer $PSYCHE_API_KEY" }, allowedEnvVars: ["PSYCHE_API_KEY"] } : {}),
    };
  }
  return { type: "command", command: `${o.psyche ?? defaultPsycheCommand()} hook ${event}`, timeout: timeoutOf(event) };
}

export function mcpEntry(o: InstallOptions): Json {
  return {
    type: "http",
    url: `${o.serverUrl.replace(/\/+$/, "")}/mcp`,
    ...(o.apiKey ? { headers: { Authorization: "Bearer ${PSYCHE_API_KEY}" } } : {}),
  };
}

export function settingsPaths(o: Pick<InstallOptions, "project" | "home">): { settings: string; mcp: string } {
  const home = o.home ?? homedir();
  if (o.project) return { settings: join(resolve(o.project), ".claude", "settings.json"), mcp: join(resolve(o.project), ".mcp.json") };
  return { settings: join(home, ".claude", "settings.json"), mcp: join(home, ".claude.json") };
}

function readJson(path: string): { text: string | null; value: Json } {
  if (!existsSync(path)) return { text: null, value: {} };
  const text = readFileSync(path, "utf8");
  if (!text.trim()) return { text, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UserError(`${path} is not valid JSON (${(err as Error).message}); fix it first, Psyche will not overwrite it`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new UserError(`${path} does not hold a JSON object; Psyche will not overwrite it`);
  return { text, value: value as Json };
}

function hooksOf(path: string, settings: Json): z.infer<typeof HooksSchema> {
  if (settings.hooks === undefined) return {};
  const parsed = HooksSchema.safeParse(settings.hooks);
  if (!parsed.success)
    throw new UserError(`${path}: "hooks" is not in Claude Code's shape (event: [{matcher, hooks: [...]}]); fix it first`);
  return parsed.data;
}

const render = (value: Json) => `${JSON.stringify(value, null, 2)}\n`;

/** Adds the hooks: one group per event, unless a Psyche hook for the event is there already. */
export function withHooks(path: string, settings: Json, o: InstallOptions): { value: Json; notes: string[] } {
  const hooks = hooksOf(path, settings);
  const notes: string[] = [];
  for (const event of HOOK_EVENTS) {
    const name = CLAUDE_EVENT_NAMES[event];
    const groups = hooks[name] ?? [];
    if (groups.some((g) => g.hooks.some((h) => isOurs(h)))) {
      // An older install's command hook may give Claude Code too short a wait (the prompt hook now waits for a starting server).
      const short = (h: Json) => isOurs(h) && h.type === "command" && !(typeof h.timeout === "number" && h.timeout >= timeoutOf(event));
      if (groups.some((g) => g.hooks.some(short))) {
        hooks[name] = groups.map((g) => ({ ...g, hooks: g.hooks.map((h) => (short(h) ? { ...h, timeout: timeoutOf(event) } : h)) }));
        notes.push(`${name}: Psyche's hook now has ${timeoutOf(event)} s (it waits for a starting server)`);
      } else notes.push(`${name}: already has Psyche's hook`);
      continue;
    }
    const matcher = MATCHERS[event];
    hooks[name] = [...groups, { ...(matcher ? { matcher } : {}), hooks: [hookEntry(event, o)] }];
    notes.push(`${name}: added psyche hook ${event}`);
  }
  return { value: { ...settings, hooks }, notes };
}

/** Removes Psyche's hook entries, and the groups and events they leave empty. */
export function withoutHooks(path: string, settings: Json): { value: Json; notes: string[] } {
  if (settings.hooks === undefined) return { value: settings, notes: [] };
  const hooks = hooksOf(path, settings);
  const notes: string[] = [];
  const kept: Record<string, unknown> = {};
  for (const [name, groups] of Object.entries(hooks)) {
    const left = groups
      .map((g) => {
        const others = g.hooks.filter((h) => !isOurs(h));
        if (others.length < g.hooks.length) notes.push(`${name}: removed Psyche's hook`);
        return others.length === g.hooks.length ? g : others.length ? { ...g, hooks: others } : null;
      })
      .filter((g) => g !== null);
    if (left.length) kept[name] = left;
  }
  const { hooks: _drop, ...rest } = settings;
  return { value: Object.keys(kept).length ? { ...rest, hooks: kept } : rest, notes };
}

export function withMcp(settings: Json, o: InstallOptions): { value: Json; notes: string[] } {
  const servers = (settings.mcpServers ?? {}) as Json;
  if (servers[MCP_SERVER_NAME] !== undefined) {
    const same = JSON.stringify(servers[MCP_SERVER_NAME]) === JSON.stringify(mcpEntry(o));
    return {
      value: settings,
      notes: [same ? "MCP server psyche: already there" : "MCP server psyche: an entry of that name exists and differs; left as it is"],
    };
  }
  return {
    value: { ...settings, mcpServers: { ...servers, [MCP_SERVER_NAME]: mcpEntry(o) } },
    notes: [`MCP server psyche: added (${mcpEntry(o).url as string})`],
  };
}

export function withoutMcp(settings: Json, o: InstallOptions): { value: Json; notes: string[] } {
  const servers = settings.mcpServers as Json | undefined;
  if (!servers || servers[MCP_SERVER_NAME] === undefined) return { value: settings, notes: [] };
  if (JSON.stringify(servers[MCP_SERVER_NAME]) !== JSON.stringify(mcpEntry(o))) {
    return { value: settings, notes: ["MCP server psyche: not the entry install adds (another server URL or key?); left as it is"] };
  }
  const { [MCP_SERVER_NAME]: _drop, ...others } = servers;
  const { mcpServers: _all, ...rest } = settings;
  return { value: Object.keys(others).length ? { ...rest, mcpServers: others } : rest, notes: ["MCP server psyche: removed"] };
}

function plan(path: string, edit: (value: Json) => { value: Json; notes: string[] }): FileChange {
  const { text, value } = readJson(path);
  const next = edit(value);
  const after = render(next.value);
  const changed = JSON.stringify(next.value) !== JSON.stringify(value);
  return { path, before: text, after, changed, notes: next.notes };
}

export function planInstall(o: InstallOptions): FileChange[] {
  const paths = settingsPaths(o);
  return [plan(paths.settings, (v) => withHooks(paths.settings, v, o)), plan(paths.mcp, (v) => withMcp(v, o))];
}

export function planUninstall(o: InstallOptions): FileChange[] {
  const paths = settingsPaths(o);
  return [plan(paths.settings, (v) => withoutHooks(paths.settings, v)), plan(paths.mcp, (v) => withoutMcp(v, o))];
}

/** Writes the changed files, each after a backup of what it held; returns the backups' paths. */
export function applyChanges(changes: readonly FileChange[], now = new Date()): string[] {
  const backups: string[] = [];
  for (const c of changes.filter((c) => c.changed)) {
    mkdirSync(dirname(c.path), { recursive: true });
    if (c.before !== null) {
      const backup = `${c.path}.psyche-backup-${now.toISOString().replace(/[:.]/g, "-")}`;
      copyFileSync(c.path, backup);
      backups.push(backup);
    }
    // Whole or not at all: a crash mid-write must not leave Claude Code a broken settings file.
    const tmp = `${c.path}.psyche-tmp-${process.pid}`;
    writeFileSync(tmp, c.after, { mode: c.before === null ? 0o600 : statSync(c.path).mode & 0o777 });
    renameSync(tmp, c.path);
  }
  return backups;
}
