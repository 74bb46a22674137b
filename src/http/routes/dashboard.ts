// The dashboard at / (docs/operations.md): static files read once, served by the web process,
// with uPlot from Psyche's own dependencies, so the page works offline and needs no build step.
// The files hold no data: everything on the page comes from the API, behind its key.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Hono } from "hono";
import { packageRoot } from "../../paths.js";

/** Only Psyche's own files and API; inline style attributes are uPlot's. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function dashboardRoutes(): Hono {
  const here = join(packageRoot(), "src", "http", "dashboard");
  const uplot = (file: string) => createRequire(import.meta.url).resolve(`uplot/dist/${file}`);
  const files: Record<string, { body: string; type: string }> = {
    "/": { body: readFileSync(join(here, "index.html"), "utf8"), type: "text/html; charset=utf-8" },
    "/dashboard/dashboard.js": { body: readFileSync(join(here, "dashboard.js"), "utf8"), type: "text/javascript; charset=utf-8" },
    "/dashboard/dashboard.css": { body: readFileSync(join(here, "dashboard.css"), "utf8"), type: "text/css; charset=utf-8" },
    "/dashboard/uplot.js": { body: readFileSync(uplot("uPlot.iife.min.js"), "utf8"), type: "text/javascript; charset=utf-8" },
    "/dashboard/uplot.css": { body: readFileSync(uplot("uPlot.min.css"), "utf8"), type: "text/css; charset=utf-8" },
  };
  const app = new Hono();
  for (const [path, file] of Object.entries(files)) {
    app.get(path, (c) =>
      c.body(file.body, 200, {
        "Content-Type": file.type,
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-cache",
      }),
    );
  }
  return app;
}
