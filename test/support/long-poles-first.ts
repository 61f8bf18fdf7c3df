/**
 * The test files' order: within each group of the run, the files that take longest start first,
 * so on a clean clone (no timings cached yet) the run does not end on one long file started
 * last. The list names the long poles measured on a 2-core machine; every other file keeps the
 * order Vitest gives it (cached timings, else file size, largest first). A short file can take
 * long (the soak's is among the smallest): a long file missing here starts near the end of a
 * clean clone's run, and the run then waits on it alone. This decides order only, never which
 * files run.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest files, slowest first (seconds on a 2-core machine, alone or beside a few files). */
export const LONG_POLES = [
  'test/hosts/claude-code.test.ts', // ~110–140 s: a real Claude Code, stdio and HTTP
  'test/soak/soak.test.ts', // ~105 s: its 60 s fault schedule, three instances, PostgreSQL, HAProxy
  'test/page/axe.test.ts', // ~65–140 s: axe-core in Chromium, every page state, two schemes
  'test/page/browser.test.ts', // ~80–100 s
  'test/hosts/codex.test.ts', // ~80 s
  'test/hosts/opencode.test.ts', // ~65–80 s: flows beside its 45 s long call
  'test/hosts/qwen-code.test.ts', // ~55–80 s: flows beside its 45 s long call
  'test/store/file-fencing.test.ts', // ~50–70 s: leases taken over, a 15 s real lease
  'test/store/postgres.test.ts', // ~20–63 s: the contract suite and two-process races
  'test/store/file.test.ts', // ~10–59 s: the contract suite, two-process races, a killed writer
  'test/hosts/langchain.test.ts', // ~57 s
  'test/store/file-fencing-engine.test.ts', // ~55 s: every engine write taken over
  'test/store/two-instances.test.ts', // ~52 s: two HTTP instances on one PostgreSQL
  'test/reliability/crash-cells.test.ts', // ~46–51 s
  'test/hosts/mcp-remote.test.ts', // ~55 s: two mcp-remote sign-ins, then a 45 s call beside the flows
  'test/hosts/mastra.test.ts', // ~53 s: two rows side by side, each bound by its 45 s call
  'test/hosts/openai-agents.test.ts', // ~50 s: four rows side by side, each bound by its 45 s call
  'test/signin/reconnect.test.ts', // ~50 s: mcp-remote signing in through Chromium, both bindings
  'test/hosts/gemini-cli.test.ts', // ~50 s: flows beside its 45 s long call
  'test/hosts/ai-sdk.test.ts', // ~49 s
  'test/store/retention-bounds.test.ts', // ~45 s: 20 000 interactions finished and pruned per store
  'test/engine/list.test.ts', // ~38 s
  'test/package/install-lines.test.ts', // ~37 s: the packed tarball in a fresh project
  'test/reliability/crash.test.ts', // ~36 s
  'test/hosts/claude-code-wake.test.ts', // ~35 s: two interactive Claude Codes, a person 15 s late
  'test/stdio/resilience.test.ts', // ~35 s
  'test/http/inspector.test.ts', // ~31 s
  'test/signin/oauth-http.test.ts', // ~28 s
  // CPU, not waiting: about 65 CPU-seconds of tsc, so it starts after the files that mostly wait.
  'test/package/strict-consumer.test.ts', // ~95 s alone, ~140 s beside other files
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
