/**
 * Polls `probe` until it gives a value (not undefined); throws after `ms`. `explain`, where
 * given, says in the error what the test could see when it gave up (a failure on a loaded CI
 * machine is then more than a time-out).
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 30_000,
  explain?: () => Promise<string>,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const seen = explain ? await explain().catch((err: unknown) => `(could not say: ${String(err)})`) : "";
      throw new Error(`timed out waiting for ${what}${seen ? `; ${seen}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
