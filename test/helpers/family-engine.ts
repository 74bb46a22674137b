// A family's test model (inference/families/) on the real engine, for tests that need the
// family's own chat wrapper to parse what the model writes: `forcedReply` holds the model to an
// exact text in the family's syntax (a thought, then an answer), by a grammar, so the assertions
// meet what a real model of the family would write. The models are made once per checkout, in
// test/artifacts/ (git ignores it), and shared by the test files.
import { join } from "node:path";
import { ensureFamilyModel, loadLlama, loadModelFile } from "../../src/inference/load-model.js";
import { LlamaEngine } from "../../src/inference/llama-engine.js";
import { familyNamed } from "../../src/inference/families/families.js";
import type { GenerateRequest } from "../../src/inference/engine.js";
import { createLogger } from "../../src/log.js";
import { packageRoot } from "../../src/paths.js";

export const familyModelsDir = () => join(packageRoot(), "test", "artifacts", "family-models");

export async function familyModel(name: string): Promise<string> {
  const family = familyNamed(name);
  if (!family) throw new Error(`no family ${name}`);
  return ensureFamilyModel(familyModelsDir(), family);
}

export async function familyEngine(
  name: string,
  forcedReply?: (request: GenerateRequest) => string | { gbnf: string } | undefined,
  contextSize = 4096,
): Promise<LlamaEngine> {
  const llama = await loadLlama("false", createLogger("silent"));
  const model = await loadModelFile(llama, await familyModel(name));
  return LlamaEngine.create({ llama, model, modelName: `tiny-${name}`, threads: 1, contextSize, parallel: 2, forcedReply });
}
