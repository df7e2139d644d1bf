// Incremental sweeps of a real dbt project: jaffle_shop copied and built with real dbt, swept by a real worker with
// every agent and the review on the loopback fake provider. The second sweep writes nothing and calls no model;
// `dbt parse` stays green; after the nightly rebuild, a column description a person edits in YAML re-judges that
// model and the models reading it, nothing else. The adapter's own fingerprints are checked on a copy of their own:
// what they are made of, that they need no file read per entity, and that ARGUS's writes are in them as the
// rebuilt manifest states them.
import { promises as fsp, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runSweep, useArgusWorker } from '../support/argus-worker';
import { dbtParse, prepareJaffleShop, runDbt, type JaffleShop } from '../support/dbt';
import { judgedByPass, judgedIds, sorted } from '../support/incremental';
import { SK } from '../support/fake-secrets';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { fileStateStore } from '../../state/file/store';
import { DbtCatalogAdapter } from '../../catalog/dbt/adapter';
import { addPiiTag, setDescription } from '../../catalog/dbt/yaml-edit';
import { SweepInput as SweepInputSchema, type EndpointConfig, type SweepInput } from '../../domain/sweep';

jest.setTimeout(600_000);

const KEY_ENV = 'ARGUS_TEST_DBT_INCREMENTAL_KEY';
const w = useArgusWorker('tq-dbt-incremental', { ...process.env, [KEY_ENV]: `${SK}dbt-incremental-not-a-real-key` });
const FAKE = '/s/ok/r/correct';
let fp: FakeProvider;

beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
});
afterAll(async () => {
  await fp?.close();
});

const fakeCalls = () => fp.stats()[FAKE]?.calls ?? 0;

/** The catalog ref a sweep input names, with its defaults (manifest and catalog paths, PII tag convention). */
const dbtRef = (projectDir: string) => {
  const c = SweepInputSchema.parse({ catalog: { kind: 'dbt', projectDir } }).catalog;
  if (c.kind !== 'dbt') throw new Error('not a dbt ref');
  return c;
};
const adapterOn = (projectDir: string) =>
  new DbtCatalogAdapter(dbtRef(projectDir), mkdtempSync(path.join(os.tmpdir(), 'argus-dbt-state-')));

interface ManifestNode {
  unique_id: string;
  resource_type: string;
  name: string;
  schema: string;
  alias?: string;
  identifier?: string;
}
interface Manifest {
  nodes: Record<string, ManifestNode>;
  sources: Record<string, ManifestNode>;
  child_map: Record<string, string[]>;
}
const manifestOf = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, 'target', 'manifest.json'), 'utf8')) as Manifest;

/** The entity id of a node (`<schema>.<relation>`), as docs/catalogs.md says ARGUS names them. */
const idOfNode = (n: ManifestNode) =>
  `${n.schema}.${n.resource_type === 'source' ? (n.identifier ?? n.name) : (n.alias ?? n.name)}`;

/** Every model, seed, snapshot and source of the project, by entity id. */
function projectEntities(dir: string): string[] {
  const m = manifestOf(dir);
  return sorted(
    [...Object.values(m.nodes), ...Object.values(m.sources)]
      .filter((n) => ['model', 'seed', 'snapshot', 'source'].includes(n.resource_type))
      .map(idOfNode),
  );
}

/** The node and every node that reads it through ref()/source(), transitively (dbt's child_map; tests left out). */
function withReaders(dir: string, uniqueId: string): string[] {
  const m = manifestOf(dir);
  const byId = new Map([...Object.values(m.nodes), ...Object.values(m.sources)].map((n) => [n.unique_id, n]));
  const out = new Set<string>();
  const walk = (u: string) => {
    const n = byId.get(u);
    if (!n || n.resource_type === 'test' || out.has(idOfNode(n))) return;
    out.add(idOfNode(n));
    for (const c of m.child_map[u] ?? []) walk(c);
  };
  walk(uniqueId);
  return sorted(out);
}

/** The entity ids whose value differs between two fingerprint maps (or is in one only). */
function differing(a: Map<string, string>, b: Map<string, string>): string[] {
  return sorted(new Set([...a.keys(), ...b.keys()].filter((id) => a.get(id) !== b.get(id))));
}

/** What a person does to a YAML file: an edit with the project's own YAML splicer, the rest of the file kept. */
function editYaml(dir: string, file: string, edit: (text: string) => { text: string | null; changed: boolean }) {
  const full = path.join(dir, file);
  const r = edit(readFileSync(full, 'utf8'));
  if (!r.changed || r.text === null) throw new Error(`the edit of ${file} changed nothing`);
  writeFileSync(full, r.text);
}

/** The nightly rebuild a dbt project runs before ARGUS: the manifest (compiled) and catalog.json anew. */
async function rebuild(shop: JaffleShop): Promise<void> {
  const r = await shop.dbt(['docs', 'generate']);
  if (r.code !== 0) throw new Error(`dbt docs generate failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
}

describe('the adapter fingerprint', () => {
  let shop: JaffleShop;
  let ids: string[];

  beforeAll(async () => {
    shop = await prepareJaffleShop();
    ids = projectEntities(shop.dir);
  });

  test('a hex digest per entity, read from what the adapter parsed: no file read per entity, the same in a fresh adapter', async () => {
    const a = adapterOn(shop.dir);
    const spy = jest.spyOn(fsp, 'readFile');
    let first: Map<string, string>;
    try {
      first = await a.fingerprints([...ids, 'main.no_such_model']);
      // The project's files once (the adapter had not read them yet), nothing per entity.
      expect(sorted(spy.mock.calls.map((c) => path.basename(String(c[0]))))).toEqual([
        'catalog.json',
        'dbt_project.yml',
        'manifest.json',
      ]);
      expect((await a.snapshot()).ids).toEqual(ids);
      spy.mockClear();
      expect(await a.fingerprints(ids)).toEqual(first);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
    expect(sorted(first.keys())).toEqual(ids);
    for (const v of first.values()) expect(v).toMatch(/^[0-9a-f]{64}$/);
    expect(await adapterOn(shop.dir).fingerprints(ids)).toEqual(first);
  });

  test("a column's description, tags and meta in YAML change exactly that model's fingerprint (dbt's state:modified ignores tags and meta)", async () => {
    const before = await adapterOn(shop.dir).fingerprints(ids);
    const previous = path.join(mkdtempSync(path.join(os.tmpdir(), 'argus-dbt-prev-')), 'state');
    mkdirSync(previous);
    copyFileSync(path.join(shop.dir, 'target', 'manifest.json'), path.join(previous, 'manifest.json'));

    editYaml(shop.dir, 'models/schema.yml', (t) =>
      setDescription(t, { resource: 'model', name: 'customers' }, 'first_name', "Customer's given name."),
    );
    await rebuild(shop);
    const described = await adapterOn(shop.dir).fingerprints(ids);
    expect(differing(before, described)).toEqual(['main.customers']);

    // Tags and meta only, on another model's column: a person's `tags: [finance]` and `meta: {owner: billing}`.
    editYaml(shop.dir, 'models/schema.yml', (t) =>
      addPiiTag(t, { resource: 'model', name: 'orders' }, 'customer_id', 'billing', {
        tag: 'finance',
        categoryKey: 'owner',
      }),
    );
    await rebuild(shop);
    const tagged = await adapterOn(shop.dir).fingerprints(ids);
    expect(differing(described, tagged)).toEqual(['main.orders']);
    // dbt's own state:modified sees neither edit (a description only counts with persist_docs): ARGUS must.
    const ls = await runDbt(shop.dir, [
      'ls',
      '--resource-type',
      'model',
      '--select',
      'state:modified',
      '--state',
      previous,
    ]);
    expect(ls.code).toBe(0);
    expect(ls.output).not.toMatch(/jaffle_shop\.(orders|customers)\b/);
  });

  test('a column type catalog.json states changes exactly that entity', async () => {
    const before = await adapterOn(shop.dir).fingerprints(ids);
    const file = path.join(shop.dir, 'target', 'catalog.json');
    const original = readFileSync(file, 'utf8');
    const cat = JSON.parse(original) as { nodes: Record<string, { columns: Record<string, { type: string }> }> };
    const col = Object.values(cat.nodes['seed.jaffle_shop.raw_payments']!.columns)[0]!;
    col.type = col.type === 'VARCHAR' ? 'BIGINT' : 'VARCHAR';
    writeFileSync(file, JSON.stringify(cat));
    try {
      expect(differing(before, await adapterOn(shop.dir).fingerprints(ids))).toEqual(['main.raw_payments']);
    } finally {
      writeFileSync(file, original);
    }
  });

  test('repairs the adapter wrote are in its fingerprint as the rebuilt manifest states them', async () => {
    const a = adapterOn(shop.dir);
    const before = await a.fingerprints(ids);
    const out = await a.applyRepairs(
      [
        {
          proposalId: 'p-1',
          entityId: 'main.stg_customers',
          change: { kind: 'description', target: 'column', column: 'first_name', text: 'Given name of the customer.' },
        },
        {
          proposalId: 'p-2',
          entityId: 'main.stg_orders',
          change: { kind: 'description', target: 'table', text: 'One row per order, as the shop recorded it.' },
        },
        {
          proposalId: 'p-3',
          entityId: 'main.stg_customers',
          change: {
            kind: 'pii_tag',
            column: 'last_name',
            category: 'person_name',
            confidence: 0.9,
            explanation: 'A family name.',
          },
        },
      ],
      { overwriteHumanText: false },
    );
    expect(out.map((o) => o.status)).toEqual(['written', 'written', 'written']);
    const written = await a.fingerprints(ids);
    expect(differing(before, written)).toEqual(['main.stg_customers', 'main.stg_orders']);
    await rebuild(shop);
    // A fresh read of the rebuilt manifest: the same fingerprints the writer held in memory.
    expect(await adapterOn(shop.dir).fingerprints(ids)).toEqual(written);
  });
});

describe('jaffle_shop, night after night', () => {
  let shop: JaffleShop;
  let ids: string[];
  const store = () => fileStateStore(w.tw.stateDir);
  const endpoint = (): EndpointConfig => ({
    id: 'fake',
    baseUrl: fp.baseUrl('ok', 'correct'),
    model: 'dbt-incremental',
    apiKeyEnv: KEY_ENV,
    structuredOutput: 'json_schema',
    maxOutputTokens: 900,
    timeoutMs: 20_000,
    maxInFlight: 4,
  });
  const input = (): SweepInput => ({
    catalog: { kind: 'dbt', projectDir: shop.dir },
    review: 'model',
    agentBackend: 'model',
    endpoints: [endpoint()],
  });
  const sweep = () => runSweep(w, input(), 'sweep/dbt-incremental');

  beforeAll(async () => {
    shop = await prepareJaffleShop();
    ids = projectEntities(shop.dir);
  });

  test('night 1 judges every entity and writes; night 2 writes nothing and calls no model; dbt parse stays green', async () => {
    const calls = fakeCalls();
    const night1 = await sweep();
    expect(night1.failures).toEqual([]);
    expect(night1.partial).toBe(false);
    expect(night1.incremental).toMatchObject({ new: ids.length, carriedOver: 0, judged: ids.length, unsettled: 0 });
    expect(sorted((await judgedByPass(store(), night1.sweepId))[0]!)).toEqual(ids);
    expect(night1.written).toBeGreaterThan(0);
    expect(night1.modelUsage.calls).toBeGreaterThan(0);
    expect(fakeCalls() - calls).toBe(night1.modelUsage.calls);

    const before = fakeCalls();
    const night2 = await sweep();
    expect(night2.failures).toEqual([]);
    expect(night2.partial).toBe(false);
    expect(night2.incremental).toMatchObject({
      new: 0,
      changed: 0,
      unchanged: ids.length,
      gone: 0,
      carriedOver: ids.length,
      judged: 0,
    });
    expect(night2.written).toBe(0);
    expect(night2.proposals).toEqual([]);
    expect(night2.modelUsage.calls).toBe(0);
    expect(fakeCalls()).toBe(before);

    const parse = await dbtParse(shop.dir);
    expect({ code: parse.code, output: parse.code === 0 ? '' : parse.output }).toEqual({ code: 0, output: '' });
  });

  // ARGUS records the tags it writes (the YAML keeps only the tag and its category), so a rebuilt manifest reads as
  // the entity did right after the write, and the memory's fingerprints still hold.
  test('after the nightly rebuild (the manifest now holds what ARGUS wrote), nothing is judged again', async () => {
    await rebuild(shop);
    const before = fakeCalls();
    const r = await sweep();
    expect(r.failures).toEqual([]);
    expect(await judgedIds(store(), r.sweepId)).toEqual(new Set());
    expect(r.incremental).toMatchObject({ changed: 0, judged: 0, carriedOver: ids.length });
    expect(r.written).toBe(0);
    expect(r.modelUsage.calls).toBe(0);
    expect(fakeCalls()).toBe(before);
  });

  test('a column description a person edits in YAML re-judges that model and the models reading it, nothing else', async () => {
    // Settle whatever the rebuild made the memory judge again (see the test above), so this one sees the edit only.
    const settle = await sweep();
    expect(settle.incremental!.unsettled).toBe(0);

    const edited = 'model.jaffle_shop.stg_customers';
    const expected = withReaders(shop.dir, edited);
    // jaffle_shop: customers reads stg_customers.
    expect(expected).toEqual(['main.customers', 'main.stg_customers']);
    const text = 'Identifier of the customer in the shop system, as a person wrote it.';
    editYaml(shop.dir, 'models/staging/schema.yml', (t) =>
      setDescription(t, { resource: 'model', name: 'stg_customers' }, 'customer_id', text),
    );
    await rebuild(shop);

    const r = await sweep();
    expect(r.failures).toEqual([]);
    expect(r.incremental).toMatchObject({
      new: 0,
      changed: expected.length,
      unchanged: ids.length - expected.length,
      gone: 0,
      carriedOver: ids.length - expected.length,
      judged: expected.length,
    });
    expect(sorted((await judgedByPass(store(), r.sweepId))[0]!)).toEqual(expected);
    for (const id of await judgedIds(store(), r.sweepId)) expect(expected).toContain(id);
    for (const p of r.proposals) expect(expected).toContain(p.entityId);
    // The person's text stays as written.
    expect(readFileSync(path.join(shop.dir, 'models/staging/schema.yml'), 'utf8')).toContain(text);
    const parse = await dbtParse(shop.dir);
    expect({ code: parse.code, output: parse.code === 0 ? '' : parse.output }).toEqual({ code: 0, output: '' });
  });
});
