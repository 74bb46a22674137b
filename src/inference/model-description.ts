// The loaded model as a client's model list describes it (Ollama's /api/show and /api/tags):
// read from its GGUF's metadata, never guessed from its file name.
import { GgufFileType, type LlamaModel } from "node-llama-cpp";
import { fillsInMiddle } from "./text-completion.js";
import type { ModelDescription } from "./engine.js";

/** The GGUF's scalar metadata as dotted keys (tokenizer arrays left out: they are the vocabulary). */
function flatten(value: unknown, prefix: string, out: Record<string, string | number | boolean>): void {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") out[prefix] = value;
  else if (typeof value === "bigint") out[prefix] = Number(value);
  else if (value && typeof value === "object" && !Array.isArray(value))
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
}

export function describeModel(model: LlamaModel, contextLength: number, thinks: boolean): ModelDescription {
  const meta = model.fileInfo.metadata;
  const general = meta.general as { architecture?: string; size_label?: string; file_type?: number } | undefined;
  // llama.cpp's own description: "<architecture> <size> <type>", e.g. "qwen3 0.6B Q8_0".
  const [, described] = model.typeDescription.split(" ");
  const fileType = general?.file_type !== undefined ? GgufFileType[general.file_type] : undefined;
  const info: Record<string, string | number | boolean> = {};
  flatten({ ...meta, tokenizer: { ggml: { model: meta.tokenizer?.ggml?.model } } }, "", info);
  delete info["tokenizer.chat_template"];
  return {
    architecture: general?.architecture ?? String(model.architecture),
    parameterSize: general?.size_label ?? described ?? "unknown",
    quantization: fileType ? fileType.replace(/^MOSTLY_/, "") : "unknown",
    bytes: model.size,
    contextLength,
    template: meta.tokenizer?.chat_template ?? "",
    thinks,
    fillInMiddle: fillsInMiddle(model),
    info,
  };
}
