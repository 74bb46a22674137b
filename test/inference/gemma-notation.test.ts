// Gemma 4's tool notation (src/inference/families/gemma-notation.ts) against Gemma 4's own chat
// template, rendered by node-llama-cpp's Jinja engine from the llama.cpp source it bundles: the
// declarations Psyche writes are the template's, character for character; its values read back.
import t from "tap";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { JinjaTemplateChatWrapper } from "node-llama-cpp";
import { gemmaCalls, gemmaDeclaration, gemmaValue } from "../../src/inference/families/gemma-notation.js";
import { llamaCppFile } from "../../src/inference/families/llama-cpp-files.js";
import { familyModelsDir } from "../helpers/family-engine.js";

// Unpacked where the engine was compiled here, else read out of node-llama-cpp's bundle, as the family models are.
const template = readFileSync(llamaCppFile("models/templates/google-gemma-4-31B-it.jinja", join(familyModelsDir(), "cache")), "utf8");
const schedule = {
  description: "Book a slot",
  params: {
    type: "object",
    properties: {
      when: {
        type: "object",
        description: "when",
        properties: { day: { type: "string", enum: ["Mon", "Tue"] }, hour: { type: "integer" } },
        required: ["day"],
      },
      who: { type: "array", items: { type: "string" } },
      urgent: { type: "boolean", nullable: true },
      note: { type: "string", description: "anything else" },
    },
    required: ["when"],
  },
} as const;

t.test("a declaration as Gemma 4's template writes it", async (t) => {
  // The template itself, through the Jinja engine node-llama-cpp's wrapper holds (its own prompt
  // for tools would wrap them in its generic instructions).
  const jinja = (new JinjaTemplateChatWrapper({ template }) as unknown as { _jinjaTemplate: { render(p: object): string } })._jinjaTemplate;
  const rendered = jinja.render({
    bos_token: "",
    messages: [{ role: "user", content: "x" }],
    tools: [{ type: "function", function: { name: "schedule", description: schedule.description, parameters: schedule.params } }],
  });
  const theirs = rendered.slice(rendered.indexOf("<|tool>") + "<|tool>".length, rendered.indexOf("<tool|>"));
  t.ok(theirs.startsWith("declaration:schedule"), theirs);
  t.equal(gemmaDeclaration("schedule", schedule.description, schedule.params), theirs);
});

t.test("values: written as the template writes them, and read back", async (t) => {
  const args = { urgent: false, when: { day: "Mon, early", hour: 9 }, who: ["Ann", "Bo"], none: null, ratio: -0.5 };
  const written = `<|tool_call>call:schedule${gemmaValue(args)}<tool_call|>`;
  t.equal(
    written,
    '<|tool_call>call:schedule{none:null,ratio:-0.5,urgent:false,when:{day:<|"|>Mon, early<|"|>,hour:9},who:[<|"|>Ann<|"|>,<|"|>Bo<|"|>]}<tool_call|>',
  );
  t.same(JSON.parse(gemmaCalls.parse(written, [])![0]!.arguments), args);
  t.same(JSON.parse(gemmaCalls.parse("<|tool_call>call:ping{}<tool_call|>", [])![0]!.arguments), {}, "no arguments");
  t.equal(gemmaCalls.parse('<|tool_call>call:schedule{when:{day:<|"|>Mon', []), undefined, "cut off");
  t.equal(gemmaCalls.parse("<|tool_call>call:ping{}<tool_call|> and more", []), undefined, "text after it");
});
