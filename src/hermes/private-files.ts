// Files in the workspace that hold secrets or that the workspace keeps out of version control:
// idle exploration runs unattended and sends what it reads to a server that may be remote, so
// it skips them; an attended read of one asks first. Three sources, in gitignore syntax, read
// by the `ignore` package (git's own matching rules, parents and negations included): a
// built-in list of secrets, the workspace's ignore files (.gitignore at every level,
// .git/info/exclude, .ignore), and the user's --idle-exclude patterns.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

/** Secrets whatever the workspace's ignore files say: keys, tokens, cloud and registry credentials. */
export const BUILT_IN_PRIVATE = [
  ".env",
  ".env.*",
  "!.env.example",
  "!.env.sample",
  "!.env.template",
  "*.pem",
  "*.key",
  "*.p12",
  "*.pfx",
  "*.jks",
  "*.keystore",
  "id_rsa*",
  "id_dsa*",
  "id_ecdsa*",
  "id_ed25519*",
  "!id_*.pub",
  ".ssh/",
  ".gnupg/",
  ".npmrc",
  ".yarnrc.yml",
  ".pypirc",
  ".netrc",
  ".git-credentials",
  ".aws/",
  ".azure/",
  ".config/gcloud/",
  ".kube/",
  ".docker/config.json",
  "credentials.json",
  "*credentials*.json",
  "service-account*.json",
  "secrets.*",
  "*.secret",
  "*.secrets",
  ".htpasswd",
  "terraform.tfstate*",
  "*.tfvars",
];

const IGNORE_FILES = [".gitignore", ".ignore"];

export class PrivateFiles {
  private readonly fixed: Ignore;
  /** Each directory's own ignore files, relative to it (git reads them level by level). */
  private readonly perDir = new Map<string, Ignore | null>();

  constructor(
    private readonly root: string,
    extra: readonly string[] = [],
  ) {
    this.fixed = ignore()
      .add(BUILT_IN_PRIVATE)
      .add([...extra]);
    const exclude = join(root, ".git", "info", "exclude");
    if (existsSync(exclude)) this.fixed.add(readFileSync(exclude, "utf8"));
  }

  /** True for a real path inside the workspace that unattended tools must not read. */
  isPrivate(real: string, isDirectory = false): boolean {
    const rel = relative(this.root, real).split(sep).join("/");
    if (rel === "" || rel.startsWith("..")) return false;
    if (rel === ".git" || rel.startsWith(".git/")) return true;
    const path = isDirectory ? `${rel}/` : rel;
    if (this.fixed.ignores(path)) return true;
    // Every directory from the root down to the file's own may ignore it, relative to itself.
    let dir = dirname(rel);
    for (;;) {
      const rules = this.rulesOf(dir === "." ? "" : dir);
      if (rules && rules.ignores(dir === "." ? path : path.slice(dir.length + 1))) return true;
      if (dir === ".") return false;
      dir = dirname(dir);
    }
  }

  private rulesOf(dir: string): Ignore | null {
    let rules = this.perDir.get(dir);
    if (rules === undefined) {
      const found = IGNORE_FILES.map((f) => join(this.root, dir, f)).filter((f) => existsSync(f));
      rules = found.length ? ignore().add(found.map((f) => readFileSync(f, "utf8")).join("\n")) : null;
      this.perDir.set(dir, rules);
    }
    return rules;
  }
}
