// Every family on every API (test/helpers/family-apis.ts): Gemma 4 and DeepSeek R1.
import t from "tap";
import { familyOnEveryApi } from "../helpers/family-apis.js";

for (const family of ["gemma4", "deepseek-r1"]) familyOnEveryApi(t, family);
