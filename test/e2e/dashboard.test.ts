/// <reference lib="dom" />
/* eslint-disable @typescript-eslint/no-explicit-any -- values read back from the page */
// The dashboard in a real browser: Debian's chromium driven by puppeteer-core (no browser
// download). The page loads with no console errors, the mood chart draws a real server's data
// (the tiny model, a few turns, a dream woken by a chat), live events arrive without a reload,
// the API key is asked for and kept in the tab, and a screenshot is saved in test/artifacts/.
// Without chromium this file is skipped; `npm run test:browser` installs it and runs it (CI).
import t from "tap";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const chromium = process.env.PSYCHE_CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(chromium)) {
  if (process.env.PSYCHE_TEST_BROWSER === "required")
    throw new Error(`no browser at ${chromium}: install Debian's chromium (npm run test:browser does)`);
  t.plan(0, `no chromium at ${chromium}; npm run test:browser installs it and runs this test`);
  process.exit(0);
}

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${psyche.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

const browser: Browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
t.teardown(() => browser.close());

/** A page that records every console error, uncaught exception and failed request. */
async function openPage(url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${(e as Error).message}`));
  page.on("requestfailed", (r) => {
    // The event stream is cut when the page closes; that is not a failure of the page.
    if (!r.url().includes("/v1/events")) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, problems };
}

/** Pixels of the chart's canvas near `rgb` (the valence line's colour): the line was drawn. */
const pixelsOf = (page: Page, rgb: [number, number, number]) =>
  page.evaluate((rgb) => {
    const canvas = document.querySelector("#mood-chart canvas") as HTMLCanvasElement | null;
    if (!canvas) return -1;
    const data = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < data.length; i += 4)
      if (
        Math.abs(data[i]! - rgb[0]) < 30 &&
        Math.abs(data[i + 1]! - rgb[1]) < 30 &&
        Math.abs(data[i + 2]! - rgb[2]) < 30 &&
        data[i + 3]! > 200
      )
        n++;
    return n;
  }, rgb);

t.test("a real server's inner life, drawn and live", async (t) => {
  // A few turns (each moves the mood), then a dream that a chat wakes.
  for (const content of ["What a wonderful, happy day!", "I am so sad and tired.", "Tell me about the sea."]) {
    await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content }], max_tokens: 6 });
  }
  await until("three mood changes", async () =>
    (await psyche.db.pool.query("select count(*)::int as n from emotion_log")).rows[0].n >= 3 ? true : undefined,
  );
  const { page, problems } = await openPage(psyche.url);
  await page.waitForSelector("#mood-chart canvas");
  await page.waitForSelector('#live[data-live="true"]');
  await page.waitForFunction(() => document.querySelectorAll("#memories li").length >= 3);

  // The dream starts once the page is open, so the badge is seen to change live; a dream of
  // the tiny model's 3,000 tokens lasts about 5 s, shorter than a slow machine takes to load
  // a page, which made reading the badge after the load a race.
  const queued = await post("/dream/jobs", { kind: "dream", max_tokens: 8192 });
  const jobId = ((await queued.json()) as any).data[0].id;
  await until("the dream to start", async () =>
    (await psyche.db.pool.query("select 1 from dream_journal where job_id = $1", [jobId])).rowCount ? true : undefined,
  );
  const badge = await page
    .waitForFunction(() => document.querySelector("#state")!.textContent === "dreaming", { timeout: 20_000 })
    .then(() => "dreaming")
    .catch(
      async () =>
        `${await page.$eval("#state", (e) => e.textContent)} (the dream: ${JSON.stringify((await psyche.db.pool.query("select status, tokens from dream_journal where job_id = $1", [jobId])).rows[0])})`,
    );
  t.equal(badge, "dreaming", "the state badge shows the dream, live");
  await page.waitForFunction(() => document.querySelectorAll("#journal li").length >= 1);
  t.ok((await pixelsOf(page, [208, 96, 43])) > 20, "the valence line is drawn");
  t.ok((await pixelsOf(page, [43, 123, 208])) > 20, "the arousal line is drawn");
  t.equal(
    await page.$$eval(".timeline .block", (b) => b.length),
    await page.$$eval("#journal li", (l) => l.length),
    "one timeline block per journal entry",
  );

  // Live, without a reload: a chat wakes the dream, and a stored memory appears.
  const pointsBefore = await page.$$eval('#events li[data-type="mood.changed"]', (l) => l.length);
  await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "Wake up, lovely!" }], max_tokens: 4 });
  await page.waitForFunction(() => ["awake", "sleeping"].includes(document.querySelector("#state")!.textContent!), { timeout: 20_000 });
  await page.waitForSelector('#events li[data-type="dream.state"]');
  const res = await post("/v1/memories", { content: "The dashboard saw this memory arrive" });
  t.equal(res.status, 201);
  await page.waitForFunction(
    () =>
      Array.from(document.querySelectorAll("#memories li")).some((li) => li.textContent!.includes("The dashboard saw this memory arrive")),
    { timeout: 10_000 },
  );
  await page.waitForFunction(
    (n) => document.querySelectorAll('#events li[data-type="mood.changed"]').length > n,
    { timeout: 20_000 },
    pointsBefore,
  );

  // Click a journal entry: its text.
  await page.click("#journal li");
  await page.waitForFunction(() => !(document.querySelector("#dream-text") as HTMLElement).hidden);
  t.ok((await page.$eval("#dream-text pre", (e) => e.textContent!)).length > 0, "the dream's text");

  // Search.
  await page.type("#q", "dashboard memory");
  await page.click("#search button");
  await page.waitForFunction(() => document.querySelector("#memories li")?.textContent?.includes("The dashboard saw this memory arrive"));

  const dir = join(process.cwd(), "test", "artifacts");
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, "dashboard.png"), fullPage: true });
  t.same(problems, [], "no console errors, page errors or failed requests");
  await page.close();
});

t.test("with an API key: the page asks for it and keeps it in the tab's session only", async (t) => {
  const key = "dashboard-test-key-1234";
  const guarded = await startPsyche(t, { recallPromptTokens: 0, apiKey: key });
  const { page, problems } = await openPage(guarded.url);
  await page.waitForSelector("#key-form:not([hidden])");
  await page.type("#key", key);
  await page.click("#key-form button");
  await page.waitForSelector('#live[data-live="true"]');
  await page.waitForFunction(() => document.querySelector("#state")!.textContent !== "…");
  t.equal(await page.evaluate(() => sessionStorage.getItem("psyche-api-key")), key, "in sessionStorage");
  t.equal(await page.evaluate(() => localStorage.length), 0, "not in localStorage");
  t.equal(await page.evaluate(() => document.cookie), "", "not in a cookie");
  const withoutKey = await fetch(`${guarded.url}/dream/status`);
  t.equal(withoutKey.status, 401, "the data stays behind the key");
  // The 401 before the key was typed is the page asking, not a failure of it.
  t.same(
    problems.filter((p) => !p.includes("401")),
    [],
  );
  await page.close();
});
