/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw responses */
// A whole SSE body as its events: each one's `event:` name where it has one, and its data,
// parsed where it is JSON ([DONE] as it is). For tests that read a finished stream at once.
export async function sseEvents(res: Response): Promise<{ event?: string; data: any }[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? "";
      return { ...(event ? { event } : {}), data: data === "[DONE]" ? data : JSON.parse(data) };
    });
}
