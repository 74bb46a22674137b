// Which errors mean the database went away (a turn is then resumed once it is back), and which
// are a query the server refused (the turn fails with the message).
import t from "tap";
import { isConnectionError } from "../../src/db/errors.js";

t.test("connections lost, by code or by node-postgres's words", async (t) => {
  for (const err of [
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
    Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
    Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
    Object.assign(new Error("the database system is starting up"), { code: "57P03" }),
    Object.assign(new Error("connection failure"), { code: "08006" }),
    new Error("Connection terminated unexpectedly"),
    new Error("Client has encountered a connection error and is not queryable"),
    new Error("timeout exceeded when trying to connect"),
  ])
    t.ok(isConnectionError(err), err.message);
});

t.test("a refused query is not a lost connection", async (t) => {
  for (const err of [
    Object.assign(new Error('relation "nope" does not exist'), { code: "42P01" }),
    Object.assign(new Error("duplicate key value violates unique constraint"), { code: "23505" }),
    new Error("generation failed: the model broke"),
    null,
    "a string",
  ])
    t.notOk(isConnectionError(err), String((err as Error | null)?.message ?? err));
});
