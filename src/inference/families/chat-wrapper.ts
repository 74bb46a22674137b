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
  QwenChatWrapper,
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
/** Results rendered back one after another, in the calls' order, with nothing around them. */
const RESULTS_IN_ORDER = { sectionPrefix: "", betweenResults: "", sectionSuffix: "" } as const;
const END = LlamaText(new SpecialToken("EOS"));

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
  if (chosen instanceof JinjaTemplateChatWrapper && typeof template === "string" && template.includes(DEEPSEEK_V3.sep))
    return deepSeekV3Wrapper(template, model);
  return chosen;
}

const DEEPSEEK_V3 = {
  callsBegin: "<｜tool▁calls▁begin｜>",
  callsEnd: "<｜tool▁calls▁end｜>",
  callBegin: "<｜tool▁call▁begin｜>",
  callEnd: "<｜tool▁call▁end｜>",
  sep: "<｜tool▁sep｜>",
  outputBegin: "<｜tool▁output▁begin｜>",
  outputEnd: "<｜tool▁output▁end｜>",
} as const;

const deepSeekV3 = new WeakSet<ChatWrapper>();

/**
 * DeepSeek V3.1's template, with its own tool tokens. node-llama-cpp reads the call syntax off
 * the template by comparing renders character by character, and cuts it mid-token (`｜><｜tool▁call▁begin｜>`),
 * which the model could never write; and the template leaves the tools out of the prompt, which
 * node-llama-cpp then never describes. Here the calls are DeepSeek's tokens whole, several in one
 * `<｜tool▁calls▁begin｜>` section, and the tools are described as DeepSeek's model card asks
 * (docs/models.md, "Tool calls").
 */
function deepSeekV3Wrapper(template: string, model: LlamaModel, thinking = true): ChatWrapper {
  const t = DEEPSEEK_V3;
  const wrapper = new JinjaTemplateChatWrapper({
    template,
    tokenizer: model.tokenizer,
    functionCallMessageTemplate: {
      call: `${t.callBegin}{{functionName}}${t.sep}{{functionParams}}${t.callEnd}`,
      result: `${t.outputBegin}{{functionCallResult}}${t.outputEnd}`,
    },
  });
  wrapper.generateAvailableFunctionsSystemText = (functions) => {
    const tools = Object.entries(functions).map(([name, f]) =>
      [`### ${name}`, `Description: ${f.description ?? ""}`, "", `Parameters: ${JSON.stringify(f.params ?? {})}`].join("\n"),
    );
    return LlamaText([
      [
        "## Tools",
        "You have access to the following tools:",
        "",
        tools.join("\n\n"),
        "",
        "IMPORTANT: ALWAYS adhere to this exact format for tool use:",
        "",
      ].join("\n"),
      new SpecialTokensText(t.callsBegin + t.callBegin),
      "tool_call_name",
      new SpecialTokensText(t.sep),
      "tool_call_arguments",
      new SpecialTokensText(t.callEnd),
      "{{additional_tool_calls}}",
      new SpecialTokensText(t.callsEnd),
      [
        "",
        "",
        "Where:",
        "",
        "- `tool_call_name` must be an exact match to one of the available tools",
        "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema",
        "- For multiple tool calls, chain them directly without separators or spaces",
      ].join("\n"),
    ]);
  };
  deepSeekV3.add(wrapper);
  const thought = wrapper.settings.segments?.thought;
  // Thinking on unless asked off, as llama-server renders the template (`enable_thinking` true):
  // the reply opens a thought where the template would close an empty one.
  if (thinking && thought)
    Object.defineProperty(wrapper, "settings", {
      value: { ...wrapper.settings, segments: { ...wrapper.settings.segments, thought: { ...thought, openOnResponseStart: true } } },
    });
  return withFunctions(wrapper, {
    ...wrapper.settings.functions,
    call: { optionalPrefixSpace: true, prefix: special(t.callBegin), paramsPrefix: special(t.sep), suffix: special(t.callEnd) },
    result: { prefix: special(t.outputBegin), suffix: special(t.outputEnd) },
    parallelism: {
      call: {
        sectionPrefix: special(t.callsBegin),
        betweenCalls: "",
        sectionSuffix: LlamaText(new SpecialTokensText(t.callsEnd), new SpecialToken("EOS")),
      },
      result: RESULTS_IN_ORDER,
    },
  });
}

/**
 * The family's switch for thinking off, where it has one: Qwen3's wrapper with thoughts
 * discouraged renders an empty thought before the reply (as Qwen3's template does with
 * enable_thinking false); DeepSeek V3.1's template rendered with `thinking` false. Undefined for
 * other wrappers.
 */
export function thoughtsOffFor(wrapper: ChatWrapper, model: LlamaModel): ChatWrapper | undefined {
  if (wrapper instanceof QwenChatWrapper)
    return Object.assign(Object.create(Object.getPrototypeOf(wrapper) as object) as QwenChatWrapper, wrapper, { thoughts: "discourage" });
  if (deepSeekV3.has(wrapper) && wrapper instanceof JinjaTemplateChatWrapper) return deepSeekV3Wrapper(wrapper.template, model, false);
  return undefined;
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
      call: { sectionPrefix: "", betweenCalls: "", sectionSuffix: END },
      result: RESULTS_IN_ORDER,
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
      call: { sectionPrefix: "", betweenCalls: "\n", sectionSuffix: END },
      result: RESULTS_IN_ORDER,
    },
  });
}
