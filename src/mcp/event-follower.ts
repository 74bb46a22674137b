// Follows GET /v1/events for `psyche mcp` (mcp/stdio-bridge.ts), so that a client on stdio can
// subscribe to psyche://events: the HTTP endpoint is stateless and cannot push, but the bridge
// is one long-lived process per client and can. Reconnects with Last-Event-ID, so a restarted
// server costs no event.
import type { Logger } from "../log.js";

export class EventFollower {
  private readonly stop = new AbortController();
  private lastId: string | null = null;

  constructor(
    private readonly base: string,
    private readonly apiKey: string | undefined,
    private readonly log: Logger,
    private readonly onEvent: (id: string) => void,
  ) {
    void this.run();
  }

  close(): void {
    this.stop.abort();
  }

  private async run(): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        const headers: Record<string, string> = {
          ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
          ...(this.lastId ? { "last-event-id": this.lastId } : {}),
        };
        const res = await fetch(`${this.base}/v1/events`, { headers, signal: this.stop.signal });
        if (!res.ok || !res.body) throw new Error(`GET /v1/events answered ${res.status}`);
        const decoder = new TextDecoder();
        let buffer = "";
        const reader = res.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf("\n\n")) !== -1) {
            const id = /^id: (\d+)$/m.exec(buffer.slice(0, end))?.[1];
            buffer = buffer.slice(end + 2);
            if (id) {
              this.lastId = id;
              this.onEvent(id);
            }
          }
        }
      } catch (err) {
        if (this.stop.signal.aborted) return;
        this.log.debug({ err }, "following the server's events failed; trying again");
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
