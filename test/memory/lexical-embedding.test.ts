import t from "tap";
import { stem, words } from "../../src/memory/analyzer.js";
import { cosine, LEXICAL_DIMENSIONS, lexicalEmbedding } from "../../src/memory/lexical-embedding.js";

t.test("unit length, fixed size, deterministic", async (t) => {
  const v = lexicalEmbedding("Psyche dreams of electric sheep");
  t.equal(v.length, LEXICAL_DIMENSIONS);
  t.ok(Math.abs(Math.hypot(...v) - 1) < 1e-9);
  t.same(lexicalEmbedding("Psyche dreams of electric sheep"), v);
  for (const text of ["the of and", "?!", ""]) {
    t.ok(
      Math.abs(Math.hypot(...lexicalEmbedding(text)) - 1) < 1e-9,
      `${JSON.stringify(text)}: still a unit vector (a zero one has no cosine)`,
    );
  }
  t.ok(
    cosine(lexicalEmbedding("yes, that is it"), lexicalEmbedding("The compiler rejects generic type parameters")) < 0.2,
    "stopwords alone are near nothing else",
  );
});

t.test("similar wording is near, unrelated wording is far", async (t) => {
  const base = lexicalEmbedding("My sister Anna is getting married in June");
  const reworded = lexicalEmbedding("Anna, my sister, will be married this June");
  const inflected = lexicalEmbedding("sisters marrying in june");
  const unrelated = lexicalEmbedding("The compiler rejects generic type parameters");
  t.ok(cosine(base, reworded) > 0.5, `reworded ${cosine(base, reworded)}`);
  t.ok(cosine(base, inflected) > 0.25, `inflected ${cosine(base, inflected)}`);
  t.ok(Math.abs(cosine(base, unrelated)) < 0.15, `unrelated ${cosine(base, unrelated)}`);
  t.ok(cosine(base, reworded) > cosine(base, inflected) && cosine(base, inflected) > cosine(base, unrelated));
});

t.test("words and stems", async (t) => {
  t.same(words("Café's OWNER, naïve—really?"), ["cafe's", "owner", "naive", "really"]);
  t.equal(stem("dreams"), "dream");
  t.equal(stem("dreaming"), "dream");
  t.equal(stem("dreamed"), "dream");
  t.equal(stem("memories"), "memory");
  t.equal(stem("is"), "is", "short words are left alone");
});
