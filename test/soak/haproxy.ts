/**
 * HAProxy in front of the soak's instances: Debian's `haproxy` binary, started in the foreground
 * (`-db`) with a configuration written for the run, listening on 127.0.0.1 only. It balances
 * round-robin over the instances, checks each with `option httpchk GET /healthz` every 250 ms
 * (down after 2 failed checks, up after 1 good one), and sends a request whose connection was
 * refused to another instance (`retries`, `option redispatch`). A request already sent to an
 * instance that dies is not replayed: the client gets the error, as it would in production.
 *
 * It starts and stops HAProxy; it does not judge what passes through it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Where Debian's package puts the binary. */
export const HAPROXY_BIN = '/usr/sbin/haproxy';
/** What to run when it is missing. */
export const HAPROXY_INSTALL = 'apt-get install haproxy (Debian), as .ci/run does';

/** The binary, or an error that says how to install it. */
export function findHaproxy(): string {
  if (existsSync(HAPROXY_BIN)) return HAPROXY_BIN;
  throw new Error(`haproxy is not installed at ${HAPROXY_BIN}: ${HAPROXY_INSTALL}`);
}

/** The configuration: one frontend on `port`, one backend of `servers` (name → port). */
export function haproxyConfig(port: number, servers: ReadonlyArray<[string, number]>): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    // A sess_response may wait up to 45 s upstream: longer than that is a hung request.
    '  timeout client 90s',
    '  timeout server 90s',
    '  timeout http-keep-alive 10s',
    '  retries 2',
    '  option redispatch',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend instances',
    'backend instances',
    '  balance roundrobin',
    '  option httpchk GET /healthz',
    '  http-check expect status 200',
    '  default-server inter 250ms fastinter 250ms downinter 250ms fall 2 rise 1',
    ...servers.map(([name, serverPort]) => `  server ${name} 127.0.0.1:${serverPort} check`),
    '',
  ].join('\n');
}

/** A running HAProxy. */
export interface RunningHaproxy {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly pid: number;
  /** Its health checks' verdicts as they came: which server went `UP` or `DOWN`, when (`Date.now()`). */
  readonly transitions: Array<{ at: number; server: string; state: 'UP' | 'DOWN' }>;
  stop(): Promise<void>;
}

/** Start HAProxy with {@link haproxyConfig} written to `dir`; resolves once it accepts connections. */
export async function startHaproxy(
  dir: string,
  port: number,
  servers: ReadonlyArray<[string, number]>,
): Promise<RunningHaproxy> {
  const bin = findHaproxy();
  const config = join(dir, 'haproxy.cfg');
  await writeFile(config, haproxyConfig(port, servers));
  const child: ChildProcess = spawn(bin, ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const transitions: RunningHaproxy['transitions'] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stderr = (stderr + text).slice(-4_000);
    for (const m of text.matchAll(/Server instances\/(\w+) is (UP|DOWN)/g)) {
      transitions.push({ at: Date.now(), server: m[1]!, state: m[2] as 'UP' | 'DOWN' });
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}/mcp`;
  for (const started = Date.now(); ; await sleep(50)) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${stderr}`);
    try {
      await fetch(`http://127.0.0.1:${port}/livez`);
      break;
    } catch {
      if (Date.now() - started > 10_000) {
        child.kill('SIGKILL');
        throw new Error(`haproxy did not accept connections within 10 s: ${stderr}`);
      }
    }
  }
  return {
    url,
    pid: child.pid as number,
    transitions,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
