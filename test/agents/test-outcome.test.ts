// Reading a test run's result from a shell tool's command and output (post-tool-use).
import t from "tap";
import { testOutcome } from "../../src/agents/test-outcome.js";

const bash = (command: string, stdout: string, extra: Record<string, unknown> = {}) =>
  testOutcome("Bash", { command }, { stdout, stderr: "", ...extra });

t.test("runners' summaries", async (t) => {
  t.match(bash("npm test", "Tests:       12 passed, 12 total"), { passed: true, evidence: /12 passed/ });
  t.match(bash("npx jest", "Tests:       1 failed, 11 passed, 12 total"), { passed: false, evidence: /1 failed/ });
  t.match(bash("pytest -q", "..........\n10 passed in 0.12s"), { passed: true });
  t.match(bash("python -m pytest", "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed, 9 passed"), { passed: false });
  t.match(bash("cargo test", "test result: ok. 7 passed; 0 failed"), { passed: true, evidence: /test result: ok/ });
  t.match(bash("cargo test --all", "test result: FAILED. 6 passed; 1 failed"), { passed: false });
  t.match(bash("go test ./...", "--- FAIL: TestParse (0.00s)\nFAIL\texample.com/p\t0.01s"), { passed: false });
  t.match(bash("go test ./...", "ok  \texample.com/p\t0.01s"), { passed: true });
  t.match(bash("npx tap", "# { total: 56, pass: 56 }\n", { exit_code: 0 }), { passed: true, evidence: "exit code 0" });
  t.match(bash("node --test", "not ok 1 - adds\n# pass 3\n# fail 1"), { passed: false });
  t.match(bash("make test", "0 failed, 4 passed"), { passed: true }, "0 failed is not a failure");
});

t.test("what is not a test run, or cannot be read, gives nothing", async (t) => {
  t.equal(bash("ls -la", "total 0 passed"), undefined);
  t.equal(bash("npm install", "added 3 packages"), undefined);
  t.equal(testOutcome("Read", { file_path: "npm test" }, {}), undefined);
  t.equal(bash("npm test", "building..."), undefined, "no summary, no exit code");
  t.equal(bash("npm test", "", { interrupted: true }), undefined);
  t.match(testOutcome("Bash", "npm test", "12 passing"), { passed: true }, "a plain string input and response");
});
