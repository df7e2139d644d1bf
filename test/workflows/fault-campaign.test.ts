// The fault campaign users run (`npm run faults`, bench/faults.ts), run here as they run it, on the combinations
// test/workflows/faults.test.ts does not cover itself (it kills at every fault point in mechanical review on the
// file store): model review on the loopback fake provider with both state stores, and mechanical review on the
// PostgreSQL store, with the PostgreSQL server stopped mid-write. Every kill is a real SIGKILL of a real worker
// process; each row is compared by the script with an uninterrupted control sweep of the same catalog.
import { spawn } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
// Every worker fault point, as the campaign names them (bench/faults.ts WORKER_FAULTS).
const WORKER_FAULTS = [
  'agent-start',
  'ledger-write',
  'after-catalog-replace',
  'audit-append',
  'memory-write',
  'report-spool',
];

interface Row {
  fault: string;
  mode: string;
  state: string;
  identical: boolean;
  audited: boolean;
  duplicates: number;
  killToCompleteMs: number | null;
  status: string;
}

/** `npm run faults -- --json …` as a user runs it: its rows, or an error carrying what it printed. */
function campaign(args: string[]): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/run-ts.js', 'bench/faults.ts', '--json', ...args], {
      cwd: ROOT,
      env: { ...process.env, ARGUS_BENCH_KEEP: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => {
      process.stderr.write(
        stderr
          .split('\n')
          .filter((l) => l.startsWith('faults:'))
          .join('\n') + '\n',
      );
      if (code !== 0) return reject(new Error(`npm run faults exited ${code}\n${stderr.slice(-4000)}`));
      try {
        resolve((JSON.parse(stdout) as { faults: Row[] }).faults);
      } catch (e) {
        reject(new Error(`npm run faults printed no JSON (${(e as Error).message})\n${stdout.slice(-2000)}`));
      }
    });
  });
}

/** Each row as the campaign's verdict on it: what must hold of every fault. */
const verdict = (r: Row) => ({
  fault: r.fault,
  mode: r.mode,
  state: r.state,
  identical: r.identical,
  audited: r.audited,
  duplicates: r.duplicates,
  reached: r.killToCompleteMs !== null,
  status: r.status,
});
const good = (r: Row) => ({
  ...verdict(r),
  identical: true,
  audited: true,
  duplicates: 0,
  reached: true,
  status: 'COMPLETED',
});

// 400 entities in four pages: every fault point is reached (the 40th ledger record, the second audit append).
const COMMON = ['--entities', '400', '--seed', '11'];

test('model review, file and PostgreSQL stores: a worker killed at every fault point ends as the control did', async () => {
  const rows = await campaign([
    ...COMMON,
    '--modes',
    'model',
    '--states',
    'file,postgres',
    '--faults',
    WORKER_FAULTS.join(','),
  ]);
  expect(rows).toHaveLength(WORKER_FAULTS.length * 2);
  expect(new Set(rows.map((r) => `${r.state}/${r.fault}`)).size).toBe(rows.length);
  expect(rows.map(verdict)).toEqual(rows.map(good));
}, 1_500_000);

test('mechanical review on PostgreSQL: every worker fault point, and its server stopped mid-write for 20 s', async () => {
  const rows = await campaign([
    ...COMMON,
    '--modes',
    'mechanical',
    '--states',
    'postgres',
    '--faults',
    [...WORKER_FAULTS, 'postgres-stop'].join(','),
  ]);
  expect(rows).toHaveLength(WORKER_FAULTS.length + 1);
  expect(rows.some((r) => r.fault === 'postgres-stop')).toBe(true);
  expect(rows.map(verdict)).toEqual(rows.map(good));
}, 1_500_000);
