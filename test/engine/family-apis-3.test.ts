// Every family on every API (test/helpers/family-apis.ts): gpt-oss and Llama 3.1.
import t from "tap";
import { familyOnEveryApi } from "../helpers/family-apis.js";

for (const family of ["gpt-oss", "llama3.1"]) familyOnEveryApi(t, family);
