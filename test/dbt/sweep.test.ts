// A sweep of a real dbt project through Temporal: jaffle_shop copied, built and documented with real dbt, swept
// by a worker in this process; the YAML files change only on repaired lines, `dbt parse` is green afterwards with
// the new descriptions and tags in its manifest, a second sweep writes nothing, and undo restores every file.
import { readFileSync, readdirSync, statSync } from 'node:fs';
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
    report = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir } });
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

test('a project without a manifest fails at once and says what to run', async () => {
  const err = await sweep({ catalog: { kind: 'dbt', projectDir: path.join(w.tw.stateDir, 'no-project') } }).catch(
    (e: unknown) => e,
  );
  const cause = (err as { cause?: { type?: string; message?: string } }).cause;
  expect(cause?.type).toBe('InvalidCatalog');
  expect(cause?.message).toMatch(/dbt parse/);
});
