// One Hermes run: the server, the workspace's tools, the transcript, presence, and the two
// things Hermes does with them: answering the user (the ReAct loop with every tool) and, while
// the user is away, exploring the workspace (read-only tools only, a cooldown between calls, a few rounds at most).
import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import { type HermesArgs, toolChoiceOf } from "./args.js";
import { react, type LoopOptions, type LoopResult, type Transcript } from "./react-loop.js";
import { PsycheServer } from "./server.js";
import { LocalTools, SAFE_TOOLS, TOOL_DEFINITIONS, TOOL_NAMES, type ToolName } from "./tools.js";
import { PrivateFiles } from "./private-files.js";
import { Workspace } from "./workspace.js";

export type Callbacks = Pick<LoopOptions, "onText" | "onTool" | "onTurn" | "onReconnecting">;
export type Confirm = (name: ToolName, args: Record<string, unknown>) => Promise<boolean>;

export interface Status {
  valence: number | null;
  arousal: number | null;
  dream: string | null;
  clients: number | null;
  reconnecting: boolean;
}

export class HermesSession {
  readonly server: PsycheServer;
  readonly workspace: Workspace;
  private readonly privateFiles: PrivateFiles;
  readonly clientId = randomUUID();
  private readonly transcript: Transcript = { history: [], unsent: [] };
  private readonly idleTranscript: Transcript = { history: [], unsent: [] };
  private confirmer: Confirm = async () => false;
  private heartbeat: NodeJS.Timeout | undefined;
  private present = false;
  /** The turn being generated, so Ctrl-C can cancel it on the server. */
  currentTurn: string | null = null;
  private turnWaiters: ((id: string | null) => void)[] = [];
  status: Status = { valence: null, arousal: null, dream: null, clients: null, reconnecting: false };
  onStatus: (s: Status) => void = () => {};

  constructor(readonly args: HermesArgs) {
    this.server = new PsycheServer(args.server, args.apiKey);
    this.workspace = new Workspace(args.workspace);
    this.privateFiles = new PrivateFiles(this.workspace.root, args.idleExclude);
  }

  /** Who confirms create_file, edit_file and execute_bash (the UI asks; print mode declines). */
  setConfirm(confirm: Confirm): void {
    this.confirmer = confirm;
  }

  private tools(signal: AbortSignal | undefined, unattended: boolean): LocalTools {
    return new LocalTools(this.workspace, {
      privateFiles: this.privateFiles,
      unattended,
      confirm: (name, args) => (this.args.yes ? Promise.resolve(true) : this.confirmer(name, args)),
      bashTimeoutMs: this.args.bashTimeoutSeconds * 1000,
      bashOutputChars: 16_000,
      signal,
    });
  }

  /** Connects (throws a readable HermesError) and starts saying it is here. */
  async open(): Promise<void> {
    await this.server.connect();
    if (this.server.isPsyche) await this.beat();
  }

  /** Presence (POST /v1/presence) at the pace the server asks; a failed beat means "reconnecting". */
  private async beat(): Promise<void> {
    let every = 15;
    try {
      const res = (await this.server.request("POST", "/v1/presence", { client_id: this.clientId, name: "hermes" })) as {
        heartbeat_seconds?: number;
        present?: number;
      };
      every = res.heartbeat_seconds ?? every;
      this.present = true;
      this.setStatus({ reconnecting: false, clients: res.present ?? null });
    } catch {
      every = 1;
      this.setStatus({ reconnecting: true });
    }
    this.heartbeat = setTimeout(() => void this.beat(), every * 1000);
    this.heartbeat.unref();
  }

  /** Says goodbye (DELETE /v1/presence/:id), at most a couple of seconds. */
  async close(): Promise<void> {
    if (this.heartbeat) clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
    if (!this.present) return;
    await this.server.request("DELETE", `/v1/presence/${this.clientId}`, undefined, AbortSignal.timeout(2000)).catch(() => undefined);
    this.present = false;
  }

  setStatus(change: Partial<Status>): void {
    this.status = { ...this.status, ...change };
    this.onStatus(this.status);
  }

  /** The mood and the dream state, for the status bar (Psyche only). */
  async refreshStatus(): Promise<void> {
    if (!this.server.isPsyche) return;
    try {
      const [mood, dream] = (await Promise.all([this.server.get("/v1/emotion"), this.server.get("/dream/status")])) as [
        { valence: number; arousal: number },
        { state: string; kind: string | null; clients?: unknown[] },
      ];
      this.setStatus({
        valence: mood.valence,
        arousal: mood.arousal,
        dream: dream.kind && dream.state === "dreaming" ? `${dream.state} (${dream.kind})` : dream.state,
        clients: dream.clients?.length ?? null,
        reconnecting: false,
      });
    } catch {
      this.setStatus({ reconnecting: true });
    }
  }

  /** The user's message, through the ReAct loop with every tool. */
  ask(message: string, signal: AbortSignal, cb: Callbacks): Promise<LoopResult> {
    return this.loop(this.transcript, { role: "user", content: message }, signal, cb, {
      allowed: TOOL_NAMES,
      conversationId: this.args.conversation,
      maxIterations: this.args.maxToolIterations,
      firstToolChoice: toolChoiceOf(this.args.toolChoice),
      maxTokens: this.args.maxTokens,
      seed: this.args.seed,
    });
  }

  /** An idle thought about the workspace: read-only tools, a cooldown between them, a short reply. */
  explore(idleSeconds: number, signal: AbortSignal, cb: Callbacks): Promise<LoopResult> {
    const prompt =
      `(Hermes: the user has been away for ${Math.round(idleSeconds)} seconds.) You are in the workspace "${basename(this.workspace.root)}". ` +
      "If something in it makes you curious, look around with read_file, list_directory or search_codebase, then say in a sentence or two what you noticed.";
    return this.loop(this.idleTranscript, { role: "user", content: prompt }, signal, cb, {
      allowed: SAFE_TOOLS,
      exploration: true,
      // Its own conversation: the user's stays theirs.
      conversationId: `${this.args.conversation.slice(0, 120)}.idle`,
      maxIterations: this.args.idleToolIterations,
      cooldownMs: this.args.idleCooldownSeconds * 1000,
      maxTokens: this.args.maxTokens ?? 160,
    });
  }

  private async loop(
    transcript: Transcript,
    first: { role: "user"; content: string },
    signal: AbortSignal,
    cb: Callbacks,
    o: Pick<
      LoopOptions,
      "allowed" | "conversationId" | "exploration" | "maxIterations" | "firstToolChoice" | "maxTokens" | "seed" | "cooldownMs"
    >,
  ): Promise<LoopResult> {
    const definitions = TOOL_DEFINITIONS.filter((d) => o.allowed.includes(d.function.name));
    try {
      return await react(transcript, first, {
        ...o,
        server: this.server,
        tools: this.tools(signal, o.exploration === true),
        definitions,
        signal,
        ...cb,
        onTurn: (id) => {
          this.currentTurn = id;
          for (const w of this.turnWaiters.splice(0)) w(id);
          cb.onTurn?.(id);
        },
      });
    } finally {
      this.currentTurn = null;
      for (const w of this.turnWaiters.splice(0)) w(null);
    }
  }

  /**
   * Stops the reply in progress: the server stops at its next token and keeps what was said.
   * Resolves once the server was told; only then should the caller drop the stream, since a
   * request dropped before the server named its turn would leave that turn running unseen.
   */
  async cancel(): Promise<void> {
    if (!this.server.isPsyche) return;
    const turn =
      this.currentTurn ??
      (await new Promise<string | null>((resolve) => {
        this.turnWaiters.push(resolve);
        setTimeout(() => resolve(null), 5000).unref();
      }));
    if (turn) await this.server.cancel(turn).catch(() => undefined);
  }
}
