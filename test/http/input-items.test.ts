// The Responses API's input items as stored and as the conversation's messages they become.
import t from "tap";
import { itemsToMessages, storedInputItems } from "../../src/http/responses/input-items.js";

t.test("a string is one user message with an id", async (t) => {
  const items = storedInputItems("hello");
  t.match(items, [{ type: "message", id: /^msg_[0-9a-f]{48}$/, role: "user", content: [{ type: "input_text", text: "hello" }] }]);
  t.same(itemsToMessages(items), [{ role: "user", content: "hello" }]);
});

t.test("calls join the assistant message before them; outputs are tool messages; developer is system", async (t) => {
  const items = storedInputItems([
    { role: "developer", content: "be brief" },
    {
      role: "user",
      content: [
        { type: "input_text", text: "read " },
        { type: "input_text", text: "a and b" },
      ],
    },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "reading" }], id: "msg_kept" },
    { type: "function_call", call_id: "c1", name: "read", arguments: '{"p":"a"}' },
    { type: "function_call", call_id: "c2", name: "read", arguments: '{"p":"b"}' },
    { type: "function_call_output", call_id: "c1", output: "A" },
    { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "B" }] },
    { type: "function_call", call_id: "c3", name: "read", arguments: "{}" },
  ]);
  t.equal(items[2]!.id, "msg_kept", "a client's item id is kept");
  t.match(items[3], { type: "function_call", id: /^fc_/ });
  t.same(itemsToMessages(items), [
    { role: "system", content: "be brief" },
    { role: "user", content: "read a and b" },
    {
      role: "assistant",
      content: "reading",
      toolCalls: [
        { id: "c1", name: "read", arguments: '{"p":"a"}' },
        { id: "c2", name: "read", arguments: '{"p":"b"}' },
      ],
    },
    { role: "tool", content: "A", toolCallId: "c1" },
    { role: "tool", content: "B", toolCallId: "c2" },
    { role: "assistant", content: "", toolCalls: [{ id: "c3", name: "read", arguments: "{}" }] },
  ]);
});
