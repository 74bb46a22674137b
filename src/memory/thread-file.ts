// Piscina threads run compiled JavaScript. From the build (dist/src/...) the thread files sit
// beside it in dist/workers/threads; from the TypeScript sources (tests) they are the build's.
export function threadFile(name: "embed" | "score"): URL {
  const here = import.meta.url;
  return here.endsWith(".ts") ? new URL(`../../dist/workers/threads/${name}.js`, here) : new URL(`../../workers/threads/${name}.js`, here);
}
