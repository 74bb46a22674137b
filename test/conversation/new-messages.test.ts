import t from "tap";
import { decideNewMessages } from "../../src/conversation/new-messages.js";

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
