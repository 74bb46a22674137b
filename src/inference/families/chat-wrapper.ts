// The chat wrapper for a model: node-llama-cpp's choice (its specialized wrappers for Qwen,
// Harmony, Llama 3.1, Gemma 4 and DeepSeek, a Jinja wrapper over the model's own template
// otherwise), except where that choice would have the model call tools in a syntax it was not
// trained on, or one call at a time where the family writes several. Mistral's templates refuse
// node-llama-cpp's probe calls (their ids must be nine characters), so its Jinja wrapper falls
// back to a generic `||call:` syntax; Mistral Small 3.2 and Devstral write
// `[TOOL_CALLS]name[ARGS]{...}`, one after another, and read results in `[TOOL_RESULTS]`. The
// DeepSeek wrapper's `<function=…>` form for R1's distillations parses one call
// (docs/models.md, "Tool calls").
import {
  DeepSeekChatWrapper,
  JinjaTemplateChatWrapper,
  LlamaText,
  resolveChatWrapper,
  SpecialToken,
  SpecialTokensText,
  type ChatWrapper,
  type ChatWrapperSettings,
  type LlamaModel,
} from "node-llama-cpp";

// node-llama-cpp wants text after a call's parameters; the settings below replace these.
const MISTRAL_CALLS = {
  call: "[TOOL_CALLS]{{functionName}}[ARGS]{{functionParams}}</s>",
  result: "[TOOL_RESULTS]{{functionCallResult}}[/TOOL_RESULTS]",
} as const;

const special = (text: string) => LlamaText(new SpecialTokensText(text));

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
  if (chosen instanceof DeepSeekChatWrapper && chosen.functionCallingSyntax === "r1-workaround") return deepSeekInParallel(chosen);
  return chosen;
}

/** The wrapper with `functions` in place of its own function settings. */
function withFunctions<W extends ChatWrapper>(wrapper: W, functions: ChatWrapperSettings["functions"]): W {
  Object.defineProperty(wrapper, "settings", { value: { ...wrapper.settings, functions } satisfies ChatWrapperSettings });
  return wrapper;
}

/**
 * Mistral's template, with its own call syntax. The markers are control tokens, which the model
 * writes as one token each and a plain text would spell out: the settings name them as such.
 * Calls follow one another, each opened by `[TOOL_CALLS]`, and the reply ends at `</s>`; the
 * results follow in order, each in its `[TOOL_RESULTS]` block, as the template renders them.
 */
function mistralWrapper(template: string, model: LlamaModel): ChatWrapper {
  const wrapper = new JinjaTemplateChatWrapper({ template, tokenizer: model.tokenizer, functionCallMessageTemplate: MISTRAL_CALLS });
  // node-llama-cpp's generic description of the tools names a `||` prefix whatever the syntax.
  const described = wrapper.generateAvailableFunctionsSystemText.bind(wrapper);
  wrapper.generateAvailableFunctionsSystemText = (functions, options) =>
    described(functions, options).mapValues((v) => (typeof v === "string" ? v.replace("Note that the || prefix is mandatory.\n", "") : v));
  return withFunctions(wrapper, {
    ...wrapper.settings.functions,
    call: { optionalPrefixSpace: true, prefix: special("[TOOL_CALLS]"), paramsPrefix: special("[ARGS]"), suffix: "" },
    result: { prefix: special("[TOOL_RESULTS]"), suffix: special("[/TOOL_RESULTS]") },
    parallelism: {
      call: { sectionPrefix: "", betweenCalls: "", sectionSuffix: LlamaText(new SpecialToken("EOS")) },
      result: { sectionPrefix: "", betweenResults: "", sectionSuffix: "" },
    },
  });
}

/**
 * DeepSeek's wrapper for R1's distillations, whose vocabularies lack DeepSeek's tool tokens: it
 * asks for `<function=name>{…}</function>` and parses one. Several are read one line after
 * another, the reply ending at its end of sentence, and the results follow in order, as
 * DeepSeek's own template closes calls (`<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`) before them.
 */
function deepSeekInParallel(wrapper: DeepSeekChatWrapper): ChatWrapper {
  const { functions } = wrapper.settings;
  return withFunctions(wrapper, {
    ...functions,
    parallelism: {
      call: { sectionPrefix: "", betweenCalls: "\n", sectionSuffix: LlamaText(new SpecialToken("EOS")) },
      result: { sectionPrefix: "", betweenResults: "", sectionSuffix: "" },
    },
  });
}
