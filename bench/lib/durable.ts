/**
 * Measure 4 (durable commit): the file store's compare-and-set `update` against a bare loop that
 * writes the same bytes the store writes with write + fsync + rename + directory fsync.
 *
 * Both run on the same temporary directory's file system, interleaved. Nothing here checks the
 * store's correctness; its tests do.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileHandleStore } from '../../src/store/file.js';
import { sampleRecord } from './sample-record.js';
import { interleave, median, perCall } from './stats.js';
import { ms, type Row, times, yesNo } from './table.js';

/** Measure 4. */
export async function durableCommit(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sess-bench-file-'));
  try {
    const record = await sampleRecord();
    const files = createFileHandleStore({ stateDir: join(dir, 'state') });
    const store = files.forBinding(record.binding);
    let version = (await store.create(record)).version;
    const cas = async () => {
      version = (await store.update(record, version)).version;
    };
    await cas();
    const name = readdirSync(files.directory).find((f) => f.endsWith('.json'))!;
    const bytes = readFileSync(join(files.directory, name));

    const bareDir = join(dir, 'bare');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(bareDir);
    const target = join(bareDir, 'record.json');
    const temp = join(bareDir, 'record.json.tmp');
    const bare = async () => {
      const file = await open(temp, 'w', 0o600);
      await file.writeFile(bytes);
      await file.sync();
      await file.close();
      await rename(temp, target);
      const d = await open(bareDir, 'r');
      await d.sync();
      await d.close();
    };
    for (let i = 0; i < 20; i += 1) {
      await cas();
      await bare();
    }
    const r = await interleave(
      15,
      () => perCall(20, cas),
      () => perCall(20, bare),
    );
    const s = median(r.subject);
    const b = median(r.baseline);
    return [
      {
        measure: `4 durable commit (file CAS, ${bytes.length} B)`,
        subject: `${ms(s)}/commit`,
        baseline: `${ms(b)}/commit`,
        ratio: times(s / b),
        goal: '≤ 1.3×',
        met: yesNo(s / b <= 1.3),
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
