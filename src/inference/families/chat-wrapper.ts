// The chat wrapper for a model: node-llama-cpp's choice (its specialized wrappers for Qwen,
// Harmony, Llama 3.1, Gemma 4 and DeepSeek, a Jinja wrapper over the model's own template
// otherwise), except where that choice would have the model call tools in a syntax it was not
// trained on. Mistral's templates refuse node-llama-cpp's probe calls (their ids must be nine
// characters), so its Jinja wrapper falls back to a generic `||call:` syntax; Mistral Small 3.2
// and Devstral write `[TOOL_CALLS]name[ARGS]{...}` and read results in `[TOOL_RESULTS]`
// (docs/models.md, "Tool calls").
import {
  JinjaTemplateChatWrapper,
  LlamaText,
  resolveChatWrapper,
  SpecialTokensText,
  type ChatWrapper,
  type ChatWrapperSettings,
  type LlamaModel,
} from "node-llama-cpp";

const MISTRAL_CALLS = {
  call: "[TOOL_CALLS]{{functionName}}[ARGS]{{functionParams}}</s>",
  result: "[TOOL_RESULTS]{{functionCallResult}}[/TOOL_RESULTS]",
} as const;

export function chatWrapperFor(model: LlamaModel): ChatWrapper {
  const chosen = resolveChatWrapper(model) ?? resolveChatWrapper({ type: "chatML" });
  const template = model.fileInfo.metadata.tokenizer?.chat_template;
  if (
    chosen instanceof JinjaTemplateChatWrapper &&
    typeof template === "string" &&
    /\[TOOL_CALLS\]/.test(template) &&
    /\[ARGS\]/.test(template)
  )
    return mistralWrapper(template, model);
  return chosen;
}

/**
 * Mistral's template, with its own call syntax. The markers are control tokens, which the model
 * writes as one token each and a plain text would spell out: the settings name them as such.
 */
function mistralWrapper(template: string, model: LlamaModel): ChatWrapper {
  const wrapper = new JinjaTemplateChatWrapper({ template, tokenizer: model.tokenizer, functionCallMessageTemplate: MISTRAL_CALLS });
  const special = (text: string) => LlamaText(new SpecialTokensText(text));
  const settings: ChatWrapperSettings = {
    ...wrapper.settings,
    functions: {
      ...wrapper.settings.functions,
      call: { optionalPrefixSpace: true, prefix: special("[TOOL_CALLS]"), paramsPrefix: special("[ARGS]"), suffix: special("</s>") },
      result: { prefix: special("[TOOL_RESULTS]"), suffix: special("[/TOOL_RESULTS]") },
    },
  };
  Object.defineProperty(wrapper, "settings", { value: settings });
  return wrapper;
}
