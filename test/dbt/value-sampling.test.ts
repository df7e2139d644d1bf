// Value sampling of a dbt project through dbt itself (`dbt show`, the project's own profile), on a copy of jaffle_shop
// with real dbt and DuckDB: a seed whose e-mail and card columns have names that say nothing, a column whose name
// sounds personal and whose values are not, odd column names, and a model that was never built. The values are
// invented; the 19-digit card numbers are made Luhn-valid here and are too long for a JSON number.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { CatalogError } from '../../catalog/adapter';
import { DbtCatalogAdapter } from '../../catalog/dbt/adapter';
import { valueEvidence, valuePattern } from '../../judgment/pii/value-patterns';
import type { SweepReport } from '../../domain/report';
import { CatalogRef, type SweepInput } from '../../domain/sweep';
import { useArgusWorker } from '../support/argus-worker';
import { uniqueId } from '../support/temporal-env';
import { copyJaffleShop, countingDbt, type CountingDbt, type JaffleShop } from '../support/dbt';

jest.setTimeout(600_000);

// Every log line of this file's worker, activities' warnings among them: no value may be in one.
const logs: LogEntry[] = [];
Runtime.install({ logger: new DefaultLogger('INFO', (e) => logs.push(e)) });

const tools = mkdtempSync(path.join(os.tmpdir(), 'argus-dbt-sampling-'));
const dbt: CountingDbt = countingDbt(tools);
const w = useArgusWorker('tq-dbt-sampling', { ...process.env, ARGUS_DBT: dbt.executable });

const EMAILS = Array.from({ length: 20 }, (_, i) => `member${i}.quokka@mail-sample.example`);
const DESKS = Array.from({ length: 20 }, (_, i) => `wombat desk ${i % 4}`);

/** `body` and its Luhn check digit. */
function withCheckDigit(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}
/** 19-digit Visa numbers: beyond 2^53, so a JSON number would round them and break the checksum. */
const CARDS = Array.from({ length: 20 }, (_, i) =>
  withCheckDigit(`4${(31415926535897932n + BigInt(i) * 1000003n).toString()}`),
);
/** Strings that must never leave the worker: the values of the seed, or a distinctive part of them. */
const SECRETS = ['quokka', 'mail-sample', 'wombat', CARDS[0]!, CARDS[7]!, 'gil.odd@example.com'];

let shop: JaffleShop;

beforeAll(async () => {
  shop = copyJaffleShop();
  const csv = ['id,c7,addressee,c9', ...EMAILS.map((e, i) => `${i + 1},${e},${DESKS[i]},${CARDS[i]}`)].join('\n');
  writeFileSync(path.join(shop.dir, 'seeds', 'raw_contacts.csv'), `${csv}\n`);
  writeFileSync(
    path.join(shop.dir, 'seeds', 'odd_names.csv'),
    `Buyer E-Mail,Qty,"it's }} {{ x"\ngil.odd@example.com,2,hello\nhal.odd@example.com,1,"say ""hi"""\n`,
  );
  writeFileSync(
    path.join(shop.dir, 'seeds', 'extra_seeds.yml'),
    [
      'version: 2',
      'seeds:',
      '  - name: raw_contacts',
      '    config:',
      '      column_types: { c9: bigint }',
      '  - name: odd_names',
      '    config:',
      '      quote_columns: true',
      '',
    ].join('\n'),
  );
  // Declared, never built: its relation is not in the database.
  writeFileSync(
    path.join(shop.dir, 'models', 'unbuilt_contacts.sql'),
    "select id, c7 from {{ ref('raw_contacts') }}\n",
  );
  writeFileSync(
    path.join(shop.dir, 'models', 'unbuilt.yml'),
    'version: 2\nmodels:\n  - name: unbuilt_contacts\n    columns:\n      - name: id\n      - name: c7\n',
  );
  for (const args of [
    ['build', '--exclude', 'unbuilt_contacts'],
    ['docs', 'generate'],
  ]) {
    const r = await shop.dbt(args);
    if (r.code !== 0) throw new Error(`dbt ${args.join(' ')} failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
  }
});

const catalog = (): SweepInput['catalog'] => ({ kind: 'dbt', projectDir: shop.dir });
const tagOf = (r: SweepReport, entity: string, column: string) =>
  r.proposals.find((p) => p.entityId === entity && p.change.kind === 'pii_tag' && p.change.column === column);

/** A digest of every file under `dir` (names and bytes): equal exactly when nothing there was written. */
function treeDigest(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else
        h.update(`${path.relative(dir, p)}\u0000`)
          .update(readFileSync(p))
          .update('\u0000');
    }
  };
  if (existsSync(dir)) walk(dir);
  return h.digest('hex');
}

/** Every file under `dir` as text. */
function allText(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(readFileSync(p, 'latin1'));
    }
  };
  walk(dir);
  return out.join('\n');
}

const showTmpDirs = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith('argus-dbt-show-'));

describe('a sweep with sampleValues', () => {
  let plain: SweepReport;
  let sampled: SweepReport;
  let history: string;
  let plainCalls: number;
  let sampledCalls: ReturnType<CountingDbt['calls']>;
  let projectBefore: { target: string; logs: string };

  beforeAll(async () => {
    plain = await w.client.workflow.execute('sweepWorkflow', {
      taskQueue: w.tw.taskQueue,
      workflowId: uniqueId('sweep/dbt/unsampled'),
      args: [{ catalog: catalog(), dryRun: true }],
    });
    plainCalls = dbt.calls().length;
    projectBefore = {
      target: treeDigest(path.join(shop.dir, 'target')),
      logs: treeDigest(path.join(shop.dir, 'logs')),
    };
    const id = uniqueId('sweep/dbt/sampled');
    sampled = await w.client.workflow.execute('sweepWorkflow', {
      taskQueue: w.tw.taskQueue,
      workflowId: id,
      args: [{ catalog: catalog(), sampleValues: { rows: 20 } }],
    });
    sampledCalls = dbt.calls().slice(plainCalls);
    history = JSON.stringify(await w.client.workflow.getHandle(id).fetchHistory());
  });

  test('without it, dbt is never run and the opaque columns are left alone', () => {
    expect(plain.failures).toEqual([]);
    expect(plainCalls).toBe(0);
    expect(tagOf(plain, 'main.raw_contacts', 'c7')).toBeUndefined();
    expect(tagOf(plain, 'main.raw_contacts', 'c9')).toBeUndefined();
  });

  test('with it, the values tag the e-mail and the 19-digit card columns, and not the desk names', () => {
    expect(sampled.failures).toEqual([]);
    expect(tagOf(sampled, 'main.raw_contacts', 'c7')).toMatchObject({
      outcome: 'approved',
      written: true,
      change: { category: 'email' },
    });
    expect(tagOf(sampled, 'main.raw_contacts', 'c7')!.reason).toMatch(
      /20 of 20 values sampled in the worker look like/,
    );
    expect(tagOf(sampled, 'main.raw_contacts', 'c9')).toMatchObject({
      outcome: 'approved',
      change: { category: 'payment_card' },
    });
    expect(tagOf(sampled, 'main.raw_contacts', 'addressee')).toBeUndefined();
    // The premise of the card column: read as JSON numbers, the checksum would fail.
    expect(CARDS.every((c) => valuePattern(c) === 'card number (Luhn)')).toBe(true);
    expect(valueEvidence(CARDS.map((c) => String(Number(c))))).toBeUndefined();
  });

  test('a model never built gives no evidence and no failure; the refusal is logged by class only', () => {
    expect(sampledCalls.some((c) => c.inline.includes("ref('jaffle_shop', 'unbuilt_contacts')"))).toBe(true);
    expect(tagOf(sampled, 'main.unbuilt_contacts', 'c7')).toBeUndefined();
    expect(sampled.failures).toEqual([]);
    const refused = logs.filter(
      (l) => l.message.startsWith('value sampling refused') && l.meta?.entity === 'main.unbuilt_contacts',
    );
    expect(refused.map((l) => l.meta?.error)).toEqual(['CatalogError']);
  });

  test('one dbt process per table for the agent, all its undecided columns in it; the gate reads what it confirms', () => {
    expect(sampledCalls.every((c) => c.command === 'show')).toBe(true);
    const reads = sampledCalls.map((c) => ({
      table: /\{\{ ref\('jaffle_shop', '(\w+)'\) \}\}$/.exec(c.inline)?.[1],
      columns: (c.inline.match(/ as c\d+(?=,| from )/g) ?? []).length,
    }));
    // The agent: the tables with undecided columns, each once, every such column in its one query (raw_contacts:
    // c7, addressee, c9). Then the gate: its own sample of the columns value-grounded tags stand on, one read per
    // table (raw_contacts: c7 and c9 in one query).
    const agent = reads.slice(0, reads.length - 1);
    expect(new Set(agent.map((r) => r.table)).size).toBe(agent.length);
    expect(agent).toContainEqual({ table: 'raw_contacts', columns: 3 });
    expect(agent).toContainEqual({ table: 'unbuilt_contacts', columns: 1 });
    expect(agent.length).toBeGreaterThanOrEqual(5);
    expect(reads.slice(-1)).toEqual([{ table: 'raw_contacts', columns: 2 }]);
    const gateColumns = [...sampledCalls[sampledCalls.length - 1]!.inline.matchAll(/adapter\.quote\('(\w+)'\)/g)];
    expect(gateColumns.map((m) => m[1]).sort()).toEqual(['c7', 'c9']);
  });

  test('the values reach neither Temporal, the report, the state folder, the logs nor the project', () => {
    const texts = {
      history,
      report: JSON.stringify(sampled),
      reportFile: readFileSync(sampled.reportFile, 'utf8'),
      state: allText(w.tw.stateDir),
      logs: JSON.stringify(logs, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
      calls: JSON.stringify(sampledCalls),
    };
    for (const [where, text] of Object.entries(texts))
      for (const secret of SECRETS) expect({ where, found: text.includes(secret) }).toEqual({ where, found: false });
    // dbt wrote nothing into the project's target/ or logs/, and its temporary folders are gone.
    expect({
      target: treeDigest(path.join(shop.dir, 'target')),
      logs: treeDigest(path.join(shop.dir, 'logs')),
    }).toEqual(projectBefore);
    expect(showTmpDirs()).toEqual([]);
  });
});

describe('the adapter', () => {
  let adapter: DbtCatalogAdapter;
  const adapterWith = (limits?: { startMs: number; readMs: number }) =>
    new DbtCatalogAdapter(
      CatalogRef.parse(catalog()) as Extract<CatalogRef, { kind: 'dbt' }>,
      mkdtempSync(path.join(os.tmpdir(), 'argus-dbt-sampling-state-')),
      { env: { ...process.env, ARGUS_DBT: dbt.executable }, ...(limits ? { sampleLimits: limits } : {}) },
    );
  beforeAll(() => {
    adapter = adapterWith();
  });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => new Error('resolved'),
      (e: unknown) => e as Error,
    );

  test('odd names are quoted by the adapter, never read as Jinja or SQL', async () => {
    const sample = await adapter.sampleColumnValues('main.odd_names', ['Buyer E-Mail', 'Qty', "it's }} {{ x"], 5);
    expect([...sample.keys()]).toEqual(['Buyer E-Mail', 'Qty', "it's }} {{ x"]);
    expect([...sample.get('Buyer E-Mail')!].sort()).toEqual(['gil.odd@example.com', 'hal.odd@example.com']);
    expect([...sample.get("it's }} {{ x")!].sort()).toEqual(['hello', 'say "hi"']);
    expect([...sample.get('Qty')!].sort()).toEqual(['1', '2']);
  });

  test.each<[string, number, number]>([
    ['more than the cap', 1000, 100],
    ['a few', 7, 7],
  ])('rows: %s (%d) reads %d', async (_what, rows, expected) => {
    const sample = await adapter.sampleColumnValues('main.raw_payments', ['payment_method'], rows);
    expect(sample.get('payment_method')).toHaveLength(expected);
  });

  test('no rows, an unknown entity or an unknown column: no dbt run at all', async () => {
    const before = dbt.calls().length;
    expect((await adapter.sampleColumnValues('main.raw_payments', ['amount'], 0)).get('amount')).toEqual([]);
    const entity = await refusal(adapter.sampleColumnValues('main.nothing', ['x'], 5));
    expect(entity).toBeInstanceOf(CatalogError);
    expect(entity.message).toMatch(/no model, seed, snapshot or source main\.nothing to sample/);
    const column = await refusal(adapter.sampleColumnValues('main.raw_contacts', ['c7', 'nope'], 5));
    expect(column).toBeInstanceOf(CatalogError);
    expect(column.message).toMatch(/main\.raw_contacts has no column "nope" to sample/);
    expect(dbt.calls().length).toBe(before);
  });

  test('a read past its time limit is stopped, and the error quotes nothing dbt printed', async () => {
    const quick = adapterWith({ startMs: 60_000, readMs: 1 });
    const started = Date.now();
    const err = await refusal(quick.sampleColumnValues('main.raw_contacts', ['c7'], 20));
    expect(err).toBeInstanceOf(CatalogError);
    expect(err.message).toMatch(/sampling main\.raw_contacts: the read took longer than 1 ms and was stopped/);
    expect(Date.now() - started).toBeLessThan(30_000);
    const slowStart = await refusal(
      adapterWith({ startMs: 1, readMs: 1 }).sampleColumnValues('main.raw_contacts', ['c7'], 20),
    );
    expect(slowStart.message).toMatch(/dbt took longer than 2 ms and was stopped/);
    // Afterwards the database is not left locked: the next sample reads.
    expect((await adapter.sampleColumnValues('main.raw_contacts', ['c7'], 20)).get('c7')).toHaveLength(20);
    expect(showTmpDirs()).toEqual([]);
  });
});
