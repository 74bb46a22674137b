// Every family on every API (test/helpers/family-apis.ts): Qwen3, Qwen3-Coder and Mistral.
import t from "tap";
import { familyOnEveryApi } from "../helpers/family-apis.js";

for (const family of ["qwen3", "qwen3-coder", "mistral"]) familyOnEveryApi(t, family);
