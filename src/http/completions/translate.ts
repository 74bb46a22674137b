// A legacy completions request as a text completion (conversation/open-completion.ts): pure, as
// http/chat/translate.ts is.
import type { CompletionRequest } from "../../conversation/open-completion.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import type { WebServices } from "../../web-services.js";
import { fieldsToIgnore, withoutFields } from "../request-fields.js";
import { stopList } from "../chat/translate.js";
import { CompletionRequestSchema, DEFAULT_COMPLETION_TOKENS } from "../schemas/completions.js";

export interface CompletionTranslation {
  request: CompletionRequest;
  ignored: string[];
  reply: { stream: boolean; includeUsage: boolean; echo: boolean };
}

/** Where this process has the model, a suffix it cannot fill in is refused before anything is stored; elsewhere the worker says so. */
export async function refuseUnfillableSuffix(deps: Pick<WebServices, "describeModel">, request: CompletionRequest): Promise<void> {
  if (request.suffix !== null && (await deps.describeModel?.())?.fillInMiddle === false)
    throw invalidRequest("suffix: this model has no fill-in-the-middle tokens, so a suffix cannot be completed into", "suffix");
}

export function completionRequest(body: Record<string, unknown>, strict: boolean): CompletionTranslation {
  const ignored = fieldsToIgnore(body, { known: CompletionRequestSchema.shape, notHonoured: {} }, strict);
  const parsed = CompletionRequestSchema.safeParse(withoutFields(body, ignored));
  if (!parsed.success) throw fromZodError(parsed.error);
  const req = parsed.data;
  const prompt = typeof req.prompt === "string" ? req.prompt : req.prompt[0]!;
  const stream = req.stream ?? false;
  return {
    request: {
      model: req.model,
      prompt,
      suffix: req.suffix || null,
      sampling: {
        temperature: req.temperature ?? null,
        topP: req.top_p ?? null,
        topK: null,
        seed: req.seed ?? null,
        stop: stopList(req.stop),
        presencePenalty: req.presence_penalty ?? null,
        frequencyPenalty: req.frequency_penalty ?? null,
        logitBias: req.logit_bias ?? null,
      },
      // max_tokens 0 asks for no text; a reply of at least one token is the least the engine makes.
      budget: { maxTokens: Math.max(1, req.max_tokens ?? DEFAULT_COMPLETION_TOKENS), field: "max_tokens" },
      stream,
    },
    ignored,
    reply: { stream, includeUsage: req.stream_options?.include_usage ?? false, echo: req.echo ?? false },
  };
}
