/**
 * The test files' order: within each group of the run, the files that take longest start first,
 * so on a clean clone (no timings cached yet) the run does not end on one long file started
 * last. The list names the long poles measured on a 2-core machine; every other file keeps the
 * order Vitest gives it (cached timings, else file size). This decides order only, never which
 * files run.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest files, slowest first (seconds on a 2-core machine, one file at a time). */
export const LONG_POLES = [
  'test/hosts/claude-code.test.ts', // ~140 s: a real Claude Code, stdio and HTTP
  'test/page/axe.test.ts', // ~65–140 s: axe-core in Chromium, every page state, two schemes
  'test/page/browser.test.ts', // ~100 s
  'test/hosts/codex.test.ts', // ~80 s
  'test/hosts/opencode.test.ts', // ~65–80 s: flows beside its 45 s long call
  'test/hosts/qwen-code.test.ts', // ~55–80 s: flows beside its 45 s long call
  'test/hosts/langchain.test.ts', // ~57 s
  'test/reliability/crash-cells.test.ts', // ~51 s
  'test/hosts/openai-agents.test.ts', // ~50 s: four rows side by side, each bound by its 45 s call
  'test/hosts/gemini-cli.test.ts', // ~50 s: flows beside its 45 s long call
  'test/hosts/ai-sdk.test.ts', // ~49 s
  'test/reliability/crash.test.ts', // ~36 s
  'test/hosts/claude-code-wake.test.ts', // ~35 s: two interactive Claude Codes, a person 15 s late
  'test/stdio/resilience.test.ts', // ~35 s
  'test/http/inspector.test.ts', // ~31 s
  'test/signin/oauth-http.test.ts', // ~28 s
];

function rank(spec: TestSpecification): number {
  const at = LONG_POLES.findIndex((path) => spec.moduleId.endsWith(path));
  return at === -1 ? LONG_POLES.length : at;
}

/** Vitest's own order, with the long poles moved to the front of their group. */
export class LongPolesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => group(a.spec) - group(b.spec) || rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
