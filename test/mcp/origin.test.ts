// DNS-rebinding protection: which Origin headers may use /mcp.
import t from "tap";
import { originAllowed } from "../../src/mcp/origin.js";

t.test("no Origin (command-line clients, hook scripts) is allowed", async (t) => {
  t.equal(originAllowed(undefined, []), true);
});

t.test("loopback pages are allowed, on any port", async (t) => {
  for (const o of ["http://localhost:3000", "http://127.0.0.1:8741", "http://[::1]:6274", "https://localhost"])
    t.equal(originAllowed(o, []), true, o);
});

t.test("foreign, rebinding and unreadable origins are refused", async (t) => {
  for (const o of [
    "http://evil.example",
    "http://evil.example:8741",
    "http://127.0.0.1.evil.example",
    "http://localhost.evil.example:8741",
    "null",
    "file://",
    "chrome-extension://abc",
    "not a url",
    "",
  ]) {
    t.equal(originAllowed(o, []), false, JSON.stringify(o));
  }
});

t.test("configured origins are allowed exactly", async (t) => {
  const configured = ["https://app.example.com"];
  t.equal(originAllowed("https://app.example.com", configured), true);
  t.equal(originAllowed("http://app.example.com", configured), false, "another scheme is another origin");
  t.equal(originAllowed("https://app.example.com:8443", configured), false, "another port is another origin");
});
