// Where `psyche mcp` looks for the server: --server-url, else where `psyche serve` listens.
import t from "tap";
import { serverBaseUrl } from "../../src/mcp/stdio-bridge.js";

t.test("the configured URL wins, without a trailing slash", async (t) => {
  t.equal(serverBaseUrl({ serverUrl: "https://psyche.example:9000/", host: "127.0.0.1", port: 8741 }), "https://psyche.example:9000");
});

t.test("otherwise the serve address; a wildcard host is reached on loopback", async (t) => {
  t.equal(serverBaseUrl({ host: "127.0.0.1", port: 8741 }), "http://127.0.0.1:8741");
  t.equal(serverBaseUrl({ host: "0.0.0.0", port: 9000 }), "http://127.0.0.1:9000");
  t.equal(serverBaseUrl({ host: "::", port: 9000 }), "http://127.0.0.1:9000");
  t.equal(serverBaseUrl({ host: "::1", port: 9000 }), "http://[::1]:9000");
  t.equal(serverBaseUrl({ host: "localhost", port: 8741 }), "http://localhost:8741");
});
