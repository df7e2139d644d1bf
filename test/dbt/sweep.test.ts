// A sweep of a real dbt project through Temporal: jaffle_shop copied, built and documented with real dbt, swept
// by a worker in this process; the YAML files change only on repaired lines, `dbt parse` is green afterwards with
// the new descriptions and tags in its manifest, a second sweep writes nothing, and undo restores every file.
import { existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runSweep, useArgusWorker } from '../support/argus-worker';
import { dbtParse, prepareJaffleShop, type JaffleShop } from '../support/dbt';
import { undoSweep } from '../../activities/undo';
import type { SweepReport } from '../../domain/report';
import type { SweepInput } from '../../domain/sweep';

jest.setTimeout(600_000);

const w = useArgusWorker('tq-dbt');
let shop: JaffleShop;

/** Every YAML file of the project (not target/ or the duckdb file), by relative path. */
function yamlFiles(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = path.join(d, n);
      if (n === 'target' || n === 'logs' || n === 'dbt_packages') continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(n)) out.set(path.relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

const sweep = (input: SweepInput) => runSweep(w, input, 'sweep/dbt/test');

interface ManifestNode {
  description: string;
  columns: Record<
    string,
    {
      description: string;
      tags: string[];
      meta: Record<string, unknown>;
      config?: { tags?: string[]; meta?: Record<string, unknown> };
    }
  >;
}

describe('a sweep of jaffle_shop', () => {
  let before: Map<string, string>;
  let report: SweepReport;

  beforeAll(async () => {
    shop = await prepareJaffleShop();
    before = yamlFiles(shop.dir);
    // Beside every YAML file, what a killed write would have left: one old temporary file (a dead writer's) and
    // one from a moment ago (it could be a live writer's).
    const hourAgo = new Date(Date.now() - 3600_000);
    for (const file of before.keys()) {
      const at = path.join(shop.dir, file);
      writeFileSync(`${at}.4000001.oldkill.tmp`, 'models:\n  - name: half');
      utimesSync(`${at}.4000001.oldkill.tmp`, hourAgo, hourAgo);
      writeFileSync(`${at}.4000002.newkill.tmp`, 'models:\n  - name: half');
    }
    report = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir } });
  });

  test("a YAML file's write removes its dead writers' temporary files, not a recent one", () => {
    const changed = [...before.keys()].filter((f) => readFileSync(path.join(shop.dir, f), 'utf8') !== before.get(f));
    expect(changed.length).toBeGreaterThan(0);
    for (const file of changed) {
      const at = path.join(shop.dir, file);
      expect({
        file,
        old: existsSync(`${at}.4000001.oldkill.tmp`),
        recent: existsSync(`${at}.4000002.newkill.tmp`),
      }).toEqual({ file, old: false, recent: true });
    }
  });

  test('writes into the YAML files, touching only repaired lines; dbt parse is green and sees the repairs', async () => {
    expect(report.failures).toEqual([]);
    expect(report.written).toBeGreaterThan(0);
    const after = yamlFiles(shop.dir);
    for (const [file, text] of before) {
      const now = after.get(file)!;
      // Every original line is still there, in its order: a repair only adds lines or replaces the ones it edits.
      const kept = text.split('\n').filter((l) => now.split('\n').includes(l));
      const removed = text.split('\n').length - kept.length;
      const rewritten = report.proposals.filter((p) => p.written && p.change.kind === 'description').length;
      expect(removed).toBeLessThanOrEqual(rewritten);
    }
    const parse = await dbtParse(shop.dir);
    expect({ code: parse.code, output: parse.code === 0 ? '' : parse.output }).toEqual({ code: 0, output: '' });
    const manifest = JSON.parse(readFileSync(path.join(shop.dir, 'target', 'manifest.json'), 'utf8')) as {
      nodes: Record<string, ManifestNode>;
    };
    const nodes = Object.values(manifest.nodes);
    const written = report.proposals.filter((p) => p.written);
    const described = written.find((p) => p.change.kind === 'description' && p.change.target === 'column')!;
    expect(described).toBeDefined();
    const dc = described.change as { column: string; text: string };
    expect(nodes.some((n) => n.columns[dc.column]?.description === dc.text)).toBe(true);
    const tagged = written.filter((p) => p.change.kind === 'pii_tag');
    for (const t of tagged) {
      const ch = t.change as { column: string; category: string };
      const col = nodes
        .map((n) => n.columns[ch.column])
        .find((c) => c && [...(c.tags ?? []), ...(c.config?.tags ?? [])].includes('pii'));
      expect(col).toBeDefined();
      expect({ ...(col!.meta ?? {}), ...(col!.config?.meta ?? {}) }).toMatchObject({ pii_category: ch.category });
    }
  });

  test('a second sweep writes nothing; undo restores every YAML file byte for byte and dbt parse stays green', async () => {
    const again = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir } });
    expect(again.written).toBe(0);
    const [undo] = await undoSweep(w.tw.stateDir, report.sweepId);
    expect(undo?.conflicts).toEqual([]);
    expect(undo?.undone).toBe(report.written);
    expect(yamlFiles(shop.dir)).toEqual(before);
    expect((await dbtParse(shop.dir)).code).toBe(0);
  });
});

test("a seed column's text a person removes takes back what ARGUS inherited from it; dbt parse reads it as none; undo restores", async () => {
  const seedsYaml = path.join(shop.dir, 'seeds', 'argus_test_seeds.yml');
  const withText = [
    'version: 2',
    'seeds:',
    '  - name: raw_customers',
    '    columns:',
    '      - name: first_name',
    '        description: Given name as the customer typed it at sign-up.',
    '',
  ];
  writeFileSync(seedsYaml, withText.join('\n'));
  expect((await dbtParse(shop.dir)).code).toBe(0);
  const first = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir } });
  const copies = first.proposals.filter(
    (p) =>
      p.written &&
      p.change.kind === 'description' &&
      /^Given name as the customer typed it at sign-up\. Inherited from `[^`]*raw_customers\.first_name`/.test(
        p.change.text,
      ),
  );
  expect(copies.map((p) => p.entityId.split('.').pop())).toContain('stg_customers');

  // The person takes the text away (the column stays listed) and dbt parses the project again.
  writeFileSync(seedsYaml, withText.slice(0, -2).join('\n') + '\n');
  expect((await dbtParse(shop.dir)).code).toBe(0);
  const beforeRemoval = yamlFiles(shop.dir);
  const r = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir } });
  expect(r.failures).toEqual([]);
  expect(r.byKind.description_removal).toMatchObject({ approved: copies.length, written: copies.length });
  // The key stays where ARGUS wrote it, emptied; dbt reads an empty description as none.
  const parse = await dbtParse(shop.dir);
  expect({ code: parse.code, output: parse.code === 0 ? '' : parse.output }).toEqual({ code: 0, output: '' });
  const manifest = JSON.parse(readFileSync(path.join(shop.dir, 'target', 'manifest.json'), 'utf8')) as {
    nodes: Record<string, ManifestNode & { name: string }>;
  };
  for (const p of copies) {
    const node = Object.values(manifest.nodes).find((n) => n.name === p.entityId.split('.').pop())!;
    const ch = p.change as { column: string };
    expect(node.columns[ch.column]!.description).toBe('');
  }
  const again = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir } });
  expect(again.written).toBe(0);
  // Undo puts the text back, byte for byte.
  const [undo] = await undoSweep(w.tw.stateDir, r.sweepId);
  expect(undo?.conflicts).toEqual([]);
  expect(yamlFiles(shop.dir)).toEqual(beforeRemoval);
  await undoSweep(w.tw.stateDir, first.sweepId);
});

test('a project without a manifest fails at once and says what to run', async () => {
  const err = await sweep({ catalog: { kind: 'dbt', projectDir: path.join(w.tw.stateDir, 'no-project') } }).catch(
    (e: unknown) => e,
  );
  const cause = (err as { cause?: { type?: string; message?: string } }).cause;
  expect(cause?.type).toBe('InvalidCatalog');
  expect(cause?.message).toMatch(/dbt parse/);
});
