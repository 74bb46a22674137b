import t from "tap";
import { continueAfter, decideNewMessages } from "../../src/conversation/new-messages.js";

const u = (content: string) => ({ role: "user", content });
const a = (content: string) => ({ role: "assistant", content });

t.test("nothing stored: all new", async (t) => {
  t.same(decideNewMessages([], [u("hi"), a("yo"), u("again")]), { append: 3, from: 0 });
});

t.test("only the new message sent", async (t) => {
  t.same(decideNewMessages([u("hi"), a("yo")], [u("how are you")]), { append: 1, from: 0 });
});

t.test("a single message equal to the opening is still new, not a rewrite", async (t) => {
  t.same(decideNewMessages([u("hi"), a("yo")], [u("hi")]), { append: 1, from: 0 });
});

t.test("whole transcript resent: only the tail is new", async (t) => {
  t.same(decideNewMessages([u("hi"), a("yo")], [u("hi"), a("yo"), u("next")]), { append: 1, from: 2 });
});

t.test("regenerate: the last reply is superseded", async (t) => {
  t.same(decideNewMessages([u("hi"), a("yo"), u("q"), a("old answer")], [u("hi"), a("yo"), u("q")]), {
    append: 0,
    from: 3,
    supersedeFrom: 3,
  });
});

t.test("edit: history from the edit on is superseded", async (t) => {
  t.same(decideNewMessages([u("hi"), a("yo"), u("q"), a("ans")], [u("hi"), a("yo"), u("q edited")]), {
    append: 1,
    from: 2,
    supersedeFrom: 2,
  });
});

t.test("continuing after a position: all sent messages are new; later stored ones are superseded", async (t) => {
  const stored = [1, 2, 3, 4].map((position) => ({ position }));
  t.same(continueAfter(stored, 4, 2), { append: 2, from: 0 }, "after the last: a plain append");
  t.same(continueAfter(stored, 2, 1), { append: 1, from: 0, supersedeFrom: 2 }, "after the second: a branch");
  t.same(continueAfter([{ position: 3 }, { position: 7 }], 5, 1), { append: 1, from: 0, supersedeFrom: 1 }, "positions, not indexes");
});
