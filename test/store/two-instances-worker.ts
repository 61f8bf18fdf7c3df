/**
 * One instance of `examples/postgres-http.ts` run as its own OS process by
 * `two-instances.test.ts` (bundled with esbuild). It reads its options as one JSON line on stdin
 * (secrets stay out of argv), starts the instance, prints `{"url":…}` and serves until stdin
 * ends, then closes and exits. It prints nothing else: no options, links or answers.
 */
import { startPostgresHttpInstance } from '../../examples/postgres-http.js';

/** Resolves with stdin's first line; `ended` resolves when stdin ends (the test is done). */
function readStdin(): { line: Promise<string>; ended: Promise<void> } {
  let buffer = '';
  let gotLine: (line: string) => void = () => {};
  const line = new Promise<string>((resolve) => {
    gotLine = resolve;
  });
  process.stdin.on('data', (chunk) => {
    buffer += String(chunk);
    const eol = buffer.indexOf('\n');
    if (eol >= 0) gotLine(buffer.slice(0, eol));
  });
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  return { line, ended };
}

async function main(): Promise<void> {
  const stdin = readStdin();
  const options = JSON.parse(await Promise.race([stdin.line, stdin.ended.then(() => '{}')]));
  const instance = await startPostgresHttpInstance(options);
  process.stdout.write(`${JSON.stringify({ url: instance.url })}\n`);
  await stdin.ended;
  await instance.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    // The name and code only: a message could quote the connection string.
    const code = (error as { code?: unknown } | null)?.code;
    const name = error instanceof Error ? error.name : 'error';
    process.stderr.write(`instance failed: ${name}${typeof code === 'string' ? ` ${code}` : ''}\n`);
    process.exit(1);
  },
);
