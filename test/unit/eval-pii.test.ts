import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  EvalInputError,
  evaluatePiiFolder,
  main,
  renderEvaluationText,
  stewardMeasure,
  type PiiEvaluation,
} from '../../eval/pii';
import { convertPublicSchema, PublicSchemaFormatError } from '../../eval/public-schema';
import { CatalogFile } from '../../domain/catalog';

const ROOT = resolve(__dirname, '..', '..');
const PUBLIC = resolve(ROOT, '..', 'shared', 'testdata', 'public-schemas');
const HOLDOUT = resolve(ROOT, 'test', 'fixtures', 'pii-holdout');
const HOLDOUT_FILE = join(HOLDOUT, 'riverside-clinic.json');

interface RawColumn {
  name: string;
  pii?: boolean;
  ambiguous?: boolean;
  [k: string]: unknown;
}
interface RawFile {
  tables: Array<{ name: string; columns: RawColumn[]; [k: string]: unknown }>;
  [k: string]: unknown;
}

const readRaw = (path: string): RawFile => JSON.parse(readFileSync(path, 'utf8')) as RawFile;

function stripLabels(file: RawFile): RawFile {
  return {
    ...file,
    tables: file.tables.map((t) => ({
      ...t,
      columns: t.columns.map((c) => {
        const { pii: _p, category: _c, ambiguous: _a, note: _n, ...rest } = c;
        return rest as RawColumn;
      }),
    })),
  };
}

describe('convertPublicSchema', () => {
  const raw = readRaw(join(PUBLIC, 'northwind.json'));
  const { catalog, labels } = convertPublicSchema(raw, 'northwind.json');

  test('produces a valid argus-catalog v1 file with one entity per table, id = table name', () => {
    expect(CatalogFile.parse(catalog)).toEqual(catalog);
    expect(catalog.format).toBe('argus-catalog');
    expect(catalog.version).toBe(1);
    expect(catalog.entities.map((e) => e.id)).toEqual(raw.tables.map((t) => t.name));
    const views = catalog.entities.filter((e) => e.kind === 'view');
    expect(views.length).toBe(raw.tables.filter((t) => t.kind === 'view').length);
    expect(views.every((v) => v.upstream.length > 0)).toBe(true);
  });

  test('labels every labelled column under table.column and drops label fields from the catalog', () => {
    const labelled = raw.tables.flatMap((t) =>
      t.columns.filter((c) => typeof c.pii === 'boolean').map((c) => `${t.name}.${c.name}`),
    );
    expect([...labels.keys()].sort()).toEqual([...new Set(labelled)].sort());
    expect(labels.get('Employees.BirthDate')).toEqual({ pii: true, category: 'birth_date', ambiguous: false });
    expect(labels.get('Customers.Phone')).toMatchObject({ pii: false, ambiguous: true });
    for (const entity of catalog.entities) {
      for (const column of entity.columns) {
        for (const key of ['pii', 'category', 'ambiguous', 'note', 'source_columns', 'expression']) {
          expect(column).not.toHaveProperty(key);
        }
      }
    }
  });

  test('keeps annotated types such as "varchar (literal)" as strings', () => {
    const view = catalog.entities.find((e) => e.id === 'Customer and Suppliers by City');
    expect(view?.columns.find((c) => c.name === 'Relationship')?.type).toBe('varchar (literal)');
  });

  test('keeps keys and foreign keys', () => {
    const orders = catalog.entities.find((e) => e.id === 'Orders');
    expect(orders?.columns.find((c) => c.name === 'OrderID')?.primary_key).toBe(true);
    expect(orders?.columns.find((c) => c.name === 'CustomerID')?.foreign_key).toBe('Customers.CustomerID');
  });

  test('an unlabelled file converts with an empty label map', () => {
    const result = convertPublicSchema(stripLabels(readRaw(HOLDOUT_FILE)), 'plain.json');
    expect(result.labels.size).toBe(0);
    expect(result.catalog.entities.length).toBeGreaterThan(0);
  });

  test.each<[string, unknown]>([
    ['not an object', 42],
    ['no tables', { database: 'x', tables: [] }],
    ['a column without a type', { database: 'x', tables: [{ name: 't', kind: 'table', columns: [{ name: 'a' }] }] }],
    [
      'an unknown kind',
      { database: 'x', tables: [{ name: 't', kind: 'index', columns: [{ name: 'a', type: 'int' }] }] },
    ],
    [
      'a duplicate table',
      {
        database: 'x',
        tables: [
          { name: 't', kind: 'table', columns: [{ name: 'a', type: 'int' }] },
          { name: 't', kind: 'table', columns: [{ name: 'b', type: 'int' }] },
        ],
      },
    ],
  ])('rejects %s with a message naming the file', (_what, json) => {
    expect(() => convertPublicSchema(json, 'bad.json')).toThrow(PublicSchemaFormatError);
    expect(() => convertPublicSchema(json, 'bad.json')).toThrow(/^bad\.json: /);
  });
});

describe('evaluatePiiFolder', () => {
  test('public schemas: precision and recall at least 0.9 over the non-ambiguous labelled columns', () => {
    const result = evaluatePiiFolder(PUBLIC);
    const names = ['chinook.json', 'employees.json', 'northwind.json'];
    const raws = names.map((n) => readRaw(join(PUBLIC, n)));
    const expectedScored = raws
      .flatMap((r) => r.tables.flatMap((t) => t.columns))
      .filter((c) => typeof c.pii === 'boolean' && !c.ambiguous).length;
    const expectedColumns = raws.flatMap((r) => r.tables.flatMap((t) => t.columns)).length;
    expect(result.files.map((f) => f.file)).toEqual(names);
    expect(result.scored).toBe(expectedScored);
    expect(result.columns.length).toBe(expectedColumns);
    expect(result.tp + result.fp + result.fn + result.tn).toBe(result.scored);
    expect(result.precision).toBeGreaterThanOrEqual(0.9);
    expect(result.recall).toBeGreaterThanOrEqual(0.9);
  });

  test('the figures agree with the per-column verdicts and labels', () => {
    const result = evaluatePiiFolder(PUBLIC);
    const scored = result.columns.filter((c) => c.scored);
    const tp = scored.filter((c) => c.pii && c.label?.pii).length;
    const fp = scored.filter((c) => c.pii && !c.label?.pii).length;
    const fn = scored.filter((c) => !c.pii && c.label?.pii).length;
    expect(result.precision).toBeCloseTo(tp / (tp + fp), 10);
    expect(result.recall).toBeCloseTo(tp / (tp + fn), 10);
    for (const f of result.files) {
      const mine = scored.filter((c) => c.file === f.file);
      expect(f.scored).toBe(mine.length);
      expect(f.tp).toBe(mine.filter((c) => c.pii && c.label?.pii).length);
    }
    expect(result.columns.filter((c) => c.label?.ambiguous).every((c) => !c.scored)).toBe(true);
  });

  test('hold-out schema written for ARGUS: precision and recall at least 0.9', () => {
    const result = evaluatePiiFolder(HOLDOUT);
    expect(result.scored).toBeGreaterThanOrEqual(40);
    expect(result.precision).toBeGreaterThanOrEqual(0.9);
    expect(result.recall).toBeGreaterThanOrEqual(0.9);
  });

  describe('with an unlabelled file beside a labelled one', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'argus-eval-pii-'));
      writeFileSync(join(dir, 'a-labelled.json'), readFileSync(HOLDOUT_FILE));
      writeFileSync(join(dir, 'b-unlabelled.json'), JSON.stringify(stripLabels(readRaw(HOLDOUT_FILE))));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('classifies the unlabelled file but does not score it', () => {
      const both = evaluatePiiFolder(dir);
      const alone = evaluatePiiFolder(HOLDOUT);
      const unlabelled = both.columns.filter((c) => c.file === 'b-unlabelled.json');
      const total = readRaw(HOLDOUT_FILE).tables.flatMap((t) => t.columns).length;
      expect(unlabelled.length).toBe(total);
      expect(unlabelled.every((c) => c.label === null && !c.scored)).toBe(true);
      expect(unlabelled.some((c) => c.pii)).toBe(true);
      expect(both.files.find((f) => f.file === 'b-unlabelled.json')).toMatchObject({
        labelled: false,
        scored: 0,
        precision: null,
        recall: null,
      });
      expect(both.scored).toBe(alone.scored);
      expect(both.precision).toBe(alone.precision);
      expect(both.recall).toBe(alone.recall);
    });
  });

  describe('bad input', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'argus-eval-pii-bad-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    test('a missing folder', () => {
      expect(() => evaluatePiiFolder(join(dir, 'nope'))).toThrow(EvalInputError);
    });
    test('a folder without json files', () => {
      writeFileSync(join(dir, 'readme.txt'), 'hello');
      expect(() => evaluatePiiFolder(dir)).toThrow(/no \*\.json files/);
    });
    test('a file that is not JSON', () => {
      writeFileSync(join(dir, 'broken.json'), '{"database": ');
      expect(() => evaluatePiiFolder(dir)).toThrow(/broken\.json: not readable JSON/);
    });
    test('a JSON file in the wrong shape', () => {
      writeFileSync(join(dir, 'other.json'), JSON.stringify({ hello: 'world' }));
      expect(() => evaluatePiiFolder(dir)).toThrow(EvalInputError);
    });
  });
});

describe('eval:pii command', () => {
  let out: string[];
  let err: string[];
  beforeEach(() => {
    out = [];
    err = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err.push(String(chunk));
      return true;
    });
  });
  afterEach(() => jest.restoreAllMocks());

  test('--json prints one JSON object with the figures and every column', async () => {
    const code = await main([PUBLIC, '--json']);
    expect(code).toBe(0);
    const printed = JSON.parse(out.join('')) as Record<string, unknown>;
    const direct = evaluatePiiFolder(PUBLIC);
    expect(printed.precision).toBe(direct.precision);
    expect(printed.recall).toBe(direct.recall);
    expect(printed.scored).toBe(direct.scored);
    expect(Array.isArray(printed.files) && printed.files.length).toBe(3);
    const columns = printed.columns as Array<Record<string, unknown>>;
    expect(columns.length).toBe(direct.columns.length);
    expect(Object.keys(columns[0] ?? {})).toEqual(
      expect.arrayContaining(['file', 'table', 'column', 'pii', 'category', 'confidence']),
    );
  });

  test('without --json prints per-file figures and the misclassified columns', async () => {
    const code = await main([PUBLIC]);
    expect(code).toBe(0);
    const text = out.join('');
    expect(text).toBe(`${renderEvaluationText(evaluatePiiFolder(PUBLIC))}\n`);
    for (const f of ['chinook.json', 'employees.json', 'northwind.json']) expect(text).toContain(f);
    const wrong = evaluatePiiFolder(PUBLIC).columns.filter((c) => c.scored && c.label?.pii !== c.pii);
    for (const c of wrong) expect(text).toContain(`${c.table}.${c.column}`);
  });

  test('exits 2 with a message on a missing folder', async () => {
    const code = await main(['/definitely/not/here', '--json']);
    expect(code).toBe(2);
    expect(out.join('')).toBe('');
    expect(err.join('')).toMatch(/folder not found/);
  });

  test('runs as a script: exit code and stdout', () => {
    const run = (args: string[]) =>
      spawnSync(process.execPath, [join(ROOT, 'scripts', 'run-ts.js'), 'eval/pii.ts', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    // The public report is larger than a pipe buffer: the whole object must arrive before the exit.
    const ok = run([PUBLIC, '--json']);
    expect(ok.status).toBe(0);
    expect((JSON.parse(ok.stdout) as { scored: number }).scored).toBe(evaluatePiiFolder(PUBLIC).scored);
    const missing = run(['/definitely/not/here']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/eval:pii: folder not found/);
  }, 60_000);
});

describe('hold-out for counts, flags, machine addresses and business contacts', () => {
  // In a folder of its own: the tests above treat HOLDOUT as riverside-clinic.json alone.
  test('lanternfish/: precision and recall at least 0.95, types mostly unknown', () => {
    const result = evaluatePiiFolder(join(HOLDOUT, 'lanternfish'));
    expect(result.scored).toBeGreaterThanOrEqual(40);
    expect(result.precision).toBeGreaterThanOrEqual(0.95);
    expect(result.recall).toBeGreaterThanOrEqual(0.95);
  });
});

describe('the steward measure: each shape decided once, by its label, per file', () => {
  const col = (file: string, table: string, column: string, pii: boolean, labelPii: boolean) =>
    ({
      file,
      table,
      column,
      pii,
      category: 'person_name',
      confidence: 0.9,
      explanation: 'x',
      reading: 'thing',
      label: { pii: labelPii, ambiguous: false },
      scored: true,
    }) as unknown as PiiEvaluation['columns'][number];
  const evaluation = (columns: PiiEvaluation['columns']) => ({ columns }) as unknown as PiiEvaluation;

  test("a rejected shape takes its kind out of what is left; an approved one stays; another file's is its own", () => {
    const m = stewardMeasure(
      evaluation([
        col('a.json', 't1', 'first_name', true, false), // decided: rejected
        col('a.json', 't2', 'FirstName', true, false), // same shape: rejected by shape
        col('a.json', 't3', 'first-name', true, true), // same shape, but PII: lost
        col('a.json', 't4', 'last_name', true, true), // decided: approved
        col('a.json', 't5', 'last_name', true, true), // left, true
        col('b.json', 't1', 'first_name', true, true), // another catalog: decided afresh
        col('b.json', 't2', 'first_name', true, true), // left, true
        col('a.json', 't6', 'nickname', false, true), // not proposed
      ]),
    );
    expect(m).toEqual({
      proposals: 7,
      precisionBefore: 5 / 7,
      decided: 3,
      rejectedByShape: 2,
      remaining: 2,
      precisionRemaining: 1,
      truePiiLost: 1,
    });
  });
});
