// Shutting down goes on past a step that fails or hangs, and says which.
import t from "tap";
import { StopOverrun, StopStack } from "../../src/processes/stack.js";

t.test("steps stop in reverse order; a failing and a hanging step are reported and passed", async (t) => {
  const stack = new StopStack(200);
  const order: string[] = [];
  stack.push("database", async () => void order.push("database"));
  stack.push("hangs", () => new Promise(() => undefined));
  stack.push("fails", async () => {
    order.push("fails");
    throw new Error("boom");
  });
  stack.push("server", async () => void order.push("server"));
  const errors: [string, unknown][] = [];
  const troubled = await stack.unwind((name, err) => errors.push([name, err]));
  t.same(order, ["server", "fails", "database"]);
  t.same(troubled, ["fails", "hangs"]);
  t.equal(errors.length, 2);
  t.match(errors[0]![1], { message: "boom" });
  t.ok(errors[1]![1] instanceof StopOverrun);
  t.match(errors[1]![1], { message: /stopping hangs did not finish within 200 ms/ });
  t.same(await stack.unwind(), [], "a second unwind has nothing left to stop");
});

t.test("a step that finishes in time is not reported", async (t) => {
  const stack = new StopStack(1000);
  stack.push("slowish", () => new Promise((r) => setTimeout(r, 50)));
  t.same(await stack.unwind(), []);
});
