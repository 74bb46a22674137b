// Deterministic synthetic memories and queries for the memory benchmark: templated sentences
// over a few hundred words, so full text and vectors behave as they do on real notes.
const PEOPLE = [
  "Maya",
  "Ravi",
  "Anna",
  "Tomás",
  "Lena",
  "Kofi",
  "Yuki",
  "Omar",
  "Ines",
  "Bjorn",
  "Priya",
  "Sam",
  "Chen",
  "Zara",
  "Hugo",
  "Nora",
];
const VERBS = [
  "borrowed",
  "painted",
  "lost",
  "repaired",
  "bought",
  "sold",
  "baked",
  "wrote",
  "found",
  "carried",
  "planted",
  "cleaned",
  "described",
  "forgot",
  "photographed",
  "mended",
];
const ADJECTIVES = [
  "green",
  "old",
  "heavy",
  "tiny",
  "broken",
  "shiny",
  "wooden",
  "striped",
  "favourite",
  "borrowed",
  "secret",
  "noisy",
  "fragile",
  "warm",
  "crooked",
  "golden",
];
const THINGS = [
  "umbrella",
  "bicycle",
  "letter",
  "cake",
  "guitar",
  "lamp",
  "notebook",
  "kettle",
  "scarf",
  "telescope",
  "garden",
  "boat",
  "painting",
  "clock",
  "map",
  "violin",
  "chair",
  "camera",
  "recipe",
  "kite",
];
const PLACES = [
  "the library",
  "the harbour",
  "the market",
  "grandmother's house",
  "the office",
  "the park",
  "the train station",
  "the bakery",
  "the museum",
  "the beach",
  "the attic",
  "the school",
  "the hospital",
  "the cafe",
];
const TIMES = [
  "on a rainy Tuesday",
  "before dawn",
  "last winter",
  "during the festival",
  "after the storm",
  "on her birthday",
  "at midnight",
  "in early spring",
  "over the weekend",
  "during lunch",
];
const FEELINGS = [
  "It was wonderful.",
  "That felt sad.",
  "Everyone laughed about it.",
  "It was a little frightening.",
  "Nobody noticed.",
  "I think it mattered a lot.",
  "It was frustrating.",
  "",
];

/** mulberry32: a small seeded PRNG. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

export function syntheticMemory(r: () => number): string {
  return `${pick(r, PEOPLE)} ${pick(r, VERBS)} the ${pick(r, ADJECTIVES)} ${pick(r, THINGS)} at ${pick(r, PLACES)} ${pick(r, TIMES)}. ${pick(r, FEELINGS)}`.trim();
}

export function syntheticQuery(r: () => number): string {
  const forms = [
    () => `What did ${pick(r, PEOPLE)} ${pick(r, VERBS).replace(/ed$/, "")} at ${pick(r, PLACES)}?`,
    () => `Who had the ${pick(r, ADJECTIVES)} ${pick(r, THINGS)}?`,
    () => `Tell me about the ${pick(r, THINGS)} ${pick(r, TIMES)}`,
    () => `${pick(r, PEOPLE)} and the ${pick(r, THINGS)}`,
  ];
  return pick(r, forms)();
}

/** A query as a chat message often is: several questions in one paragraph (~20 distinct terms). */
export function syntheticLongQuery(r: () => number): string {
  return `I keep thinking about last week. ${syntheticQuery(r)} Also, ${syntheticQuery(r)}. And ${syntheticQuery(r)}, if you remember. ${syntheticQuery(r)}`;
}
