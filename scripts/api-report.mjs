#!/usr/bin/env node
/**
 * The public surface of every package entry, as API Extractor reports checked in under `api/`.
 * Run after `npm run build`:
 *
 *   node scripts/api-report.mjs           # fail when a report differs (CI)
 *   node scripts/api-report.mjs --write   # rewrite the reports after a reviewed change
 *
 * A change to what an entry exports, or to the type of anything it exports, changes its report;
 * reviewing that diff is reviewing the API change.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const write = process.argv.includes('--write');

/** Report name → the entry's declaration file in dist/ (the entries of package.json `exports`). */
const ENTRIES = {
  index: 'dist/index.d.ts',
  schemas: 'dist/schemas.d.ts',
  sess: 'dist/sess.d.ts',
  http: 'dist/http.d.ts',
  stdio: 'dist/stdio.d.ts',
  'store-file': 'dist/store/file.d.ts',
  'store-postgres': 'dist/store/postgres.d.ts',
  testing: 'dist/testing.d.ts',
};

const reportFolder = join(root, 'api');
const tempFolder = join(root, '.tmp', 'api-report');
mkdirSync(tempFolder, { recursive: true });
mkdirSync(reportFolder, { recursive: true });

let failed = 0;
for (const [name, entry] of Object.entries(ENTRIES)) {
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(root, entry),
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            lib: ['ES2023', 'DOM'],
            types: ['node'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            skipLibCheck: true,
          },
          include: [join(root, entry)],
        },
      },
      apiReport: { enabled: true, reportFolder, reportTempFolder: tempFolder, reportFileName: name },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        extractorMessageReporting: { default: { logLevel: 'none' } },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
        compilerMessageReporting: { default: { logLevel: 'warning' } },
      },
    },
    configObjectFullPath: join(root, 'api', 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
  });
  const result = Extractor.invoke(config, {
    localBuild: write,
    showVerboseMessages: false,
    messageCallback: (m) => {
      m.handled = true;
    },
  });
  if (result.apiReportChanged && !write) {
    failed++;
    console.error(`api/${name}.api.md differs from the built entry ${entry}:`);
    console.error(
      `  compare .tmp/api-report/${name}.api.md with api/${name}.api.md; if the change is intended,`,
    );
    console.error('  run `node scripts/api-report.mjs --write` and commit the report.');
  } else if (!result.succeeded && !result.apiReportChanged) {
    failed++;
    console.error(`API Extractor failed on ${entry} (${result.errorCount} errors)`);
  }
}
if (failed > 0) process.exit(1);
console.log(`${Object.keys(ENTRIES).length} API reports ${write ? 'written' : 'match'}`);
