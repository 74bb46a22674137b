// Outcome capture for the post-tool-use hook: whether a shell tool ran a test suite, and whether
// it passed, read from the command and what it printed. Test runners differ; each line below is
// one runner's summary. A run we cannot read gives no outcome rather than a guess.

const TEST_COMMAND =
  /\b(npm|pnpm|yarn|bun)\s+(run\s+)?test\b|\b(npx\s+)?(jest|vitest|mocha|tap|ava|playwright\s+test)\b|\bnode\s+--test\b|\bpytest\b|python3?\s+-m\s+(pytest|unittest)\b|\bcargo\s+test\b|\bgo\s+test\b|\b(mvn|gradle|\.\/gradlew)\s+test\b|\bmake\s+(test|check)\b|\bctest\b|\brspec\b|\bdotnet\s+test\b|\bphpunit\b|\bmix\s+test\b/;

/** Summaries that say some test failed. */
const FAILED = [
  /\b[1-9]\d*\s+(failed|failing|failures?|errors?)\b/i, // jest, mocha, pytest, tap, vitest
  /^\s*(FAIL|FAILED)\b/m, // jest file lines, go, pytest "FAILED tests/..."
  /\btest result: FAILED\b/, // cargo
  /^not ok\b/m, // TAP
  /\bTests? run:.*\bFailures: [1-9]/, // maven
  /\bBUILD FAILED\b/,
  /^--- FAIL:/m, // go
  /\bERR!\s+Test failed\b/,
];
/** Summaries that say the suite passed. */
const PASSED = [
  /\b\d+\s+(passed|passing)\b/i,
  /\btest result: ok\b/,
  /^ok\s+\S+/m, // go packages, TAP
  /\bTests:\s+\d+ passed\b/,
  /^PASS\b/m,
  /\bOK \(\d+ tests?\)/, // unittest, phpunit
  /\bAll tests passed\b/i,
];

export interface TestOutcome {
  command: string;
  passed: boolean;
  /** The summary line that decided it. */
  evidence: string;
}

const text = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

function lineOf(output: string, re: RegExp): string {
  const m = re.exec(output);
  if (!m) return "";
  const start = output.lastIndexOf("\n", m.index) + 1;
  const end = output.indexOf("\n", m.index);
  return output
    .slice(start, end < 0 ? undefined : end)
    .trim()
    .slice(0, 200);
}

/** The outcome of a test run by a shell tool (Claude Code's Bash), or undefined. */
export function testOutcome(toolName: string, toolInput: unknown, toolResponse: unknown): TestOutcome | undefined {
  if (!/^(bash|shell|execute_bash|run_command|terminal)$/i.test(toolName)) return undefined;
  const command =
    typeof toolInput === "object" && toolInput !== null ? text((toolInput as Record<string, unknown>).command) : text(toolInput);
  if (!TEST_COMMAND.test(command)) return undefined;
  const r =
    typeof toolResponse === "object" && toolResponse !== null ? (toolResponse as Record<string, unknown>) : { stdout: toolResponse };
  const output = `${text(r.stdout ?? r.output ?? r.content)}\n${text(r.stderr)}`;
  const exit = typeof r.exit_code === "number" ? r.exit_code : typeof r.exitCode === "number" ? r.exitCode : undefined;
  const failed = FAILED.find((re) => re.test(output));
  if (failed || (exit !== undefined && exit !== 0))
    return { command, passed: false, evidence: failed ? lineOf(output, failed) : `exit code ${exit}` };
  if (r.interrupted === true) return undefined;
  const passed = PASSED.find((re) => re.test(output));
  if (passed || exit === 0) return { command, passed: true, evidence: passed ? lineOf(output, passed) : "exit code 0" };
  return undefined;
}
