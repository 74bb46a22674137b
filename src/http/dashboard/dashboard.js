// Psyche's dashboard: plain JavaScript in the browser, no build step, nothing from a CDN (the
// chart library, uPlot, is served by Psyche too). It reads the public API and follows
// GET /v1/events for live changes (README: "Dashboard").
/* global uPlot, document, window, sessionStorage, TextDecoder, Node */

const $ = (id) => document.getElementById(id);
const KEY = "psyche-api-key";
const KIND_CLASS = { dream: "dream", reflect: "reflect", idle: "idle", consolidate: "consolidate" };

class Unauthorized extends Error {}

async function api(path) {
  const key = sessionStorage.getItem(KEY);
  const res = await fetch(path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  if (res.status === 401) {
    $("key-form").hidden = false;
    throw new Unauthorized("the API key is missing or wrong");
  }
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return res.json();
}

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
};
const time = (iso) => new Date(iso).toLocaleTimeString();
const round = (x, n = 2) => (x === null || x === undefined ? "–" : Number(x).toFixed(n));

// ---- mood -------------------------------------------------------------------------------
let moodPlot = null;
const moodData = [[], [], []];

function drawMood() {
  const width = $("mood-chart").clientWidth || 600;
  if (!moodPlot) {
    moodPlot = new uPlot(
      {
        width,
        height: 220,
        scales: { y: { range: [-1, 1] } },
        series: [{}, { label: "valence", stroke: "#d0602b", width: 2 }, { label: "arousal", stroke: "#2b7bd0", width: 2 }],
        axes: [{}, { values: (_, ticks) => ticks.map((t) => t.toFixed(1)) }],
      },
      moodData,
      $("mood-chart"),
    );
  } else moodPlot.setData(moodData);
}

async function loadMood() {
  const mood = await api("/v1/mood?limit=500");
  const points = [...mood.history].sort((a, b) => new Date(a.at) - new Date(b.at));
  moodData[0] = points.map((p) => new Date(p.at).getTime() / 1000);
  moodData[1] = points.map((p) => p.valence);
  moodData[2] = points.map((p) => p.arousal);
  $("mood-now").textContent = `valence ${round(mood.valence)} · arousal ${round(mood.arousal)}`;
  drawMood();
}

// ---- dream journal ----------------------------------------------------------------------
function showDream(entry) {
  const box = $("dream-text");
  box.hidden = false;
  const topics = entry.topics?.length ? ` · about ${entry.topics.join(", ")}` : "";
  const resumed = entry.resumes ? ` · resumed ${entry.resumes}×` : "";
  const note = entry.note ? ` · ${entry.note}` : "";
  box.querySelector("h3").textContent =
    `${entry.kind} · ${new Date(entry.started_at).toLocaleString()} · ${entry.status}${resumed}${note}${topics}`;
  box.querySelector("pre").textContent = entry.content || "(no text)";
}

async function loadJournal() {
  const { data } = await api("/dream/journal?limit=50");
  const list = $("journal");
  list.replaceChildren(
    ...data.map((d) => {
      const seconds = d.ended_at ? (new Date(d.ended_at) - new Date(d.started_at)) / 1000 : null;
      return el(
        "li",
        { "data-id": d.id, onclick: () => showDream(d) },
        el("span", {}, el("span", { class: `kind ${KIND_CLASS[d.kind] ?? ""}` }, d.kind)),
        el("span", { class: "muted" }, time(d.started_at)),
        el("span", {}, seconds === null || d.status === "paused" ? d.status : `${seconds.toFixed(1)} s`),
        el(
          "span",
          {},
          `${d.resumes ? `resumed ${d.resumes}× · ` : d.was_interrupted ? "woken · " : ""}significance ${round(d.significance)}`,
        ),
        el("span", { class: "muted topics" }, (d.topics ?? []).join(", ")),
      );
    }),
  );
  // The timeline: each entry where it began and as long as it ran, over the span they cover.
  const line = $("timeline");
  if (data.length === 0) return line.replaceChildren();
  const start = Math.min(...data.map((d) => new Date(d.started_at).getTime()));
  const end = Math.max(Date.now(), ...data.map((d) => new Date(d.ended_at ?? Date.now()).getTime()));
  const span = Math.max(1, end - start);
  line.replaceChildren(
    ...data.map((d) => {
      const from = new Date(d.started_at).getTime();
      const to = new Date(d.ended_at ?? Date.now()).getTime();
      const block = el("div", {
        class: `block ${KIND_CLASS[d.kind] ?? ""}${d.was_interrupted ? " interrupted" : ""}`,
        title: `${d.kind}, ${d.status}`,
        onclick: () => showDream(d),
      });
      block.style.left = `${((from - start) / span) * 100}%`;
      block.style.width = `${Math.max(0.3, ((to - from) / span) * 100)}%`;
      return block;
    }),
  );
}

// ---- memories ---------------------------------------------------------------------------
let searching = false;

function showMemories(items) {
  $("memories").replaceChildren(...items.map((m) => el("li", {}, el("span", { class: "muted" }, `${m.kind} · `), m.content)));
}

async function loadMemories() {
  if (!searching) showMemories((await api("/v1/memories?limit=20")).data);
}

$("search").addEventListener("submit", async (e) => {
  e.preventDefault();
  const q = $("q").value.trim();
  searching = q !== "";
  if (!searching) return loadMemories();
  showMemories((await api(`/v1/memories/search?k=20&q=${encodeURIComponent(q)}`)).data);
});

// ---- state, queue, workers --------------------------------------------------------------
function showState(state) {
  $("state").dataset.state = state;
  $("state").textContent = state;
}

// Every event asks for the status again; answers can come back out of order, so only the
// newest request's answer is shown (an older one would put back a state already left).
let statusAsked = 0;
async function loadStatus() {
  const asked = ++statusAsked;
  const [status, health] = await Promise.all([api("/dream/status"), api("/health")]);
  if (asked !== statusAsked) return;
  showState(status.state);
  // What the running reverie is about (its seeds' words), and a consolidation under way beside it.
  const about = [status.topics?.length ? `about ${status.topics.join(", ")}` : "", status.consolidating ? "consolidating memories" : ""];
  $("about").textContent = about.filter(Boolean).join(" · ");
  $("workers").textContent = health.worker.alive
    ? `${health.worker.workers.length} worker${health.worker.workers.length === 1 ? "" : "s"} up`
    : "no worker";
  $("queue").textContent = `queue: ${health.queue.queued} waiting, ${health.queue.active} running`;
}

// ---- live events ------------------------------------------------------------------------
let lastEventId = null;

function showEvent(event) {
  const summary = Object.entries(event.data)
    .filter(([k]) => k !== "excerpt")
    .map(([k, v]) => `${k}=${typeof v === "number" && !Number.isInteger(v) ? round(v, 3) : v}`)
    .join(" ");
  $("events").prepend(el("li", { "data-type": event.type }, `${time(event.at)} ${event.type} ${summary}`));
  while ($("events").children.length > 100) $("events").lastChild.remove();
}

function onEvent(event) {
  showEvent(event);
  if (event.type === "dream.state") {
    showState(event.data.state);
    loadJournal().catch(report);
  } else if (event.type === "reverie.finished") loadJournal().catch(report);
  // Reloaded rather than appended: the backlog repeats points the history already has.
  else if (event.type === "mood.changed") loadMood().catch(report);
  else if (event.type === "memory.stored" || event.type === "memory.folded") loadMemories().catch(report);
  loadStatus().catch(report);
}

/** Follows /v1/events with fetch (EventSource cannot send the API key), resuming by Last-Event-ID. */
async function follow() {
  for (;;) {
    try {
      const key = sessionStorage.getItem(KEY);
      const headers = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(lastEventId ? { "last-event-id": lastEventId } : {}) };
      const res = await fetch(lastEventId ? "/v1/events" : "/v1/events?backlog=20", { headers });
      if (res.status === 401) {
        $("key-form").hidden = false;
        return;
      }
      $("live").dataset.live = "true";
      $("live").textContent = "live";
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!data) continue;
          const event = JSON.parse(data);
          lastEventId = event.id;
          onEvent(event);
        }
      }
    } catch (err) {
      report(err);
    }
    $("live").dataset.live = "false";
    $("live").textContent = "reconnecting";
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function report(err) {
  if (err instanceof Unauthorized) return;
  console.warn("Psyche dashboard:", err.message);
}

$("key-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem(KEY, $("key").value);
  $("key-form").hidden = true;
  start();
});

async function start() {
  try {
    await Promise.all([loadStatus(), loadMood(), loadJournal(), loadMemories()]);
  } catch (err) {
    report(err);
    if (err instanceof Unauthorized) return;
  }
  follow();
}

window.addEventListener("resize", () => moodPlot?.setSize({ width: $("mood-chart").clientWidth, height: 220 }));
start();
