/**
 * The owner procedure through the real `sess-mcp` bin: after a create whose outcome was lost
 * (`CREATE_OUTCOME_UNKNOWN`) and a publish Sess refused (`MUTATION_REJECTED`), `records list`
 * finds both by state, `records show` redacts the link and answer, `records retire` refuses
 * without confirmation and retires with `--yes`, and the retired handle is gone for the tools.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProfileRecords } from '../../src/store/file/index.js';
import { installFileFixtures010, manifest010 } from '../store/fixtures-010.js';
import { findOutsideTool } from '../support/outside-tool.js';
import { useStdioStack } from '../support/stdio-stack.js';
import { approveSurface } from '../support/surfaces.js';
import { buildSessMcpBin, errorOf, interactionOf, publishAfter, runBin } from './harness.js';

const stdio = useStdioStack();

describe('sess-mcp records (the bin)', () => {
  it('prints usage with --help and refuses configuration in arguments', async () => {
    const help = await runBin(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('sess-mcp records list');
    for (const args of [
      ['--api-key', 'sk_should_never_be_accepted'],
      ['sk_should_never_be_accepted'],
      ['records', 'sk_should_never_be_accepted'],
      ['records', 'list', '--sk_should_never_be_accepted'],
    ]) {
      const refused = await runBin(args, { SESS_MCP_STATE_DIR: '/tmp' });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('Usage:');
      // A pasted key is never echoed back.
      expect(refused.stderr + refused.stdout).not.toContain('sk_should_never_be_accepted');
    }
    expect((await runBin(['--api-key', 'x'], {})).stderr).toContain('never from arguments');
  });

  it('lists, shows (redacted) and retires blocked and unconfirmed records', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const { server, sess } = stack;
    const audit = stdio.audit;

    // 1. A create whose answer is lost: the Session exists, the record is create_unknown.
    sess.faults.commitThenDrop('create');
    const unknown = errorOf(await server.callTool('sess_request', { interaction: approveSurface }));
    expect(unknown.code).toBe('CREATE_OUTCOME_UNKNOWN');
    expect(sess.stats.of().sessionsCreated).toBe(1);
    audit.url(sess.sessions.list()[0]!.view.human_url, 'lost sess link');

    // 2. An answered interaction whose publish Sess refuses: blocked (MUTATION_REJECTED).
    const created = interactionOf(await server.callTool('sess_request', { interaction: approveSurface }));
    audit.url(created.humanUrl!, 'sess link');
    const why = 'the tests are green, zebra';
    audit.answer({ why });
    await sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message: why } });
    const answered = interactionOf(
      await server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 }),
    );
    sess.faults.fail('publish', 409);
    const rejected = errorOf(await publishAfter(server, answered, approveSurface));
    expect(rejected.code).toBe('MUTATION_REJECTED');
    await server.close();

    const env = { SESS_MCP_STATE_DIR: stack.stateDir };
    const list = await runBin(['records', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/create_unknown\s+CREATE_OUTCOME_UNKNOWN/);
    expect(list.stdout).toMatch(new RegExp(`${created.handle}\\s+blocked\\s+MUTATION_REJECTED`));
    audit.text(list.stdout + list.stderr, 'records list output');

    const blocked = await runBin(['records', 'list', '--state', 'blocked', '--json'], env);
    expect((JSON.parse(blocked.stdout) as Array<{ handle: string }>).map((r) => r.handle)).toEqual([
      created.handle,
    ]);
    const unknownHandle = (
      JSON.parse(
        (await runBin(['records', 'list', '--state', 'create_unknown', '--json'], env)).stdout,
      ) as Array<{
        handle: string;
      }>
    )[0]!.handle;

    const show = await runBin(['records', 'show', created.handle], env);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('state:    blocked (MUTATION_REJECTED');
    audit.text(show.stdout + show.stderr, 'records show output');

    const refused = await runBin(['records', 'retire', unknownHandle], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('pass --yes');

    for (const handle of [unknownHandle, created.handle]) {
      const retired = await runBin(['records', 'retire', handle, '--yes'], env);
      expect(retired.code).toBe(0);
      expect(retired.stdout).toContain(`Retired ${handle}`);
    }
    expect((await runBin(['records', 'list'], env)).stdout).toBe('No records in this profile.\n');

    const again = await stack.restart({ kill: false });
    expect(errorOf(await again.callTool('sess_response', { handle: created.handle, revision: 1 })).code).toBe(
      'HANDLE_NOT_FOUND',
    );
  });

  // `script` (util-linux/bsdutils, essential on Debian) gives the bin a real terminal.
  const script = findOutsideTool({
    name: 'script (util-linux)',
    paths: ['/usr/bin/script', '/bin/script'],
    command: 'script',
    install: 'apt-get install bsdutils',
  });
  it.skipIf(script === undefined)(
    'asks on a real terminal and retires only after "retire" is typed',
    async () => {
      const stack = await stdio.start({ client: 'v1' });
      const created = interactionOf(
        await stack.server.callTool('sess_request', { interaction: approveSurface }),
      );
      stdio.audit.url(created.humanUrl!, 'sess link');
      await stack.server.close();
      const bin = await buildSessMcpBin();
      const env = { SESS_MCP_STATE_DIR: stack.stateDir, PATH: process.env.PATH ?? '/usr/bin:/bin' };
      const inTerminal = (answer: string) =>
        new Promise<{ code: number | null; output: string }>((resolve, reject) => {
          const command = `${process.execPath} ${bin} records retire ${created.handle}`;
          const child = spawn(script!, ['-qec', command, '/dev/null'], {
            env,
            stdio: ['pipe', 'pipe', 'pipe'],
          });
          const out: Buffer[] = [];
          let answered = false;
          // The terminal may close before a late write lands; that is not the test's subject.
          child.stdin.on('error', () => undefined);
          child.stdout.on('data', (c: Buffer) => {
            out.push(c);
            // Answer exactly once, when the question is on the terminal.
            if (!answered && Buffer.concat(out).toString('utf8').includes('to confirm:')) {
              answered = true;
              child.stdin.write(`${answer}\n`);
            }
          });
          child.stderr.on('data', (c: Buffer) => out.push(c));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, output: Buffer.concat(out).toString('utf8') }));
        });
      const declined = await inTerminal('no');
      expect(declined.output).toContain(`Retire ${created.handle} (state waiting`);
      expect(declined.output).toContain('not retired');
      expect(declined.code).toBe(1);
      expect(await openProfileRecords({ stateDir: stack.stateDir }).read(created.handle)).toBeDefined();
      const confirmed = await inTerminal('retire');
      expect(confirmed.output).toContain(`Retired ${created.handle}`);
      expect(confirmed.code).toBe(0);
      expect(await openProfileRecords({ stateDir: stack.stateDir }).read(created.handle)).toBeUndefined();
      stdio.audit.text(declined.output + confirmed.output, 'terminal output');
    },
  );

  it('refuses a bad profile with a clear message and exit 2', async () => {
    const result = await runBin(['records', 'list'], {
      SESS_MCP_STATE_DIR: '/tmp',
      SESS_MCP_PROFILE: '../x',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SESS_MCP_PROFILE');
  });

  it('lists, shows and retires the records 0.1.0 wrote, by their state', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'sess-mcp-bin-010-'));
    try {
      const manifest = await manifest010();
      await mkdir(join(stateDir, 'profiles'), { recursive: true, mode: 0o700 });
      await chmod(stateDir, 0o700);
      await installFileFixtures010(join(stateDir, 'profiles', 'default', 'handles'));
      const env = { SESS_MCP_STATE_DIR: stateDir };
      const list = await runBin(['records', 'list', '--state', 'pending'], env);
      expect(list.code).toBe(0);
      const states = list.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(/\s+/).slice(0, 2));
      expect(states.sort()).toEqual(
        [
          [manifest.file.handles.complete_pending, 'complete_pending'],
          [manifest.file.handles.publish_pending, 'publish_pending'],
        ].sort(),
      );
      const show = await runBin(['records', 'show', manifest.file.handles.expired!], env);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain('format:   1 (written by 0.1.0');
      expect(show.stdout).toContain('finished: retiring only tidies up.');
      const retire = await runBin(['records', 'retire', manifest.file.handles.expired!, '--yes'], env);
      expect(retire.code).toBe(0);
      const finished = await runBin(['records', 'list', '--state', 'finished', '--json'], env);
      expect((JSON.parse(finished.stdout) as { state: string }[]).map((r) => r.state).sort()).toEqual([
        'ask_closed',
        'completed',
      ]);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
