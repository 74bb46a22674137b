// The settings every test's Psyche starts from: a port and a database port of the system's
// choosing, one thread, a small context, quiet logs, nothing that dreams or consolidates by itself.
import { loadConfig, type Config } from "../../src/config.js";

export function testConfig(dataDir: string, overrides: Record<string, unknown> = {}): Config {
  return loadConfig(
    {
      dataDir,
      // The smallest model (under 1 MB, ChatML), made at once: tests that need a family's ask for it.
      model: "tiny",
      port: 0,
      dbPort: 0,
      threads: 1,
      embeddingThreads: 1,
      contextSize: 4096,
      maxTokens: 1024,
      logLevel: process.env.PSYCHE_TEST_LOG ?? "silent",
      quiet: true,
      pollMs: 100,
      heartbeatMs: 500,
      dreamDelaySeconds: 0,
      consolidation: false,
      // The CPU, also on a machine with a GPU build: on a GPU a seeded reply depends on the
      // batch it shares (docs/configuration.md), and tests compare texts.
      gpu: "false",
      ...overrides,
    },
    {},
  );
}
