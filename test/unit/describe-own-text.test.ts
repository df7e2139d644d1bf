import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CatalogFile, type CatalogEntity } from '../../domain/catalog';
import type { ProposalChange } from '../../domain/proposal';
import { proposeBatchWithModel } from '../../activities/model/model-agents';
import type { BatchItem } from '../../activities/model/model-review';
import { createCatalogContext } from '../../judgment/catalog-context';
import type { Neighbours } from '../../judgment/description-evidence';
import type { EndpointSpec, TokenCount } from '../../llm/client';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { fileAnswers } from '../../state/file/answers';

// After an upgrade, an entity whose only change since its describe answer is what ARGUS wrote from that answer asks
// the model nothing new: its remaining drafts come from the answer kept under its evidence view. A person's text, or
// a target the kept answer was not asked for, is a new request. On the real loopback fake provider.

const ROOT = path.resolve(__dirname, '..', '..');
const demo = CatalogFile.parse(JSON.parse(readFileSync(path.join(ROOT, 'catalog/demo/shop-warehouse.json'), 'utf8')));
const ctx = createCatalogContext(demo.entities.map((e) => e.id));
const byId = new Map(demo.entities.map((e) => [e.id, e]));
const neighbours: Neighbours = { get: (id) => byId.get(id) };
// A view with SQL: every undescribed column is something to describe, and so is its table.
const VIEW = 'staging.stg_refunds';

let fp: FakeProvider;
beforeAll(async () => {
  fp = await startFakeProvider();
});
afterAll(() => fp.close());
beforeEach(() => fp.reset());

const endpoint = (): EndpointSpec => ({
  id: 'fake-ok',
  baseUrl: fp.baseUrl('ok', 'correct'),
  model: 'argus-fake',
  structuredOutput: 'json_schema',
  maxOutputTokens: 4000,
  timeoutMs: 10_000,
});
const sent = () => fp.stats()[fp.endpointKey('ok', 'correct')]?.answered ?? 0;
const copy = (e: CatalogEntity): CatalogEntity => JSON.parse(JSON.stringify(e)) as CatalogEntity;

async function draft(entity: CatalogEntity, answers: ReturnType<typeof fileAnswers>, usage: TokenCount[] = []) {
  const item: BatchItem = { entity, neighbours };
  const r = await proposeBatchWithModel('description-drafter', [item], ctx, {
    endpoint: endpoint(),
    answers,
    onUsage: (t) => usage.push(t),
  });
  expect(r.missing).toEqual([]);
  return r.byEntity.get(entity.id) ?? [];
}

/** The entity with `changes` written as ARGUS (or `source`) writes them. */
function written(e: CatalogEntity, changes: ProposalChange[], source: 'argus' | 'human' = 'argus'): CatalogEntity {
  const out = copy(e);
  for (const c of changes) {
    if (c.kind !== 'description') continue;
    const holder = c.target === 'table' ? out : out.columns.find((x) => x.name === c.column)!;
    holder.description = c.text;
    holder.description_source = source;
  }
  return out;
}

describe("describe answers and ARGUS's own text", () => {
  test('with only its own table description written since, the entity is answered from memory: the column drafts again, no call', async () => {
    const answers = fileAnswers(mkdtempSync(path.join(os.tmpdir(), 'own-text-')));
    const entity = copy(byId.get(VIEW)!);
    const first = await draft(entity, answers);
    expect(sent()).toBe(1);
    const table = first.filter((c) => c.kind === 'description' && c.target === 'table');
    const columns = first.filter((c) => c.kind === 'description' && c.target === 'column');
    expect(table).toHaveLength(1);
    expect(columns.length).toBeGreaterThan(2);

    // The Arbiter approved the table's draft and rejected the columns': the table's is written, as ARGUS's.
    const usage: TokenCount[] = [];
    const after = await draft(written(entity, table), answers, usage);
    expect(sent()).toBe(1);
    expect(after).toEqual(columns);
    expect(usage.map((u) => u.remembered)).toEqual([true]);

    // Two of the column drafts written as well: the rest, still from the same answer.
    const more = written(written(entity, table), columns.slice(0, 2));
    expect(await draft(more, answers)).toEqual(columns.slice(2));
    expect(sent()).toBe(1);
  });

  test('asked with text of ARGUS already on it, the answer is kept aside under its view: ARGUS writing more asks nothing', async () => {
    const answers = fileAnswers(mkdtempSync(path.join(os.tmpdir(), 'own-text-')));
    const base = copy(byId.get(VIEW)!);
    const column = base.columns.find((c) => !c.description)!;
    const earlier = written(base, [{ kind: 'description', target: 'column', column: column.name, text: 'Refund id.' }]);
    const first = await draft(earlier, answers);
    expect(sent()).toBe(1);
    const table = first.filter((c) => c.kind === 'description' && c.target === 'table');
    expect(table).toHaveLength(1);
    const usage: TokenCount[] = [];
    const after = await draft(written(earlier, table), answers, usage);
    expect(sent()).toBe(1);
    expect(after).toEqual(first.filter((c) => c.kind === 'description' && c.target === 'column'));
    expect(usage.map((u) => u.remembered)).toEqual([true]);
  });

  test("a person's description is evidence: the same text written by a person makes a new request", async () => {
    const answers = fileAnswers(mkdtempSync(path.join(os.tmpdir(), 'own-text-')));
    const entity = copy(byId.get(VIEW)!);
    const first = await draft(entity, answers);
    const table = first.filter((c) => c.kind === 'description' && c.target === 'table');
    await draft(written(entity, table, 'human'), answers);
    expect(sent()).toBe(2);
  });

  test('a target the kept answer was not asked for is asked: a column whose ARGUS text a person removed', async () => {
    const answers = fileAnswers(mkdtempSync(path.join(os.tmpdir(), 'own-text-')));
    const base = copy(byId.get(VIEW)!);
    const column = base.columns.find((c) => !c.description)!;
    // First asked with that column already described by ARGUS: the answer has no draft for it.
    const described = written(base, [
      { kind: 'description', target: 'column', column: column.name, text: 'Refund id.' },
    ]);
    const first = await draft(described, answers);
    expect(first.some((c) => c.kind === 'description' && c.target === 'column' && c.column === column.name)).toBe(
      false,
    );
    expect(sent()).toBe(1);
    // Then a person removed that text, and ARGUS wrote the table's: the same evidence view, a wider question.
    const table = first.filter((c) => c.kind === 'description' && c.target === 'table');
    const now = await draft(written(base, table), answers);
    expect(sent()).toBe(2);
    expect(now.some((c) => c.kind === 'description' && c.target === 'column' && c.column === column.name)).toBe(true);
  });
});
