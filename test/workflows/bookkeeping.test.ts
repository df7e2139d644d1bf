import * as path from 'node:path';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import type { SweepReport } from '../../domain/report';
import type { PendingReview } from '../../workflows/messages';
import { renderReportText } from '../../client/render';

// What a sweep records after its writes (the memory, the report file, the ledger's records it reads back) failing
// for real on a real dev server: the sweep completes, its repairs stand, and the report says what is missing.
const w = useArgusWorker('tq-bookkeeping');

function smallCatalog(name: string): string {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'bookkeeping', name));
  const c = readCatalog(file);
  c.entities = c.entities.filter((e) => ['raw.customers', 'raw.employees', 'raw.regions'].includes(e.id));
  writeCatalog(file, c);
  return file;
}

/** Start a sweep whose PII tags wait for people, and return once it waits (its pages and passes are done). */
async function startParked(file: string) {
  const id = uniqueId('sweep/bookkeeping');
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '10m' } }],
  });
  // Every page written and every pass done: the sweep waits for people only.
  for (let i = 0; i < 150; i++) {
    const phase = (await h.query<{ phase: string }>('progress')).phase;
    const pending = await h.query<PendingReview[]>('pendingReviews');
    if (phase === 'awaiting_review' && pending.length > 0) return { id, h, pending };
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the sweep never came to wait for people');
}

/** The file store's folder of the sweep's one run (its meta names the sweep). */
function ledgerDirOf(id: string): string {
  const root = path.join(w.tw.stateDir, 'sweeps');
  const found = readdirSync(root).filter((d) => {
    try {
      return readFileSync(path.join(root, d, 'meta.json'), 'utf8').includes(JSON.stringify(id));
    } catch {
      return false;
    }
  });
  if (found.length !== 1) throw new Error(`expected one ledger folder of ${id}, found ${found.length}`);
  return path.join(root, found[0]!);
}

/** Every folder under `dir` holding a proposals record: the sweep's pages. */
function pageDirs(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (e.name.startsWith('proposals-')) out.push(d);
    }
  };
  walk(dir);
  return [...new Set(out)];
}

async function approveAll(h: Awaited<ReturnType<typeof startParked>>['h'], pending: PendingReview[]) {
  const time = new Date().toISOString();
  await h.executeUpdate('review', {
    args: [
      {
        decisions: pending.map((p) => ({ proposalId: p.proposalId, decision: 'approved', reviewer: 'dana', time })),
      },
    ],
  });
}

const tagsIn = (file: string) =>
  readCatalog(file).entities.flatMap((e) => e.columns.flatMap((c) => (c.tags ?? []).map(() => `${e.id}.${c.name}`)));

test('a memory and a report file that cannot be written: the sweep completes, writes what was approved, says so', async () => {
  const file = smallCatalog('unwritable');
  const { id, h, pending } = await startParked(file);
  // The memory's folder is a file and the report's file a folder: both writes fail, whatever the retries.
  writeFileSync(path.join(w.tw.stateDir, 'memory'), 'not a folder');
  mkdirSync(path.join(ledgerDirOf(id), 'report.json', 'in-the-way'), { recursive: true });
  await approveAll(h, pending);
  const report = (await h.result()) as SweepReport;
  expect((await h.describe()).status.name).toBe('COMPLETED');
  // The repairs stand: every approved tag is in the catalog.
  expect(report.written).toBeGreaterThanOrEqual(pending.length);
  expect(tagsIn(file).length).toBeGreaterThanOrEqual(pending.length);
  // Bookkeeping is not a reason to call the repairs partial; the report says what is missing, and where people look.
  expect(report.partial).toBe(false);
  expect(report.notRecorded).toHaveLength(2);
  expect(report.notRecorded![0]).toMatch(/memory could not be saved/);
  expect(report.notRecorded![1]).toMatch(/report file .* could not be written/);
  expect(report.incremental!.note).toMatch(/memory could not be saved.*next sweep judges these entities again/);
  expect(renderReportText(report)).toMatch(/not recorded: the report file/);
  const memo = (await h.describe()).memo as { summary?: { notRecorded?: string[] } };
  expect(memo.summary?.notRecorded?.length).toBe(2);
});

test('a damaged ledger record read back for the report: the sweep completes partial, naming the page', async () => {
  const file = smallCatalog('damaged');
  const { id, h, pending } = await startParked(file);
  const pages = pageDirs(ledgerDirOf(id));
  expect(pages.length).toBeGreaterThan(0);
  // A failures record cut short, as a disk fault leaves one (not a write in flight: the name is a record's).
  writeFileSync(path.join(pages[0]!, 'failures-damaged.json'), '[{"entity": "raw.cust');
  await approveAll(h, pending);
  const report = (await h.result()) as SweepReport;
  expect((await h.describe()).status.name).toBe('COMPLETED');
  expect(report.partial).toBe(true);
  expect(report.partialReasons.join(' ')).toMatch(/records of 1 page\(s\) could not be read.*page \d+: .*JSON/);
  expect(tagsIn(file).length).toBeGreaterThanOrEqual(pending.length);
});

test('a report that cannot be built at all: the sweep completes partial with its own counts, never FAILED', async () => {
  const file = smallCatalog('no-report');
  const { id, h, pending } = await startParked(file);
  // The run's meta record damaged: every later step of this run that reads it fails, the report's too.
  writeFileSync(path.join(ledgerDirOf(id), 'meta.json'), '{"sweepId": ');
  await approveAll(h, pending);
  const report = (await h.result()) as SweepReport;
  expect((await h.describe()).status.name).toBe('COMPLETED');
  expect(report.partial).toBe(true);
  expect(report.partialReasons[0]).toMatch(/the report could not be built \(.+\): the counts below are the workflow's/);
  expect(report.outcomes.approved).toBeGreaterThanOrEqual(pending.length);
  expect(report.entities.requested).toBe(3);
  expect(report.notRecorded).toEqual(expect.arrayContaining(['the memory']));
  const memo = (await h.describe()).memo as { summary?: { verdict?: string } };
  expect(memo.summary?.verdict).toBe('PARTIAL');
}, 120_000);

test('a later pass whose detection fails: the sweep completes with its writes, and says the next sweep judges the rest', async () => {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'bookkeeping', 'no-detection', 'catalog.json'));
  const id = uniqueId('sweep/bookkeeping');
  // Pages of ten, one at a time: the first pass takes long enough to damage what the next pass's detection reads.
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    args: [{ catalog: { kind: 'file', path: file }, pageSize: 10, concurrency: 1 }],
  });
  let damaged = false;
  for (let i = 0; i < 500 && !damaged; i++) {
    try {
      const doc = path.join(ledgerDirOf(id), 'docs', 'fingerprints-0.json');
      readFileSync(doc);
      writeFileSync(doc, '{"raw.customers": "');
      damaged = true;
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  expect(damaged).toBe(true);
  const report = (await h.result()) as SweepReport;
  expect((await h.describe()).status.name).toBe('COMPLETED');
  expect(report.written).toBeGreaterThan(0);
  expect(report.incremental!.rounds).toBe(1);
  expect(report.incremental!.note).toMatch(
    /what this sweep's writes changed could not be detected .*next sweep judges it/,
  );
}, 120_000);
