/**
 * `node bench/profile-top.mjs <file.cpuprofile|file.heapprofile> [top]`: the top frames of a
 * profile written under `SESS_BENCH_PROFILE` (see bench/lib/profile.ts), by self time (CPU) or by
 * self bytes still alive (heap), then the same totals by where the code lives (our sources, a
 * package, Node itself, GC). Prints a Markdown table; measures nothing itself.
 */
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node bench/profile-top.mjs <file.cpuprofile|file.heapprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 12);
const profile = JSON.parse(readFileSync(file, 'utf8'));

/** `src/http/pipeline.ts`-like origin of a frame: our file, a package, node, or a V8 pseudo-frame. */
function where(url) {
  if (url === '') return 'V8/native';
  // The bundles of bench/run.mjs: the benchmark's and this package's own sources.
  if (url.includes('/.cache/sess-bench/')) return 'ours (bundle)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node';
  return 'ours (bundle)';
}
const frameName = (f) =>
  `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(/^.*\/(node_modules\/)?/, '')}:${f.lineNumber + 1}` : ''}`.trim();

const byFrame = new Map();
const byWhere = new Map();
let total = 0;
const add = (frame, value) => {
  const name = frameName(frame);
  byFrame.set(name, (byFrame.get(name) ?? 0) + value);
  const w = frame.functionName.startsWith('(') && frame.url === '' ? frame.functionName : where(frame.url);
  byWhere.set(w, (byWhere.get(w) ?? 0) + value);
  total += value;
};

let unit;
if (Array.isArray(profile.nodes)) {
  // CPU profile: self time = samples × their time deltas.
  unit = 'ms';
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i += 1) {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  for (const [id, ms] of self) add(nodes.get(id).callFrame, ms);
} else {
  // Sampling heap profile: self bytes per allocation site, still alive when it was taken.
  unit = 'KiB';
  const walk = (node) => {
    const bytes = node.selfSize / 1024;
    if (bytes > 0) add(node.callFrame, bytes);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
}

const rows = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, v]) => `| ${name} | ${v.toFixed(0)} | ${((100 * v) / total).toFixed(1)} % |`);
process.stdout.write(
  [
    `total ${total.toFixed(0)} ${unit}`,
    '',
    `| frame | self ${unit} | % |`,
    '|---|---|---|',
    ...rows(byFrame),
    '',
    `| where | self ${unit} | % |`,
    '|---|---|---|',
    ...rows(byWhere),
    '',
  ].join('\n'),
);
