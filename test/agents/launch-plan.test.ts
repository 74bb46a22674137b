// psyche launch's plans (src/agents/launch-plan.ts): each agent pointed at Psyche by its own
// means, the key Psyche wants (or a stand-in where it wants none), an agent Psyche does not know
// given the base URLs most agents read, and --print's shell text, quoted so a shell reads it back.
import t from "tap";
import { execFileSync } from "node:child_process";
import { launchPlan, printPlan } from "../../src/agents/launch-plan.js";

const target = { url: "http://127.0.0.1:8741", apiKey: undefined };

t.test("each known agent's plan", async (t) => {
  const claude = launchPlan("claude", target);
  t.equal(claude.env.ANTHROPIC_BASE_URL, "http://127.0.0.1:8741");
  t.equal(claude.env.ANTHROPIC_AUTH_TOKEN, "psyche-local", "a stand-in key where Psyche wants none");
  t.same(launchPlan("claude-code", target), claude, "by its other name too");
  const codex = launchPlan("codex", { ...target, apiKey: "sekrit-key-1" });
  t.ok(codex.args.includes('model_providers.psyche.base_url="http://127.0.0.1:8741/v1"'));
  t.ok(codex.args.includes('model_providers.psyche.wire_api="responses"'));
  t.equal(codex.env.PSYCHE_API_KEY, "sekrit-key-1", "the key Psyche wants");
  const opencode = launchPlan("opencode", target);
  t.equal(opencode.env.OPENCODE_CONFIG, "{dir}/opencode.json");
  t.equal(JSON.parse(opencode.files["opencode.json"]!).provider.psyche.options.baseURL, "http://127.0.0.1:8741/v1");
  t.equal(launchPlan("qwen", target).env.OPENAI_BASE_URL, "http://127.0.0.1:8741/v1");
  const other = launchPlan("aider", target);
  t.equal(other.bin, "aider");
  t.same(
    [other.env.OPENAI_BASE_URL, other.env.ANTHROPIC_BASE_URL, other.env.OLLAMA_HOST],
    ["http://127.0.0.1:8741/v1", "http://127.0.0.1:8741", "http://127.0.0.1:8741"],
  );
});

t.test("--print is shell text that sets the environment and writes the files", async (t) => {
  const text = printPlan(launchPlan("opencode", target), "/tmp/psyche-launch-test-print", ["run", "it's fine"]);
  const script = text.replace(/\nopencode .*\n$/, '\necho "$OPENCODE_CONFIG"; cat "$OPENCODE_CONFIG"\n');
  const out = execFileSync("bash", ["-c", script], { encoding: "utf8" });
  t.match(out, /^\/tmp\/psyche-launch-test-print\/opencode.json\n/);
  t.equal(JSON.parse(out.split("\n").slice(1).join("\n")).model, "psyche/psyche");
  t.match(text, /opencode run 'it'\\''s fine'\n$/, "the user's arguments quoted");
});
