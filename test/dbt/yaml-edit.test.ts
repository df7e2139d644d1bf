// YAML write-back on a real copy of jaffle_shop: edits, `dbt parse` on the result, line-level diffs
// against the original files, and undo back to the original bytes.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { patchPathFile, readDbtProject } from '../../catalog/dbt/manifest';
import {
  addPiiTag,
  argusYamlPathFor,
  setDescription,
  undoYamlEdit,
  type DbtYamlNode,
  type YamlUndo,
} from '../../catalog/dbt/yaml-edit';
import { dbtParse, prepareJaffleShop, type JaffleShop } from '../support/dbt';

jest.setTimeout(600_000);

interface ManifestColumn {
  description: string;
  tags: string[];
  meta: Record<string, unknown>;
  config?: { tags?: string[]; meta?: Record<string, unknown> };
}
type Manifest = { nodes: Record<string, { columns: Record<string, ManifestColumn>; description: string }> };

let shop: JaffleShop;
const file = (rel: string) => path.join(shop.dir, rel);
const readText = (rel: string) => (existsSync(file(rel)) ? readFileSync(file(rel), 'utf8') : null);
const manifest = () => JSON.parse(readFileSync(file('target/manifest.json'), 'utf8')) as Manifest;

/** Edits applied to files, remembered for undo in reverse order. */
class Session {
  readonly log: { rel: string; undo: YamlUndo }[] = [];
  apply(rel: string, edit: (text: string | null) => { text: string; undo: YamlUndo }): void {
    const r = edit(readText(rel));
    writeFileSync(file(rel), r.text);
    this.log.push({ rel, undo: r.undo });
  }
  undoAll(): void {
    for (const { rel, undo } of [...this.log].reverse()) {
      const back = undoYamlEdit(readText(rel), undo);
      if (back === null) rmSync(file(rel));
      else writeFileSync(file(rel), back);
    }
  }
}

/** Lines of `before` missing from `after` and lines of `after` new to it, as multisets; checks order too. */
function lineDiff(before: string, after: string): { removed: string[]; added: string[] } {
  const count = (lines: string[]) => lines.reduce((m, l) => m.set(l, (m.get(l) ?? 0) + 1), new Map<string, number>());
  const minus = (a: string[], b: string[]) => {
    const left = count(b);
    return a.filter((l) => {
      const n = left.get(l) ?? 0;
      if (n > 0) left.set(l, n - 1);
      return n === 0;
    });
  };
  const b = before.split('\n');
  const a = after.split('\n');
  const removed = minus(b, a);
  const added = minus(a, b);
  // The kept lines appear in `after` in their original order.
  const kept = minus(b, removed);
  let i = 0;
  for (const line of a) if (line === kept[i]) i++;
  expect(i).toBe(kept.length);
  return { removed, added };
}

const ODD = 'Given name: as "entered" at sign-up # not a comment\nIt’s free text — naïve café, 顧客の名';
const customers: DbtYamlNode = { resource: 'model', name: 'customers' };
const stgOrders: DbtYamlNode = { resource: 'model', name: 'stg_orders' };
const probe: DbtYamlNode = { resource: 'model', name: 'stg_probe' };
const seed: DbtYamlNode = { resource: 'seed', name: 'raw_customers' };

beforeAll(async () => {
  shop = await prepareJaffleShop();
  // A model nobody wrote YAML for (jaffle_shop has a YAML entry for every model).
  writeFileSync(file('models/staging/stg_probe.sql'), "select id, first_name from {{ ref('raw_customers') }}\n");
  for (const cmd of [
    ['run', '-s', 'stg_probe'],
    ['docs', 'generate'],
  ])
    expect((await shop.dbt(cmd)).code).toBe(0);
});

test('descriptions and pii tags written into YAML: dbt parses them, only touched lines change, undo restores the bytes', async () => {
  const originals = new Map(['models/schema.yml', 'models/staging/schema.yml'].map((f) => [f, readText(f)!]));
  const read = await readDbtProject({ projectDir: shop.dir });
  const probeFile = read.locations.get('main.stg_probe')!.writePath;
  const seedFile = read.locations.get('main.raw_customers')!.writePath;
  expect(probeFile).toBe(argusYamlPathFor('models/staging/stg_probe.sql', 'model'));
  expect(probeFile).toBe('models/staging/_argus__models.yml');
  expect(existsSync(file(probeFile))).toBe(false);

  const s = new Session();
  const schema = 'models/schema.yml';
  s.apply(schema, (t) => setDescription(t, customers, 'first_name', ODD));
  s.apply(schema, (t) => setDescription(t, customers, 'last_name', "Family name: O'Brien-style, with 'quotes'"));
  s.apply(schema, (t) => setDescription(t, customers, 'customer_lifetime_value', 'Sum of the amounts of every order'));
  s.apply(schema, (t) => addPiiTag(t, customers, 'first_name', 'person_name'));
  s.apply(schema, (t) => addPiiTag(t, customers, 'last_name', 'person_name', { categoryKey: 'argus_pii' }));
  s.apply('models/staging/schema.yml', (t) => setDescription(t, stgOrders, 'order_date', 'Date the order was placed'));
  s.apply(probeFile, (t) => setDescription(t, probe, 'id', 'Customer id from the raw export'));
  s.apply(probeFile, (t) => setDescription(t, probe, 'first_name', 'Line one\nline {{ two }}'));
  s.apply(probeFile, (t) => addPiiTag(t, probe, 'first_name', 'person_name'));
  s.apply(seedFile, (t) => setDescription(t, seed, undefined, 'Customers as exported: id, first name, last name'));

  const parsed = await dbtParse(shop.dir);
  expect(parsed.code).toBe(0);
  const m = manifest();
  const cust = m.nodes['model.jaffle_shop.customers']!.columns;
  expect(cust.first_name!.description).toBe(ODD);
  expect(cust.last_name!.description).toBe("Family name: O'Brien-style, with 'quotes'");
  expect(cust.customer_lifetime_value!.description).toBe('Sum of the amounts of every order');
  expect(cust.first_name!.config).toMatchObject({ tags: ['pii'], meta: { pii_category: 'person_name' } });
  expect(cust.last_name!.config).toMatchObject({ tags: ['pii'], meta: { argus_pii: 'person_name' } });
  expect(m.nodes['model.jaffle_shop.stg_orders']!.columns.order_date!.description).toBe('Date the order was placed');
  const p = m.nodes['model.jaffle_shop.stg_probe']!.columns;
  expect(p.id!.description).toBe('Customer id from the raw export');
  expect(p.first_name!.description).toBe('Line one\nline {{ two }}');
  expect(p.first_name!.config).toMatchObject({ tags: ['pii'], meta: { pii_category: 'person_name' } });
  expect(m.nodes['seed.jaffle_shop.raw_customers']!.description).toBe(
    'Customers as exported: id, first name, last name',
  );

  // The reader sees the tags ARGUS wrote, in the config form, once dbt has parsed them.
  const after = await readDbtProject({ projectDir: shop.dir });
  const firstName = after.entities
    .find((e) => e.id === 'main.customers')!
    .columns.find((c) => c.name === 'first_name')!;
  expect(firstName.tags).toMatchObject([{ kind: 'pii', category: 'person_name' }]);
  expect(after.locations.get('main.stg_probe')!.yamlPath).toBe(probeFile);

  // Only the repaired lines changed: the two replaced descriptions went, the rest are additions.
  const d = lineDiff(originals.get(schema)!, readText(schema)!);
  expect(d.removed).toEqual([
    "        description: Customer's first name. PII.",
    "        description: Customer's last name. PII.",
  ]);
  expect(d.added).toEqual([
    '        description: |-',
    '          Given name: as "entered" at sign-up # not a comment',
    '          It’s free text — naïve café, 顧客の名',
    '        config:',
    '          tags: [pii]',
    '          meta:',
    '            pii_category: person_name',
    `        description: 'Family name: O''Brien-style, with ''quotes'''`,
    '        config:',
    '          tags: [pii]',
    '          meta:',
    '            argus_pii: person_name',
    '      - name: customer_lifetime_value',
    '        description: Sum of the amounts of every order',
  ]);
  const staging = lineDiff(originals.get('models/staging/schema.yml')!, readText('models/staging/schema.yml')!);
  expect(staging).toEqual({
    removed: [],
    added: ['      - name: order_date', '        description: Date the order was placed'],
  });

  s.undoAll();
  for (const [rel, text] of originals) expect(readText(rel)).toBe(text);
  expect(existsSync(file(probeFile))).toBe(false);
  expect(existsSync(file(seedFile))).toBe(false);
  expect((await dbtParse(shop.dir)).code).toBe(0);
});

test('a file that uses the legacy tags:/meta: form gets the tag in that form; the reader reads both forms', async () => {
  const rel = 'models/staging/schema.yml';
  const original = readText(rel)!;
  // A person tagged stg_customers.customer_id the legacy way, with a comment.
  const personal = original.replace(
    '  - name: stg_customers\n    columns:\n      - name: customer_id\n',
    '  - name: stg_customers\n    columns:\n      - name: customer_id\n        tags: [pii]  # reviewed\n        meta:\n          pii_category: username\n',
  );
  expect(personal).not.toBe(original);
  writeFileSync(file(rel), personal);
  const node: DbtYamlNode = { resource: 'model', name: 'stg_orders' };
  const tagged = addPiiTag(personal, node, 'order_id', 'username');
  writeFileSync(file(rel), tagged.text);
  expect(lineDiff(personal, tagged.text)).toEqual({
    removed: [],
    added: ['        tags: [pii]', '        meta:', '          pii_category: username'],
  });
  expect((await dbtParse(shop.dir)).code).toBe(0);
  const m = manifest();
  expect(m.nodes['model.jaffle_shop.stg_orders']!.columns.order_id).toMatchObject({
    tags: ['pii'],
    meta: { pii_category: 'username' },
  });
  const read = await readDbtProject({ projectDir: shop.dir });
  for (const [id, col] of [
    ['main.stg_customers', 'customer_id'],
    ['main.stg_orders', 'order_id'],
  ] as const) {
    const c = read.entities.find((e) => e.id === id)!.columns.find((x) => x.name === col)!;
    expect(c.tags).toMatchObject([{ kind: 'pii', category: 'username', source: 'human' }]);
  }
  // A second add is a no-op; undo gives the person's bytes back.
  expect(addPiiTag(tagged.text, node, 'order_id', 'username').changed).toBe(false);
  expect(undoYamlEdit(tagged.text, tagged.undo)).toBe(personal);
  writeFileSync(file(rel), original);
});

test('restoring "no description" and a replaced description, and refusing to undo over a later change', () => {
  const text = readText('models/staging/schema.yml')!;
  const node: DbtYamlNode = { resource: 'model', name: 'stg_payments' };
  const a = setDescription(text, node, 'payment_id', 'Payment id');
  const b = setDescription(a.text, node, 'payment_id', 'Payment id, unique');
  expect(undoYamlEdit(b.text, b.undo)).toBe(a.text);
  expect(undoYamlEdit(undoYamlEdit(b.text, b.undo), a.undo)).toBe(text);
  expect(setDescription(a.text, node, 'payment_id', 'Payment id').changed).toBe(false);
  const edited = b.text.replace('Payment id, unique', 'Payment id, edited by a person');
  expect(() => undoYamlEdit(edited, b.undo)).toThrow(/changed since/);
});

test('patch_path in both forms names the same file', () => {
  expect(patchPathFile('jaffle_shop://models/schema.yml')).toBe('models/schema.yml');
  expect(patchPathFile('models/schema.yml')).toBe('models/schema.yml');
});
