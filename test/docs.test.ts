// The front door and the manual: the README stays short, links every page of docs/, and
// neither it nor the manual sends a reader outside the repository (a clone has no ../shared).
import { packageRoot } from "../src/paths.js";
import t from "tap";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const root = packageRoot();
const readme = readFileSync(join(root, "README.md"), "utf8");
const pages = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"));

t.test("the README is a front door: short, the two commands first", async (t) => {
  t.ok(Buffer.byteLength(readme) < 15 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`);
  const firstSection = /^## (.+)$/m.exec(readme)?.[1];
  t.equal(firstSection, "Two commands");
  t.match(readme, /```sh\nnpm install && npm start\n```/);
  t.match(readme, /```sh\nnpm install && npm test\n```/);
});

t.test("every page of docs/ is linked from the README, and every link there leads somewhere", async (t) => {
  t.ok(pages.length >= 10, `${pages.length} pages`);
  for (const page of pages) t.ok(readme.includes(`](docs/${page})`), `the README links docs/${page}`);
  for (const [file, text] of [
    ["README.md", readme] as const,
    ...pages.map((p) => [`docs/${p}`, readFileSync(join(root, "docs", p), "utf8")] as const),
  ]) {
    for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      t.ok(existsSync(resolve(dirname(join(root, file)), target)), `${file} links ${target}`);
    }
  }
});

t.test("neither the README nor docs/ points outside the repository", async (t) => {
  for (const [file, text] of [["README.md", readme], ...pages.map((p) => [`docs/${p}`, readFileSync(join(root, "docs", p), "utf8")])]) {
    t.notMatch(text!, /\.\.\/shared\b/, `${file} names no ../shared`);
  }
});
