// Every family on every API (test/helpers/family-apis.ts): gpt-oss, Llama 3.1 and DeepSeek V3.1.
import t from "tap";
import { familyOnEveryApi } from "../helpers/family-apis.js";

for (const family of ["gpt-oss", "llama3.1", "deepseek-v3.1"]) familyOnEveryApi(t, family);
