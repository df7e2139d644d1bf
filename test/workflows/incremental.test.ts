import * as path from 'node:path';
import { mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import {
  useArgusWorker,
  copyCatalog,
  readCatalog,
  writeCatalog,
  runSweep,
  DEMO_CATALOG,
} from '../support/argus-worker';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import type { SweepReport } from '../../domain/report';
import type { EndpointConfig } from '../../domain/sweep';
import { undoSweep } from '../../activities/undo';
import { SK } from '../support/fake-secrets';
import { countedAfresh, judgedByPass, scopesByPass } from '../support/incremental';
import { fileStateStore } from '../../state/file/store';
import { FileCatalogAdapter } from '../../catalog/file/adapter';
import { catalogContext } from '../../activities/catalog-access';
import { memoryKeyOf } from '../../state/memory';
import { fingerprintsDocName, scanCatalog } from '../../activities/incremental-activities';

// Memory across sweeps on the file catalog, on a real dev server (and, for model mode, a loopback provider).
const KEY_ENV = 'ARGUS_TEST_FAKE_KEY';
const w = useArgusWorker('tq-incremental', { ...process.env, [KEY_ENV]: `${SK}test-not-a-real-key-123456` });
let fp: FakeProvider;
beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
});
afterAll(async () => {
  await fp?.close();
});

const copy = (name: string) => copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'incremental', name));
const sweepFile = (file: string, extra: Record<string, unknown> = {}) =>
  runSweep(w, { catalog: { kind: 'file', path: file }, ...extra }, 'sweep/incremental');

/** Every entity that reads `id` through recorded lineage, transitively (what its evidence may inherit from). */
function readersOf(file: string, id: string): Set<string> {
  const entities = readCatalog(file).entities;
  const out = new Set<string>();
  let frontier = [id];
  while (frontier.length) {
    const next = entities
      .filter((e) => !out.has(e.id) && e.upstream?.some((u) => frontier.includes(u)))
      .map((e) => e.id);
    next.forEach((n) => out.add(n));
    frontier = next;
  }
  return out;
}

const PAGE = 10;

describe('rules and the mechanical gate', () => {
  let file: string;
  let night1: SweepReport;
  let night2: SweepReport;
  beforeAll(async () => {
    file = copy('nights');
    // Pages of ten: what a page writes reaches entities on other pages, which only a later pass judges again.
    night1 = await sweepFile(file, { pageSize: PAGE });
    night2 = await sweepFile(file, { pageSize: PAGE });
  });

  test('night 1 judges everything and reaches its fixed point within the sweep', () => {
    expect(night1.incremental).toMatchObject({
      new: 69,
      changed: 0,
      unchanged: 0,
      gone: 0,
      carriedOver: 0,
      judged: 69,
    });
    expect(night1.written).toBeGreaterThan(100);
    // What the first pass wrote on one page and changed of another's reading was judged again in the same sweep;
    // the last pass wrote nothing more to judge.
    expect(night1.incremental!.rounds).toBeGreaterThan(1);
    expect(night1.incremental!.rejudged).toBeGreaterThan(0);
    expect(night1.incremental!.crossPageRejudged).toBeGreaterThan(0);
    expect(night1.incremental!.unsettled).toBe(0);
  });

  test('a later pass judges again only what crossed a page: readers of a lineage repaired on another page', async () => {
    const store = fileStateStore(w.tw.stateDir);
    const [first, second] = await judgedByPass(store, night1.sweepId);
    const [first0, later] = await scopesByPass(store, night1.sweepId);
    expect(first0).toEqual({ piiOnly: [], readersOnly: [] }); // nothing remembered yet: every agent, every entity
    expect(night1.proposals.length).toBeLessThan(1000); // the report lists every proposal (up to 1,000)
    expect(first).toHaveLength(69);
    // The first pass's pages are its selection in order, PAGE entities each.
    const pageOf = new Map(first!.map((id, i) => [id, Math.floor(i / PAGE)]));
    const writtenOn = (kinds: string[]) =>
      new Set(night1.proposals.filter((p) => p.written && kinds.includes(p.kind)).map((p) => p.entityId));
    const lineageWritten = [...writtenOn(['lineage_flag'])];
    expect(lineageWritten.length).toBeGreaterThan(0);
    // Each page's lineage flags, descriptions and tags were written before the page's next agents read it: only an
    // entity reading a lineage repaired on another page is judged again.
    expect(second!.length).toBeGreaterThan(0);
    for (const id of second!)
      expect(lineageWritten.some((x) => pageOf.get(x) !== pageOf.get(id) && readersOf(file, x).has(id))).toBe(true);
    const ownPageOnly = [...writtenOn(['description', 'pii_tag', 'lineage_flag'])].filter(
      (id) => !lineageWritten.some((x) => pageOf.get(x) !== pageOf.get(id) && readersOf(file, x).has(id)),
    );
    expect(ownPageOnly.length).toBeGreaterThan(0);
    for (const id of ownPageOnly) expect(second).not.toContain(id);
    expect(later!.piiOnly).toEqual([]);
    expect(night1.incremental!.crossPageRejudged).toBeLessThanOrEqual(night1.incremental!.rejudged);
  });

  test("a later pass's fingerprints, laid from the first scan and each page's writes, are those a fresh scan gives", async () => {
    const store = fileStateStore(w.tw.stateDir);
    const ledger = store.ledger((await store.findSweepMetas(night1.sweepId))[0]!.ledgerKey);
    // The last detection ran after the last writes of the sweep (it found nothing more to judge).
    let last: Record<string, string> | undefined;
    for (let round = 1; ; round++) {
      const doc = await ledger.doc<Record<string, string>>(fingerprintsDocName(round));
      if (!doc) break;
      last = doc;
    }
    expect(last).toBeDefined();
    const catalog = new FileCatalogAdapter(file);
    const ids = (await catalog.snapshot()).ids;
    const { prints } = await scanCatalog(catalog, ids, await catalogContext(catalog), false);
    const fresh = Object.fromEntries([...prints].map(([id, p]) => [id, `${p.fp} ${p.ev} ${p.pii} ${p.tr}`]));
    expect(Object.keys(fresh)).toHaveLength(69);
    expect(last).toEqual(fresh);
    // and they differ from the first pass's where the sweep wrote
    const first = (await ledger.doc<Record<string, string>>(fingerprintsDocName(0)))!;
    expect(ids.filter((id) => first[id] !== fresh[id]).length).toBeGreaterThan(0);
  });

  test('night 2 of an unchanged catalog judges nothing, writes nothing, and reports the same coverage', () => {
    expect(night2.incremental).toMatchObject({
      new: 0,
      changed: 0,
      unchanged: 69,
      gone: 0,
      carriedOver: 69,
      judged: 0,
    });
    expect(night2.written).toBe(0);
    expect(night2.outcomes).toEqual({ approved: 0, rejected: 0, not_reviewed: 0 });
    expect(night2.partial).toBe(false);
    expect(night2.coverage.describedBefore).toBe(night1.coverage.describedAfter);
    expect(night2.coverage.describedAfter).toBe(night1.coverage.describedAfter);
    expect(night2.piiGovernance.tagged).toBe(night1.piiGovernance.tagged);
  });

  test('the figures of unchanged entities come from the memory: night 2 counts none again, night 1 counted all', async () => {
    const store = fileStateStore(w.tw.stateDir);
    expect(await countedAfresh(store, night1.sweepId)).toHaveLength(69);
    expect(await countedAfresh(store, night2.sweepId)).toEqual([]);
  });

  test("the memory keeps each entity's prints with its record's digest, as the sweep left the file", async () => {
    const store = fileStateStore(w.tw.stateDir);
    const catalog = new FileCatalogAdapter(file);
    const read = await store.memory.load(memoryKeyOf(store, catalog.identity, readCatalog(file).name));
    expect(read.status).toBe('ok');
    const entries = read.status === 'ok' ? read.doc.entities : {};
    const ids = (await catalog.snapshot()).ids;
    const digests = await catalog.recordDigests(ids);
    const scan = await scanCatalog(catalog, ids, await catalogContext(catalog), true);
    for (const id of ids) {
      const rec = entries[id]?.rec;
      // The record as it is now (night 1 wrote on most), and the prints a scan reading it finds.
      expect({ id, digest: rec?.[0] }).toEqual({ id, digest: digests.get(id) });
      expect(rec?.slice(1, 4)).toEqual([scan.own.get(id)!.own, scan.own.get(id)!.pii, scan.own.get(id)!.evidence]);
      expect(entries[id]!.o).toBe(rec?.[1]);
    }
    // So a scan with that memory reads no record at all, and finds the same.
    const skipping = await scanCatalog(catalog, ids, await catalogContext(catalog), true, entries);
    expect(skipping.read).toBe(0);
    expect(Object.fromEntries(skipping.prints)).toEqual(Object.fromEntries(scan.prints));
  });

  test('a full sweep judges everything again and still writes nothing new', async () => {
    const full = await sweepFile(file, { incremental: false });
    expect(full.incremental).toMatchObject({ incremental: false, judged: 69, carriedOver: 0 });
    expect(full.written).toBe(0);
  });

  test('an edited description re-judges that entity and the entities reading it, nothing else; what ARGUS inherited from it follows', async () => {
    const c = readCatalog(file);
    const target = c.entities.find((e) => e.id === 'raw.customers')!;
    target.description = 'One row per customer account, as the shop front recorded it.';
    const id = target.columns.find((c) => c.name === 'customer_id')!;
    id.description = 'Shop-front customer number, kept when accounts are merged.';
    writeCatalog(file, c);
    const readers = readersOf(file, 'raw.customers');
    expect(readers.size).toBeGreaterThan(0);
    const r = await sweepFile(file);
    // The entity edited is judged by every agent; those reading it by all but the PII classifier, which reads an
    // entity alone.
    const [scopes] = await scopesByPass(fileStateStore(w.tw.stateDir), r.sweepId);
    expect(scopes!.readersOnly).not.toContain('raw.customers');
    expect(scopes!.piiOnly).toEqual([]);
    expect(scopes!.readersOnly.length).toBeGreaterThan(0);
    const [judged] = await judgedByPass(fileStateStore(w.tw.stateDir), r.sweepId);
    expect(judged).toEqual(expect.arrayContaining([...scopes!.readersOnly, 'raw.customers']));
    // Every direct reader through recorded lineage is among them (its own record did not change).
    const direct = readCatalog(file).entities.filter((e) => e.upstream?.includes('raw.customers'));
    for (const e of direct) expect(scopes!.readersOnly).toContain(e.id);
    expect(r.incremental!.new).toBe(0);
    expect(r.incremental!.changed).toBeGreaterThanOrEqual(1 + readers.size);
    // Readers through SQL or keys count too; far from the whole catalog either way.
    expect(r.incremental!.changed).toBeLessThan(69 / 2);
    expect(r.incremental!.carriedOver).toBe(69 - r.incremental!.changed);
    // What ARGUS inherited from the old text follows the new one (an upstream edit propagates).
    const inherited = readCatalog(file).entities.flatMap((e) =>
      e.columns.filter(
        (c) =>
          c.description_source === 'argus' && /Inherited from `raw\.customers\.customer_id`/.test(c.description ?? ''),
      ),
    );
    expect(inherited.length).toBeGreaterThan(0);
    for (const c of inherited) expect(c.description).toMatch(/^Shop-front customer number, kept when accounts/);
    expect(r.written).toBeGreaterThanOrEqual(inherited.length);
    const again = await sweepFile(file);
    expect(again.incremental).toMatchObject({ judged: 0, carriedOver: 69 });
    expect(again.written).toBe(0);
  });

  test("a person's text removed upstream takes back what ARGUS inherited from it; undo puts it back", async () => {
    const originOf = (c: { description?: string }) => /Inherited from `([^`]+)`/.exec(c.description ?? '')?.[1];
    const copiesOf = (origin: string) =>
      readCatalog(file)
        .entities.flatMap((e) =>
          e.columns
            .filter((c) => c.description_source === 'argus' && originOf(c) === origin)
            .map((c) => [`${e.id}.${c.name}`, c.description!] as const),
        )
        .sort();
    // The person's column text ARGUS copied most often.
    const counts = new Map<string, number>();
    for (const e of readCatalog(file).entities)
      for (const c of e.columns) {
        const o = c.description_source === 'argus' ? originOf(c) : undefined;
        if (o) counts.set(o, (counts.get(o) ?? 0) + 1);
      }
    const origin = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const had = copiesOf(origin);
    expect(had.length).toBeGreaterThan(0);
    const c = readCatalog(file);
    const up = c.entities.find((e) => e.columns.some((col) => `${e.id}.${col.name}` === origin))!;
    const col = up.columns.find((x) => `${up.id}.${x.name}` === origin)!;
    expect(col.description_source ?? 'human').toBe('human');
    delete col.description;
    delete col.description_source;
    writeCatalog(file, c);

    const r = await sweepFile(file);
    // No copy of the removed text is left. A copy whose column has other evidence (a key it references) got that
    // text instead; the others have no description now, and each was a removal the gate approved and wrote.
    expect(copiesOf(origin)).toEqual([]);
    const now = new Map(
      readCatalog(file).entities.flatMap((e) => e.columns.map((x) => [`${e.id}.${x.name}`, x.description] as const)),
    );
    const removed = had.filter(([id]) => now.get(id) === undefined).length;
    expect(removed).toBeGreaterThan(0);
    expect(r.byKind.description_removal).toMatchObject({ proposed: removed, approved: removed, written: removed });
    for (const [id] of had) if (now.get(id) !== undefined) expect(now.get(id)).toMatch(/^References `/);
    // The sweep's own fixed point: nothing is left to take back or to write the next night.
    const again = await sweepFile(file);
    expect(again.incremental).toMatchObject({ judged: 0, carriedOver: 69 });
    expect(again.written).toBe(0);
    // Undo of the sweep puts every removed text back, byte for byte, as ARGUS's.
    await undoSweep(w.tw.stateDir, r.sweepId);
    expect(copiesOf(origin)).toEqual(had);
  });
});

describe('what the memory never does', () => {
  test('undo forgets what it took back, so the next sweep writes it again', async () => {
    const file = copy('undo');
    const first = await sweepFile(file);
    expect(first.written).toBeGreaterThan(0);
    await undoSweep(w.tw.stateDir, first.sweepId);
    const again = await sweepFile(file);
    expect(again.written).toBe(first.written);
    expect(again.incremental!.judged).toBeGreaterThan(0);
  });

  test("a repair a person removed is that person's decision: judged again, not written again, even by a full sweep", async () => {
    const file = copy('removed');
    const before = new Map(readCatalog(file).entities.map((e) => [e.id, e.description]));
    const first = await sweepFile(file);
    expect(first.written).toBeGreaterThan(0);
    const c = readCatalog(file);
    const drafted = c.entities.find((e) => !before.get(e.id) && e.description)!;
    expect(drafted).toBeDefined();
    delete drafted.description;
    writeCatalog(file, c);
    const next = await sweepFile(file);
    expect(next.incremental!.changed).toBeGreaterThanOrEqual(1);
    expect(next.written).toBe(0);
    const full = await sweepFile(file, { incremental: false });
    expect(full.written).toBe(0);
    expect(readCatalog(file).entities.find((e) => e.id === drafted.id)!.description).toBeUndefined();
    const settled = await sweepFile(file);
    expect(settled.incremental).toMatchObject({ judged: 0, carriedOver: 69 });
  });

  test('unreadable memory is never a reason to skip: everything is judged, the report says why, the memory is rewritten', async () => {
    const file = copy('corrupt');
    await sweepFile(file);
    const dir = path.join(w.tw.stateDir, 'memory');
    const mine = readdirSync(dir).map((f) => path.join(dir, f));
    for (const f of mine) writeFileSync(f, readFileSync(f, 'utf8').slice(0, 40));
    const r = await sweepFile(file);
    expect(r.incremental).toMatchObject({ judged: 69, carriedOver: 0 });
    expect(r.incremental!.note).toMatch(/memory not used: .*unreadable/);
    expect(r.written).toBe(0);
    const after = await sweepFile(file);
    expect(after.incremental).toMatchObject({ judged: 0, carriedOver: 69 });
  });

  test('the fail-safe: most entities gone ends partial, keeps their memory, and says why', async () => {
    const file = copy('failsafe');
    await sweepFile(file);
    const whole = readFileSync(file, 'utf8');
    const c = readCatalog(file);
    c.entities = c.entities.slice(0, 10);
    writeCatalog(file, c);
    const r = await sweepFile(file);
    expect(r.partial).toBe(true);
    expect(r.incremental!.gone).toBe(59);
    expect(r.incremental!.failSafe).toMatch(/59 of the 69 entities .* not treated as deleted/);
    expect(r.partialReasons).toContain(r.incremental!.failSafe);
    writeFileSync(file, whole);
    const back = await sweepFile(file);
    // Nothing is new: the gone entities' memory was kept. Only the few whose lineage lost its targets while the
    // rest was gone (judged then) are judged again now that it is back.
    expect(back.incremental).toMatchObject({ new: 0, gone: 0, changed: r.incremental!.changed });
    expect(back.incremental!.carriedOver).toBe(69 - r.incremental!.changed);
  });
});

describe('model agents and model review on a loopback provider', () => {
  const endpoint = (): EndpointConfig => ({
    id: 'fake',
    baseUrl: fp.baseUrl('ok', 'correct'),
    model: 'fake-model',
    apiKeyEnv: KEY_ENV,
    structuredOutput: 'json_schema',
    maxOutputTokens: 900,
    timeoutMs: 10000,
    maxInFlight: 2,
  });

  test('night 2 makes no model call and writes nothing; another model judges again', async () => {
    const file = copy('model');
    const c = readCatalog(file);
    c.entities = c.entities.slice(0, 20);
    writeCatalog(file, c);
    const input = { review: 'model', agentBackend: 'model', endpoints: [endpoint()] };
    const n1 = await sweepFile(file, input);
    expect(n1.modelUsage.calls).toBeGreaterThan(0);
    expect(n1.written).toBeGreaterThan(0);
    const before = fp.stats()['/s/ok/r/correct']!.answered;
    const n2 = await sweepFile(file, input);
    expect(n2.modelUsage.calls).toBe(0);
    expect(fp.stats()['/s/ok/r/correct']!.answered).toBe(before);
    expect(n2.written).toBe(0);
    expect(n2.incremental).toMatchObject({ judged: 0, carriedOver: 20 });
    const other = await sweepFile(file, { ...input, endpoints: [{ ...endpoint(), model: 'another-model' }] });
    expect(other.incremental!.judged).toBe(20);
    expect(other.incremental!.note).toMatch(/judgment changed/);
  });

  test("with model agents the rules drafter's removals run beside them: a removed origin's copies go, batched or not", async () => {
    for (const modelBatch of [{ entities: 1 }, { entities: 8 }]) {
      const file = copy(`model-removals-${modelBatch.entities}`);
      // A rules sweep first: ARGUS's inherited copies, as a catalog swept before the switch to models holds them.
      await sweepFile(file);
      const copiesOf = (origin: string) =>
        readCatalog(file).entities.flatMap((e) =>
          e.columns.filter(
            (x) => x.description_source === 'argus' && x.description?.includes(`Inherited from \`${origin}\``),
          ),
        );
      expect(copiesOf('raw.orders.order_status').length).toBeGreaterThan(0);
      const c = readCatalog(file);
      delete c.entities.find((e) => e.id === 'raw.orders')!.columns.find((x) => x.name === 'order_status')!.description;
      writeCatalog(file, c);
      const r = await sweepFile(file, {
        review: 'model',
        agentBackend: 'model',
        endpoints: [endpoint()],
        modelBatch,
      });
      expect(copiesOf('raw.orders.order_status')).toEqual([]);
      expect(r.byKind.description_removal).toMatchObject({ proposed: 2, approved: 2, written: 2 });
      // Decided by the gate: no model reviewed them.
      const removals = r.proposals.filter((p) => p.change.kind === 'description_removal');
      expect(removals.map((p) => p.reviewer)).toEqual(['mechanical-gate', 'mechanical-gate']);
    }
  });
});

describe('a setting that changes only some agents re-judges only what they decide', () => {
  const store = () => fileStateStore(w.tw.stateDir);
  const twoAgents = { agents: ['description-drafter', 'lineage-checker'] };

  test('adding the PII classifier to the agents: only it judges, and only on entities it has something to say of', async () => {
    const file = copy('agents-added');
    const night1 = await sweepFile(file, twoAgents);
    expect(night1.proposals.some((p) => p.agent === 'pii-classifier')).toBe(false);
    const quiet = await sweepFile(file, twoAgents);
    expect(quiet.incremental?.judged).toBe(0);

    const added = await sweepFile(file);
    expect(added.incremental?.note).toMatch(/settings of pii-classifier changed/);
    const [scope] = await scopesByPass(store(), added.sweepId);
    // Every entity unchanged since night 1 is judged by the PII classifier alone.
    expect(scope!.piiOnly.length).toBe(added.incremental!.unchanged);
    expect(scope!.readersOnly).toEqual([]);
    expect(added.proposals.filter((p) => p.agent !== 'pii-classifier')).toEqual([]);
    expect(added.proposals.some((p) => p.agent === 'pii-classifier' && p.outcome === 'approved')).toBe(true);
    // The same tags as a sweep of all three agents from the start.
    const fresh = await sweepFile(copy('agents-all'));
    const tags = (r: SweepReport) =>
      r.proposals
        .filter((p) => p.kind === 'pii_tag' && p.outcome === 'approved')
        .map((p) => p.id)
        .sort();
    expect(tags(added)).toEqual(tags(fresh));
    // And the memory is whole again: the next night judges nothing.
    expect((await sweepFile(file)).incremental?.judged).toBe(0);
  });

  test('overwriteHumanText re-judges with every agent but the PII classifier; dropping an agent judges nothing', async () => {
    const file = copy('overwrite');
    await sweepFile(file);
    const changed = await sweepFile(file, { overwriteHumanText: true });
    expect(changed.incremental?.note).toMatch(/settings of description-drafter changed/);
    const [scope] = await scopesByPass(store(), changed.sweepId);
    expect(scope!.readersOnly.length).toBe(changed.incremental!.unchanged);
    expect(scope!.piiOnly).toEqual([]);
    expect(changed.proposals.filter((p) => p.agent === 'pii-classifier')).toEqual([]);

    const dropped = await sweepFile(file, {
      overwriteHumanText: true,
      agents: ['description-drafter', 'pii-classifier'],
    });
    expect(dropped.incremental?.judged).toBe(0);
    expect(dropped.incremental?.note).toMatch(/agent was dropped/);
    expect(dropped.written).toBe(0);
  });
});

test('a memory past one part (5,000 entities) is kept in parts: the next sweep of the unchanged catalog judges nothing', async () => {
  const { generateCatalog } = await import('../../scripts/generate-catalog');
  const file = path.join(w.tw.stateDir, 'incremental', 'parts', 'catalog.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(generateCatalog({ entities: 6000, seed: 5, name: 'memory-parts' })));
  const first = await sweepFile(file, { concurrency: 4 });
  expect(first.partial).toBe(false);
  expect(first.incremental!.judged).toBe(6000);
  const dir = path.join(w.tw.stateDir, 'memory');
  const parts = readdirSync(dir).filter((n) => n.startsWith('memory-parts') && n.includes('.parts.'));
  expect(parts).toHaveLength(1);
  expect(readdirSync(path.join(dir, parts[0]!)).sort()).toEqual(['0.json', '1.json']);
  const second = await sweepFile(file, { concurrency: 4 });
  expect(second.incremental).toMatchObject({ judged: 0, carriedOver: 6000 });
  expect(second.written).toBe(0);
}, 180_000);
