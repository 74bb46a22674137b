// A scoring thread (piscina): affect and significance of a text, off the event loop.
import { affectOf } from "../../src/mood/affect.js";
import { ScoreTaskSchema, type ScoreResult } from "../../src/memory/score-task.js";
import { significance } from "../../src/memory/significance.js";
import { parseTask } from "../../src/memory/parse-task.js";
import { sayLoaded } from "../../src/memory/thread-loaded.js";

export default function score(task: unknown): ScoreResult {
  const { text, toolCalls, maxSimilarity } = parseTask(ScoreTaskSchema, task);
  const affect = affectOf(text);
  return { ...affect, importance: significance({ text, affect, toolCalls, maxSimilarity }) };
}

sayLoaded();
