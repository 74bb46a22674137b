import t from "tap";
import { decodeTurnSignal, encodeTurnSignal } from "../../src/jobs/turn-signal.js";

t.test("a small event rides along; a large one is left for the table", async (t) => {
  const small = decodeTurnSignal(encodeTurnSignal("turn-1", { seq: 3, kind: "delta", content: "hi" }));
  t.same(small, { turnId: "turn-1", event: { seq: 3, kind: "delta", content: "hi" } });
  const large = decodeTurnSignal(encodeTurnSignal("turn-1", { seq: 4, kind: "delta", content: "x".repeat(5000) }));
  t.same(large, { turnId: "turn-1" }, "NOTIFY payloads stop at 8000 bytes: only the id");
  t.same(decodeTurnSignal(encodeTurnSignal("turn-2")), { turnId: "turn-2" });
});

t.test("garbage is ignored, not thrown", async (t) => {
  t.equal(decodeTurnSignal("not json"), undefined);
  t.equal(decodeTurnSignal(JSON.stringify({ e: { seq: 1 } })), undefined);
});
