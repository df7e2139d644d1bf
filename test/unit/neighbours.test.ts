import * as os from 'node:os';
import * as path from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FileCatalogAdapter } from '../../catalog/file/adapter';
import type { CatalogEntityInput } from '../../domain/catalog';
import { forgetPageNeighbours, loadNeighbours, pageNeighbours } from '../../activities/neighbours';
import { createCatalogContext } from '../../judgment/catalog-context';
import { descriptionFacts } from '../../judgment/description-evidence';

const table = (id: string, columns: CatalogEntityInput['columns'], extra: Partial<CatalogEntityInput> = {}) => ({
  id,
  database: 'wh',
  name: id.split('.')[1]!,
  kind: 'table' as const,
  columns,
  ...extra,
});
const view = (id: string, sql: string, upstream: string[], columns: string[]) =>
  table(
    id,
    columns.map((name) => ({ name, type: 'text' })),
    { kind: 'view', sql, upstream },
  );

// raw.people (a person described `email`) → stg → int → mart: three hops of pass-throughs. The mart also
// joins forty lookup tables that nothing it describes rests on.
const lookups = Array.from({ length: 40 }, (_, i) => table(`ref.lookup_${i}`, [{ name: 'code', type: 'text' }]));
const entities = [
  table('raw.people', [
    { name: 'id', type: 'int', primary_key: true },
    { name: 'email', type: 'text', description: 'Address the person signs in with.', description_source: 'human' },
  ]),
  view('stg.people', 'select id, email from raw.people', ['raw.people'], ['id', 'email']),
  view('int.people', 'select id, email as login_email from stg.people', ['stg.people'], ['id', 'login_email']),
  view(
    'mart.people',
    `select p.id, p.login_email from int.people p ${lookups.map((l, i) => `left join ${l.id} l${i} on l${i}.code = p.id`).join(' ')}`,
    ['int.people', ...lookups.map((l) => l.id)],
    ['id', 'login_email'],
  ),
  ...lookups,
];

test('loads the chain a description rests on, hop by hop, and not the fan-in it does not need', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-neighbours-'));
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({ format: 'argus-catalog', version: 1, name: 'wh', entities }));
  const catalog = new FileCatalogAdapter(file);
  const requested: string[] = [];
  const getEntities = catalog.getEntities.bind(catalog);
  catalog.getEntities = async (ids) => {
    requested.push(...ids);
    return getEntities(ids);
  };
  const ctx = createCatalogContext(entities.map((e) => e.id));
  const { entities: page } = await getEntities(['mart.people']);
  const neighbours = await loadNeighbours(catalog, page, ctx);
  const fact = descriptionFacts(page[0]!, ctx, neighbours).columns.get('login_email');
  expect(fact?.text).toBe(
    'Address the person signs in with. Inherited from `raw.people.email` through `int.people`, `stg.people`, renamed from `email`.',
  );
  expect(new Set(requested)).toEqual(new Set(['int.people', 'stg.people', 'raw.people']));
});

test("hands out neighbours without ARGUS's text and tags, so that a write on one entity is no evidence for another", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-neighbours-'));
  const file = path.join(dir, 'catalog.json');
  // ARGUS inherited the person's text onto stg.people and tagged it; int.people must still trace it to raw.people.
  const written = entities.map((e) =>
    e.id === 'stg.people'
      ? {
          ...e,
          columns: [
            { name: 'id', type: 'text' },
            {
              name: 'email',
              type: 'text',
              description: 'Address the person signs in with. Inherited from `raw.people.email`.',
              description_source: 'argus',
              tags: [{ kind: 'pii', category: 'email', confidence: 0.9, explanation: 'e-mail', source: 'argus' }],
            },
          ],
        }
      : e,
  );
  writeFileSync(file, JSON.stringify({ format: 'argus-catalog', version: 1, name: 'wh', entities: written }));
  const catalog = new FileCatalogAdapter(file);
  const ctx = createCatalogContext(entities.map((e) => e.id));
  const { entities: page } = await catalog.getEntities(['int.people']);
  const neighbours = await loadNeighbours(catalog, page, ctx);
  const stg = neighbours.get('stg.people')!;
  expect(stg.columns.find((c) => c.name === 'email')).toMatchObject({ tags: [] });
  expect(stg.columns.find((c) => c.name === 'email')!.description).toBeUndefined();
  expect(neighbours.get('stg.people')).toBe(stg);
  expect(descriptionFacts(page[0]!, ctx, neighbours).columns.get('login_email')?.text).toBe(
    'Address the person signs in with. Inherited from `raw.people.email` through `stg.people`, renamed from `email`.',
  );
});

test("a page's review gets its drafter's neighbours (and evidence) while it judges the same entity objects", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-neighbours-'));
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({ format: 'argus-catalog', version: 1, name: 'wh', entities }));
  const catalog = new FileCatalogAdapter(file);
  let reads = 0;
  const getEntities = catalog.getEntities.bind(catalog);
  catalog.getEntities = async (ids) => {
    reads++;
    return getEntities(ids);
  };
  const ctx = createCatalogContext(entities.map((e) => e.id));
  const { entities: page } = await getEntities(['mart.people', 'stg.people']);
  const drafter = await pageNeighbours('ledger#3', catalog, page, ctx);
  const facts = descriptionFacts(page[0]!, ctx, drafter);
  const loads = reads;
  expect(loads).toBeGreaterThan(0);
  // The review of the same page, on some of the same objects: no load, the very facts the drafter had.
  const review = await pageNeighbours('ledger#3', catalog, [page[0]!], ctx, true);
  expect(review).toBe(drafter);
  expect(reads).toBe(loads);
  expect(descriptionFacts(page[0]!, ctx, review)).toBe(facts);
  // The review let go of the page: the next asker loads afresh; so does another page, or an entity read anew.
  expect(await pageNeighbours('ledger#3', catalog, [page[0]!], ctx)).not.toBe(drafter);
  expect(reads).toBeGreaterThan(loads);
  const copy = { ...page[0]!, columns: [...page[0]!.columns] };
  expect(await pageNeighbours('ledger#3', catalog, [copy], ctx)).not.toBe(drafter);
  expect(await pageNeighbours('ledger#4', catalog, [page[0]!], ctx, true)).not.toBe(drafter);
});

test('an entity kept alive does not keep alive the neighbours its facts were computed with', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-neighbours-'));
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({ format: 'argus-catalog', version: 1, name: 'wh', entities }));
  const catalog = new FileCatalogAdapter(file);
  const ctx = createCatalogContext(entities.map((e) => e.id));
  // The entity stays referenced, as a catalog store's kept entities do, long after its page is done.
  const { entities: page } = await catalog.getEntities(['mart.people']);
  const gone = await (async () => {
    const neighbours = await loadNeighbours(catalog, page, ctx);
    expect(descriptionFacts(page[0]!, ctx, neighbours).columns.get('login_email')?.text).toContain('raw.people.email');
    return new WeakRef(neighbours);
  })();
  // A WeakRef's target lives to the end of the job that made it: collect on a later turn.
  await new Promise((r) => setImmediate(r));
  gc();
  expect(gone.deref()).toBeUndefined();
  expect(page[0]!.id).toBe('mart.people');
});

test("forgetting a sweep's pages lets their neighbours go: one page, or all of one ledger's and no other's", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-neighbours-'));
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({ format: 'argus-catalog', version: 1, name: 'wh', entities }));
  const catalog = new FileCatalogAdapter(file);
  const ctx = createCatalogContext(entities.map((e) => e.id));
  const { entities: page } = await catalog.getEntities(['mart.people', 'stg.people']);
  const kept = async (key: string) => pageNeighbours(key, catalog, page, ctx);
  const a1 = await kept('sweep/a@r1#1');
  const a2 = await kept('sweep/a@r1#2');
  const a10 = await kept('sweep/a@r10#1');
  const b1 = await kept('sweep/b@r1#1');
  expect(await kept('sweep/a@r1#1')).toBe(a1);
  forgetPageNeighbours('sweep/a@r1', 1);
  expect(await kept('sweep/a@r1#1')).not.toBe(a1);
  expect(await kept('sweep/a@r1#2')).toBe(a2);
  forgetPageNeighbours('sweep/a@r1');
  expect(await kept('sweep/a@r1#2')).not.toBe(a2);
  // A ledger whose key starts like another's keeps its own, and so does another sweep's.
  expect(await kept('sweep/a@r10#1')).toBe(a10);
  expect(await kept('sweep/b@r1#1')).toBe(b1);
});
