import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { FileLedger, recordsNamed } from '../../state/file/ledger';
import { SweepStateMissing, CALIBRATION_KEYS } from '../../state/store';
import { fileStateStore } from '../../state/file/store';
import { localExclusive } from '../../state/file/local-lock';
import { createActivities } from '../../activities';
import { createCatalogs } from '../../catalog';
import { FailureType } from '../../domain/ids';
import type { Proposal } from '../../domain/proposal';

const proposal = (id: string, text = 'A table.'): Proposal => ({
  id,
  entityId: 'raw.orders',
  agent: 'description-drafter',
  change: { kind: 'description', target: 'table', text },
  evidence: [],
});

describe('SweepLedger proposals', () => {
  test('a page is parsed once while its files are unchanged, and read again when an agent rewrites one', async () => {
    const ledger = new FileLedger(mkdtempSync(path.join(os.tmpdir(), 'ledger-')), 'sweep/x');
    await ledger.writeProposals(0, 'description-drafter', [proposal('p-1'), proposal('p-2')]);
    await ledger.writeProposals(0, 'lineage-checker', []);
    const first = await ledger.proposals(0);
    expect(first.map((p) => p.id)).toEqual(['p-1', 'p-2']);
    expect(await ledger.proposals(0)).toBe(first);
    // A retried agent activity rewrites its file: the next read sees the new content.
    await ledger.writeProposals(0, 'description-drafter', [proposal('p-1', 'Changed.')]);
    const again = await ledger.proposals(0);
    expect(again).not.toBe(first);
    expect(again.map((p) => [p.id, p.change.kind === 'description' && p.change.text])).toEqual([['p-1', 'Changed.']]);
    // Another agent's file appearing counts as a change too.
    await ledger.writeProposals(0, 'pii-classifier', [proposal('p-9')]);
    expect((await ledger.proposals(0)).map((p) => p.id)).toEqual(['p-1', 'p-9']);
    await expect(ledger.proposals(1)).rejects.toBeInstanceOf(SweepStateMissing);
  });
});

describe('SweepLedger keys', () => {
  const meta = (sweepId: string, ledgerKey: string) => ({
    sweepId,
    ledgerKey,
    catalogRef: { kind: 'demo' as const },
    catalogKey: '/tmp/x.json',
    catalogLabel: '/tmp/x.json',
    catalogName: 'x',
    auditFile: '/tmp/x.jsonl',
    startedAt: '2026-12-01T00:00:00.000Z',
  });

  test.each([
    [
      'two sweep ids sharing their first 200 characters',
      'sweep/shop/' + 'a'.repeat(200) + '-one',
      'sweep/shop/' + 'a'.repeat(200) + '-two',
    ],
    ['ids that differ only in characters a file name cannot hold', 'sweep/a/b@run', 'sweep/a_b@run'],
    ['the same id, two runs', 'sweep/shop/nightly@run-1', 'sweep/shop/nightly@run-2'],
  ])('%s get two ledgers', async (_name, a, b) => {
    const state = mkdtempSync(path.join(os.tmpdir(), 'ledger-'));
    const la = new FileLedger(state, a);
    const lb = new FileLedger(state, b);
    expect(la.dir).not.toBe(lb.dir);
    expect(path.basename(la.dir).length).toBeLessThanOrEqual(120);
    await la.writeMeta(meta(a.split('@')[0]!, a));
    await lb.writeMeta(meta(b.split('@')[0]!, b));
    await la.writeProposals(0, 'description-drafter', [proposal('p-a')]);
    expect((await la.meta()).ledgerKey).toBe(a);
    expect((await lb.meta()).ledgerKey).toBe(b);
    // b's page 0 was never written: b does not see a's proposals, and says its page is missing.
    await expect(lb.proposals(0)).rejects.toBeInstanceOf(SweepStateMissing);
  });
});

describe('missing sweep state is a failure, never "nothing"', () => {
  const empty = () => mkdtempSync(path.join(os.tmpdir(), 'ledger-empty-'));

  test('a ledger, a page and its ids that are not here each raise SweepStateMissing naming where it looked', async () => {
    const dir = empty();
    const ledger = new FileLedger(dir, 'sweep/elsewhere@run');
    for (const read of [
      () => ledger.meta(),
      () => ledger.proposals(3),
      () => ledger.outcomes(3),
      () => ledger.pageIds(3),
    ]) {
      const err = await read().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SweepStateMissing);
      expect((err as Error).message).toContain(dir);
      expect((err as Error).message).toContain(os.hostname());
    }
  });

  test('a page that is here but has no proposals yet is an empty page', async () => {
    const ledger = new FileLedger(empty(), 'sweep/here@run');
    await ledger.writePageIds(0, ['raw.a']);
    expect(await ledger.proposals(0)).toEqual([]);
    expect(await ledger.outcomes(0)).toEqual([]);
  });

  test('an activity on a worker without the sweep state fails non-retryably with that message', async () => {
    const acts = createActivities({
      stateDir: empty(),
      catalogs: createCatalogs({ stateDir: empty(), bundledDemo: '/nonexistent/demo.json', env: {} }),
    });
    for (const call of [
      () => acts.runAgent({ ledgerKey: 'sweep/x@1', pageIndex: 0, agent: 'pii-classifier' }),
      () => acts.reviewPageMechanically({ ledgerKey: 'sweep/x@1', pageIndex: 0, mode: 'mechanical' }),
      () => acts.listForHumanReview({ ledgerKey: 'sweep/x@1', pageIndex: 0, kinds: ['pii_tag'] }),
    ]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: FailureType.SweepStateMissing, nonRetryable: true });
    }
  });
});

describe('the file store lock', () => {
  test('a failing holder rejects its caller only: no orphan rejection (it would end the worker process)', async () => {
    const orphans: unknown[] = [];
    const onOrphan = (e: unknown) => orphans.push(e);
    process.on('unhandledRejection', onOrphan);
    try {
      await expect(
        localExclusive('k', () => Promise.reject(new SweepStateMissing('page 0 of the sweep', '/nowhere'))),
      ).rejects.toBeInstanceOf(SweepStateMissing);
      // The next holder of the key still runs.
      await expect(localExclusive('k', () => Promise.resolve(7))).resolves.toBe(7);
      await new Promise((r) => setTimeout(r, 50));
      expect(orphans).toEqual([]);
    } finally {
      process.off('unhandledRejection', onOrphan);
    }
  });
});

describe('the file store calibration book', () => {
  test('ratios saved by one store are loaded by another on the same folder; unknown keys are absent', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'calibration-'));
    const a = fileStateStore(dir).calibration;
    expect(await a.load(['m|describe'])).toEqual({});
    await a.save('m|describe', [0.3, 0.4]);
    await a.save('m|review', [0.9]);
    await a.save('m|describe', [0.3, 0.4, 0.5]);
    const b = fileStateStore(dir).calibration;
    expect(await b.load(['m|describe', 'm|review', 'n|describe'])).toEqual({
      'm|describe': [0.3, 0.4, 0.5],
      'm|review': [0.9],
    });
  });

  test('it keeps at most CALIBRATION_KEYS keys, the least recently saved going first; saves in parallel all land', async () => {
    const book = fileStateStore(mkdtempSync(path.join(os.tmpdir(), 'calibration-'))).calibration;
    await book.save('first', [0.1]);
    await Promise.all(Array.from({ length: CALIBRATION_KEYS }, (_, i) => book.save(`k${i}`, [i / 1000])));
    const all = await book.load(['first', 'k0', `k${CALIBRATION_KEYS - 1}`]);
    expect(all).toEqual({ k0: [0], [`k${CALIBRATION_KEYS - 1}`]: [(CALIBRATION_KEYS - 1) / 1000] });
  });
});

describe('SweepLedger and a killed write', () => {
  // writeFileAtomic names its temporary file after the record (`<record>.json.<pid>.<random>.tmp`); a kill -9
  // between its write and its rename leaves it behind, empty or cut short.
  const leftover = (ledger: FileLedger, page: number, record: string, text: string) => {
    const dir = path.join(ledger.dir, 'pages', String(page).padStart(6, '0'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${record}.json.4242.k3x9.tmp`), text);
  };

  test.each(['', '[{"entity":"raw.or'])('every page reader reads records only, never a leftover (%j)', async (text) => {
    const ledger = new FileLedger(mkdtempSync(path.join(os.tmpdir(), 'ledger-')), 'sweep/killed');
    await ledger.writeProposals(0, 'description-drafter', [proposal('p-1')]);
    await ledger.putOutcomes(0, 'gate', 'gate', []);
    await ledger.writeFailures(0, 'pii-classifier', []);
    await ledger.writeCalls(0, 'pii-classifier', []);
    await ledger.writeIntent(0, []);
    for (const record of [
      'proposals-pii-classifier',
      'outcomes-model',
      'failures-lineage-checker',
      'calls-description-drafter-batch-0',
      'write-intent',
      'write-intent-r1',
    ])
      leftover(ledger, 0, record, text);
    expect((await ledger.proposals(0)).map((p) => p.id)).toEqual(['p-1']);
    expect(await ledger.outcomes(0)).toEqual([]);
    expect(await ledger.failures(0)).toEqual([]);
    expect(await ledger.calls(0)).toEqual([]);
    expect(await ledger.intent(0)).toEqual([]);
  });

  test('recordsNamed takes `<prefix><name>.json` and nothing a write left half done', () => {
    expect(
      recordsNamed(
        [
          'failures-lineage-checker.json',
          'failures-lineage-checker.json.123.abc.tmp',
          'failures-x.json.tmp',
          'outcomes-gate.json',
        ],
        'failures-',
      ),
    ).toEqual(['failures-lineage-checker.json']);
  });
});
