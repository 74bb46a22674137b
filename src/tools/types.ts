// The tool-call protocol, one declaration for every layer: the HTTP and MCP requests, the
// stored turn, the prompt and the engine all speak these shapes (OpenAI's, flattened).

/** A client's function tool, as OpenAI describes it (and as stored with its turn). */
export interface ToolSpec {
  name: string;
  description?: string | undefined;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown> | undefined;
}

/** OpenAI's tool_choice: the model decides, never calls, must call, or must call this one. */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** A call an assistant message made (OpenAI's tool_calls, flattened). */
export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as a JSON text (OpenAI's `function.arguments`). */
  arguments: string;
}

/** A call as the model produced it, before it has an id. */
export interface GeneratedToolCall extends Omit<ToolCall, "id"> {
  /** Where the arguments break the tool's schema (what the grammar cannot enforce); empty if valid. */
  problems: string[];
}

/** A call of a turn's reply, as stored: with its id and its problems. */
export interface CheckedToolCall extends ToolCall {
  problems: string[];
}
