import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCatalogs } from '../../catalog';
import { fileStateStore } from '../../state/file/store';
import { catalogContext } from '../../activities/catalog-access';
import {
  createIncrementalActivities,
  entityStateOf,
  fingerprintsDocName,
  pagePrintsDocName,
  selectionDocName,
} from '../../activities/incremental-activities';
import type { CatalogRef } from '../../domain/sweep';
import { copyCatalog, DEMO_CATALOG, readCatalog } from '../support/argus-worker';

// A later pass's change detection on a real file catalog and file state store: from the first scan's prints with the
// write step's laid over them (no catalog read), and, for a ledger without the scan's prints (a sweep started by an
// earlier version), from a scan of the catalog. Both must find the same entities and the same fingerprints.
const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-later-pass-'));
const file = copyCatalog(DEMO_CATALOG, dir);
const ref: CatalogRef = { kind: 'file', path: file };
const store = fileStateStore(path.join(dir, 'state'));
const catalogs = createCatalogs({ stateDir: path.join(dir, 'state'), bundledDemo: DEMO_CATALOG, env: {} });
const activities = createIncrementalActivities({ stateDir: path.join(dir, 'state'), store, catalogs });

async function startLedger(key: string) {
  const ledger = store.ledger(key);
  await ledger.writeMeta({
    sweepId: `sweep/${key}`,
    ledgerKey: key,
    catalogRef: ref,
    catalogKey: file,
    catalogLabel: file,
    catalogName: 'demo',
    auditFile: path.join(dir, 'audit.jsonl'),
    startedAt: new Date().toISOString(),
  });
  return ledger;
}

test("a later pass finds what the sweep wrote from the write step's prints, as a scan of the catalog does", async () => {
  const scanned = await startLedger('with-scan-prints');
  const first = await activities.detectChanges({ ledgerKey: 'with-scan-prints', round: 0 });
  expect(first.toJudge).toBe(readCatalog(file).entities.length);
  const before = (await scanned.doc<Record<string, string>>(fingerprintsDocName(0)))!;
  // A ledger of the same catalog as an earlier version left it: the first pass's fingerprints, not the scan's prints.
  const older = await startLedger('without-scan-prints');
  await older.writeDoc(fingerprintsDocName(0), before);

  // The write step of page 0: an ARGUS description on a column that has none, and the prints it takes after.
  const catalog = await catalogs(ref);
  const target = readCatalog(file).entities.find((e) => e.columns.some((c) => !c.description))!;
  const column = target.columns.find((c) => !c.description)!.name;
  const [outcome] = await catalog.applyRepairs(
    [
      {
        proposalId: 'p-test',
        entityId: target.id,
        change: { kind: 'description', target: 'column', column, text: 'Written by the test, as ARGUS.' },
      },
    ],
    { overwriteHumanText: false },
  );
  expect(outcome!.status).toBe('written');
  await scanned.writePageIds(0, [target.id]);
  const { entities } = await catalog.getEntities([target.id]);
  const { prints } = await entityStateOf(catalog, entities, await catalogContext(catalog));
  await scanned.writeDoc(pagePrintsDocName(0), prints);

  const laid = await activities.detectChanges({ ledgerKey: 'with-scan-prints', round: 1 });
  const rescanned = await activities.detectChanges({ ledgerKey: 'without-scan-prints', round: 1 });
  expect(laid.toJudge).toBeGreaterThan(0);
  expect(await scanned.doc(selectionDocName(1))).toEqual(await older.doc(selectionDocName(1)));
  expect(await scanned.doc<string[]>(selectionDocName(1))).toContain(target.id);
  expect(laid).toEqual(rescanned);
  const after = (await scanned.doc<Record<string, string>>(fingerprintsDocName(1)))!;
  expect(after).toEqual(await older.doc(fingerprintsDocName(1)));
  expect(after[target.id]).not.toBe(before[target.id]);
});
