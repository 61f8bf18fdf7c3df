/**
 * The TypeScript samples of a Markdown page, type-checked as a user's project would see them: each
 * ` ```ts ` block is its own module, compiled strictly against the package's own published types
 * (self-reference through the exports map, so `dist/` from `pretest`'s build). A block whose first
 * line is a comment naming a file (`// sess-engine.ts`) is written under that name, so the page's
 * other samples can import it (`./sess-engine.js`); any other block is `sample-<n>.ts`.
 *
 * @example
 * ```ts
 * const samples = tsSamples(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
 * expect(typeCheckSamples('readme-samples', samples)).toBe('');
 * ```
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo-files.js';

/** Every ` ```ts ` block of `markdown`, in order. */
export function tsSamples(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The file a sample is written to: the name its first line gives, else `sample-<n>.ts`. */
function fileNameOf(code: string, index: number): string {
  return /^\/\/ ([a-z][a-z0-9-]*\.ts)\n/.exec(code)?.[1] ?? `sample-${index + 1}.ts`;
}

/**
 * Write `samples` into `.tmp/<dir>` and run `tsc` over them with strict settings; the compiler's
 * output, `''` when every sample compiles.
 */
export function typeCheckSamples(dir: string, samples: readonly string[]): string {
  const root = join(repoRoot, '.tmp', dir);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const files = samples.map((code, i) => {
    const name = fileNameOf(code, i);
    // Each sample is its own module.
    writeFileSync(join(root, name), `${code}\nexport {};\n`);
    return name;
  });
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023', 'DOM'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(repoRoot, 'node_modules/@types')],
      },
      files,
    }),
  );
  try {
    execFileSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', root], {
      encoding: 'utf8',
      cwd: root,
    });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}
