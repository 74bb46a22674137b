// The workspace Hermes's tools may touch: every path is relative to it, resolved through
// symlinks, and refused when it leads outside (the workspace is the sandbox). Paths that do not exist yet
// (create_file) are checked through their nearest existing parent.
import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

export class OutsideWorkspace extends Error {
  override name = "OutsideWorkspace";
}

export class Workspace {
  readonly root: string;

  constructor(dir: string) {
    if (!existsSync(dir)) throw new Error(`the workspace ${dir} does not exist`);
    this.root = realpathSync(dir);
  }

  /** The real path of `path` inside the workspace; throws OutsideWorkspace for anything else. */
  resolve(path: string): string {
    if (typeof path !== "string" || path.includes("\0")) throw new OutsideWorkspace("refused: not a path");
    if (isAbsolute(path)) throw new OutsideWorkspace(`refused: ${path} is absolute; paths are relative to the workspace`);
    const target = resolve(this.root, path);
    // The nearest part that exists decides where the path really leads.
    let existing = target;
    while (!existsSync(existing) && existing !== dirname(existing)) existing = dirname(existing);
    const real = resolve(realpathSync(existing), relative(existing, target));
    if (!this.inside(real)) throw new OutsideWorkspace(`refused: ${path} is outside the workspace`);
    return real;
  }

  /** The path as the model should see it: relative to the workspace, with / separators. */
  show(real: string): string {
    const rel = relative(this.root, real);
    return rel === "" ? "." : rel.split(sep).join("/");
  }

  private inside(real: string): boolean {
    const rel = relative(this.root, real);
    return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
  }
}
