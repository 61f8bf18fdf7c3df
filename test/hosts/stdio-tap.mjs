// A pass-through between a host and `sess-mcp` over stdio: spawns the server with the same
// environment, copies stdin and stdout both ways unchanged, and appends every line the host sent
// to the file named by HOST_MATRIX_TAP (so a test can read what the host asked for, e.g. its
// progress tokens). The server's stderr goes to the host as the server's own would, and when
// HOST_MATRIX_STDERR names a file, to that file too (so a test can audit it).
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const [server, ...args] = process.argv.slice(2);
const tap = process.env.HOST_MATRIX_TAP;
const stderrLog = process.env.HOST_MATRIX_STDERR;
const env = { ...process.env };
delete env.HOST_MATRIX_TAP;
delete env.HOST_MATRIX_STDERR;
const child = spawn(process.execPath, [server, ...args], {
  env,
  stdio: ['pipe', 'inherit', stderrLog ? 'pipe' : 'inherit'],
});
child.stderr?.on('data', (chunk) => {
  appendFileSync(stderrLog, chunk);
  process.stderr.write(chunk);
});
process.stdin.on('data', (chunk) => {
  if (tap) appendFileSync(tap, chunk);
  child.stdin.write(chunk);
});
process.stdin.on('end', () => child.stdin.end());
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
