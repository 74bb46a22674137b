// The embedded Postgres is WebAssembly, and V8 compiles it twice by default: a quick baseline
// (Liftoff) to start with, then optimized code on background threads. A test's database lives
// seconds, too short to profit from the second, whose compilation cost nearly two seconds of CPU
// per test file on two cores (docs/developing.md, "Test tiers"). The flag is V8's, process-wide,
// and set in test processes only; `psyche serve` keeps the optimized code.
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--liftoff-only");
