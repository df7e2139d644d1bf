import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCatalogs } from '../../catalog';
import type { CatalogAdapter } from '../../catalog/adapter';
import { catalogContext } from '../../activities/catalog-access';
import { scanCatalog } from '../../activities/incremental-activities';
import type { MemoryEntry } from '../../state/memory';
import type { CatalogRef } from '../../domain/sweep';
import { copyCatalog, DEMO_CATALOG, readCatalog, writeCatalog } from '../support/argus-worker';

// Record digests on a real file catalog, and the first pass's scan that takes what the memory kept of an entity
// instead of reading it while its record stays byte for byte the same. Whatever it skips, the scan must find what a
// scan reading every entity finds, in the catalog as it is now.
const catalogs = createCatalogs({
  stateDir: mkdtempSync(path.join(os.tmpdir(), 'argus-digests-state-')),
  bundledDemo: DEMO_CATALOG,
  env: {},
});

async function fileCatalog(): Promise<{ file: string; catalog: CatalogAdapter }> {
  const file = copyCatalog(DEMO_CATALOG, mkdtempSync(path.join(os.tmpdir(), 'argus-digests-')));
  const ref: CatalogRef = { kind: 'file', path: file };
  return { file, catalog: await catalogs(ref) };
}

const sha = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 16);

/** What the memory keeps of each entity after a scan that read it: as rememberSweep writes it. */
async function rememberedAfterScan(catalog: CatalogAdapter): Promise<Record<string, MemoryEntry>> {
  const ids = (await catalog.snapshot()).ids;
  const scan = await scanCatalog(catalog, ids, await catalogContext(catalog), true);
  const out: Record<string, MemoryEntry> = {};
  for (const id of ids) {
    const p = scan.own.get(id)!;
    const r = scan.refs.get(id)!;
    out[id] = {
      fp: scan.fingerprints.get(id)!,
      final: true,
      sweep: 's1',
      o: p.own,
      st: scan.vectors[id],
      rec: [scan.digests.get(id)!, p.own, p.pii, p.evidence, r.up, r.sql, r.fk],
    };
  }
  return out;
}

describe('record digests (file catalog)', () => {
  test("are the digest of each record's bytes, change with its text only, and come with the entities read", async () => {
    const { file, catalog } = await fileCatalog();
    const ids = (await catalog.snapshot()).ids;
    const before = await catalog.recordDigests!(ids);
    expect(before.size).toBe(ids.length);
    // The first record's bytes, found in the file by its id: the digest is theirs.
    const text = readFileSync(file, 'utf8');
    const first = readCatalog(file).entities[0]!;
    const start = text.indexOf('{', text.indexOf('"entities"') + 1);
    const end = text.indexOf(`\n    }`, text.indexOf(`"id": ${JSON.stringify(first.id)}`)) + 6;
    expect(before.get(first.id)).toBe(sha(text.slice(start, end)));

    // Written out as a program writes it (the bundled file's inline objects become lines), then one record edited.
    const c = readCatalog(file);
    writeCatalog(file, c);
    const rewritten = await catalog.recordDigests!(ids);
    const edited = c.entities[3]!;
    edited.description = `${edited.description ?? ''} Edited by a person.`;
    writeCatalog(file, c);
    const after = await catalog.recordDigests!(ids);
    for (const id of ids) {
      if (id === edited.id) expect(after.get(id)).not.toBe(rewritten.get(id));
      else expect(after.get(id)).toBe(rewritten.get(id));
    }
    const read = await catalog.getEntities(ids.slice(0, 10), { digests: true });
    for (const e of read.entities) expect(read.digests!.get(e.id)).toBe(after.get(e.id));
  });
});

describe('the first scan with record digests remembered', () => {
  test('reads only the records that changed, and finds what a scan reading everything finds', async () => {
    const { file, catalog } = await fileCatalog();
    writeCatalog(file, readCatalog(file)); // as a program writes it: the edit below then changes its own record only
    const remembered = await rememberedAfterScan(catalog);

    // A person edits one entity's description and deletes an entity others read: the readers' records stay as they
    // were, but what they read is gone (their references resolve to nothing now).
    const c = readCatalog(file);
    const edited = c.entities.find((e) => e.columns.length > 1)!;
    edited.columns[0]!.description = 'Reworded by a person.';
    const upstream = new Set(c.entities.flatMap((e) => e.upstream));
    const removed = c.entities.find((e) => upstream.has(e.id) && e.id !== edited.id)!;
    c.entities = c.entities.filter((e) => e.id !== removed.id);
    writeCatalog(file, c);
    const readers = c.entities.filter((e) => (e.upstream ?? []).includes(removed.id)).map((e) => e.id);
    expect(readers.length).toBeGreaterThan(0);

    const ids = (await catalog.snapshot()).ids;
    const ctx = await catalogContext(catalog);
    const skipping = await scanCatalog(catalog, ids, ctx, true, remembered);
    const full = await scanCatalog(catalog, ids, ctx, true);
    expect(skipping.read).toBe(1);
    expect(full.read).toBe(ids.length);
    expect([...skipping.fingerprints].sort()).toEqual([...full.fingerprints].sort());
    expect(Object.fromEntries(skipping.prints)).toEqual(Object.fromEntries(full.prints));
    expect(Object.fromEntries(skipping.reads)).toEqual(Object.fromEntries(full.reads));
    expect(skipping.vectors).toEqual(full.vectors);
    expect(skipping.stats).toEqual(full.stats);
    // The plan (argus sweep plan) scans without figures, and skips the same records.
    const planning = await scanCatalog(catalog, ids, ctx, false, remembered);
    expect(planning.read).toBe(1);
    expect([...planning.fingerprints].sort()).toEqual([...full.fingerprints].sort());
    for (const id of readers) {
      expect(skipping.reads.get(id)!.names).toContain(removed.id);
      expect(skipping.fingerprints.get(id)).not.toBe(remembered[id]!.fp);
    }
  });

  test('reads a record whose remembered digest is not its own, or whose memory lacks what it was computed from', async () => {
    const { catalog } = await fileCatalog();
    const remembered = await rememberedAfterScan(catalog);
    const ids = (await catalog.snapshot()).ids;
    const [a, b, c] = ids as [string, string, string];
    remembered[a]!.rec![0] = '0000000000000000';
    delete remembered[b]!.rec;
    remembered[c]!.o = 'another own print';
    const scan = await scanCatalog(catalog, ids, await catalogContext(catalog), true, remembered);
    expect(scan.read).toBe(3);
    expect(scan.own.get(c)!.own).not.toBe('another own print');
  });
});
