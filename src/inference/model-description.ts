// The loaded model as a client's model list describes it (Ollama's /api/show and /api/tags):
// read from its GGUF's metadata, never guessed from its file name.
import { GgufFileType, type LlamaModel } from "node-llama-cpp";

export interface ModelDescription {
  /** The GGUF's architecture (qwen3, llama, gemma3…): Ollama's family. */
  architecture: string;
  /** Its size as its makers label it ("0.6B"), or as llama.cpp counts it. */
  parameterSize: string;
  /** The weights' type ("Q4_K_M", "F16"). */
  quantization: string;
  /** The file's size in bytes. */
  bytes: number;
  /** Tokens of context the server gives a conversation. */
  contextLength: number;
  /** The chat template in the GGUF; empty where it has none. */
  template: string;
  /** Whether its chat wrapper marks thoughts. */
  thinks: boolean;
  /** Whether it has fill-in-the-middle tokens. */
  fillInMiddle: boolean;
  /** The GGUF's metadata keys and values (scalars only), as Ollama's model_info. */
  info: Record<string, string | number | boolean>;
}

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
    fillInMiddle: [model.tokens.infill.prefix, model.tokens.infill.suffix, model.tokens.infill.middle].every((t) => t !== null),
    info,
  };
}
