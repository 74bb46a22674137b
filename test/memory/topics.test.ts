// Topics (memory/topics.ts): the words an entry is most about, weighed by how rare they are
// among all memories, shown as they were written.
import t from "tap";
import { rankTopics, topicCandidates } from "../../src/memory/topics.js";

t.test("counted words, rarer ones first, the commonest written form, a few at most", async (t) => {
  const candidates = topicCandidates(["The lamps of Brittany", "A lamp keeper", "the user and the user's tea"]);
  t.equal(candidates.get("lamp")?.count, 2, "lamp and lamps are one");
  t.notOk(candidates.has("the"), "no function words");
  const rarity = {
    memories: 100,
    df: new Map([
      ["user", 90],
      ["lamp", 2],
      ["brittany", 1],
      ["keeper", 3],
      ["tea", 40],
    ]),
  };
  t.same(
    rankTopics(candidates, rarity, 3),
    ["lamps", "brittany", "keeper"],
    "rare and repeated words lead (as first written, of equals); common ones sink",
  );
  t.same(rankTopics(topicCandidates(["lamps lamps lamp"]), { memories: 1, df: new Map() }), ["lamps"], "as most often written");
  t.same(rankTopics(topicCandidates(["", "a 1234 of"]), rarity), [], "nothing to say: none");
});
