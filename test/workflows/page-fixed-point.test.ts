import * as path from 'node:path';
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
import { SK } from '../support/fake-secrets';
import { judgedByPass } from '../support/incremental';
import { fileStateStore } from '../../state/file/store';

// One pass per page (pageFixedPoint, the default) against the old way (every agent at once, a later pass for what
// the writes changed): the same catalog at the end, fewer entities judged again. On a real dev server, and for
// model mode a loopback provider.
const KEY_ENV = 'ARGUS_TEST_FAKE_KEY';
const w = useArgusWorker('tq-page-fixed-point', { ...process.env, [KEY_ENV]: `${SK}test-not-a-real-key-123456` });
let fp: FakeProvider;
beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
});
afterAll(async () => {
  await fp?.close();
});

const copy = (name: string) => copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'page-fixed-point', name));
const sweepFile = (file: string, extra: Record<string, unknown> = {}) =>
  runSweep(w, { catalog: { kind: 'file', path: file }, ...extra }, 'sweep/page-fixed-point');

/**
 * What a user reads of the catalog after a sweep: every description with its source, every column tag's kind,
 * category and source, the recorded lineage. Not the tag's wording or confidence, which name the evidence a pass read.
 */
function contentOf(file: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of readCatalog(file).entities) {
    const tags = (t: { kind: string; category?: string; source?: string }[] | undefined) =>
      (t ?? []).map((x) => `${x.kind}/${x.category ?? ''}/${x.source ?? ''}`).sort();
    out[e.id] = {
      description: e.description ?? null,
      source: e.description_source ?? null,
      upstream: [...(e.upstream ?? [])].sort(),
      columns: e.columns.map((c) => ({
        name: c.name,
        description: c.description ?? null,
        source: c.description_source ?? null,
        tags: tags(c.tags),
      })),
    };
  }
  return out;
}

/** The repairs a sweep wrote, as entity, kind and change (proposal ids name the pass that proposed them). */
const writtenOf = (r: SweepReport) =>
  r.proposals
    .filter((p) => p.written)
    .map((p) => {
      const { ...change } = p.change as unknown as Record<string, unknown>;
      delete change.confidence;
      delete change.explanation;
      return `${p.entityId} ${p.kind} ${JSON.stringify(change, Object.keys(change).sort())}`;
    })
    .sort();

async function compare(
  name: string,
  input: Record<string, unknown>,
  trim?: number,
  off: Record<string, unknown> = input,
) {
  const onFile = copy(`${name}-on`);
  const offFile = copy(`${name}-off`);
  if (trim)
    for (const f of [onFile, offFile]) {
      const c = readCatalog(f);
      c.entities = c.entities.slice(0, trim);
      writeCatalog(f, c);
    }
  const a = await sweepFile(onFile, input);
  const b = await sweepFile(offFile, { ...off, pageFixedPoint: false });
  return { on: onFile, off: offFile, a, b };
}

/** `content` without the descriptions of `ids` (entities whose own lineage the sweep repaired). */
function withoutDescriptionsOf(content: Record<string, unknown>, ids: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [id, v] of Object.entries(content))
    out[id] = ids.has(id) ? { ...(v as Record<string, unknown>), description: '(repaired lineage)' } : v;
  return out;
}

describe('one pass per page reaches the fixed point the passes reached', () => {
  test('rules, the demo on one page: the fixed point in one pass, the same catalog as every agent at once', async () => {
    const { on, off, a, b } = await compare('rules-one-page', {});
    expect(a.partial).toBe(false);
    expect(a.written).toBeGreaterThan(100);
    expect(contentOf(on)).toEqual(contentOf(off));
    expect(writtenOf(a)).toEqual(writtenOf(b));
    // The old way needed a second pass for what its first wrote; the page's parts left nothing for one.
    expect(b.incremental!.rounds).toBeGreaterThan(1);
    expect(b.incremental!.rejudged).toBeGreaterThan(0);
    expect(a.incremental).toMatchObject({ rounds: 1, rejudged: 0, crossPageRejudged: 0, unsettled: 0 });
    // Nothing more for a next night.
    const again = await sweepFile(on);
    expect(again.written).toBe(0);
    expect(again.incremental!.judged).toBe(0);
  });

  test("rules, pages of ten: the same catalog, a later pass only for readers of another page's repairs", async () => {
    const { on, off, a, b } = await compare('rules-pages', { pageSize: 10 });
    expect(a.partial).toBe(false);
    expect(b.partial).toBe(false);
    expect(contentOf(on)).toEqual(contentOf(off));
    expect(writtenOf(a)).toEqual(writtenOf(b));
    expect(a.incremental!.rejudged).toBeGreaterThan(0);
    expect(a.incremental!.rejudged).toBeLessThan(b.incremental!.rejudged);
    expect(a.incremental!.crossPageRejudged).toBeGreaterThan(0);
    expect(a.incremental!.crossPageRejudged).toBeLessThanOrEqual(a.incremental!.rejudged);
    expect(a.incremental!.unsettled).toBe(0);
    const passes = await judgedByPass(fileStateStore(w.tw.stateDir), a.sweepId);
    expect(passes[0]).toHaveLength(69);
    const again = await sweepFile(on, { pageSize: 10 });
    expect(again.written).toBe(0);
    expect(again.incremental!.judged).toBe(0);
  });

  test('model agents and model review: the same repairs, fewer model calls; a repaired entity is described as repaired', async () => {
    const endpoint: EndpointConfig = {
      id: 'fake',
      baseUrl: fp.baseUrl('ok', 'correct'),
      model: 'fake-model',
      apiKeyEnv: KEY_ENV,
      structuredOutput: 'json_schema',
      maxOutputTokens: 900,
      timeoutMs: 10000,
      maxInFlight: 2,
    };
    const input = { review: 'model', agentBackend: 'model', endpoints: [endpoint] };
    // Another model name for the old way: the answers the first sweep remembered are not reused by the second.
    const other = { ...input, endpoints: [{ ...endpoint, model: 'fake-model-b' }] };
    const { on, off, a, b } = await compare('model', input, 30, other);
    expect(a.partial).toBe(false);
    expect(b.partial).toBe(false);
    expect(a.written).toBeGreaterThan(0);
    // The one difference: the drafter of a page reads its repaired lineage, where the old way described an entity
    // before its repair (and its later pass drafts only what is missing).
    const repaired = new Set(a.proposals.filter((p) => p.written && p.kind === 'lineage_flag').map((p) => p.entityId));
    expect(repaired.size).toBeGreaterThan(0);
    expect(withoutDescriptionsOf(contentOf(on), repaired)).toEqual(withoutDescriptionsOf(contentOf(off), repaired));
    const kinds = (r: SweepReport) =>
      writtenOf(r).filter((x) => !/ description /.test(x) || !repaired.has(x.split(' ')[0]!));
    expect(kinds(a)).toEqual(kinds(b));
    expect(a.written).toBe(b.written);
    expect(a.incremental!.rejudged).toBeLessThan(b.incremental!.rejudged);
    expect(a.modelUsage.byAgent['pii-classifier']!.calls).toBeLessThan(b.modelUsage.byAgent['pii-classifier']!.calls);
    const again = await sweepFile(on, input);
    expect(again.modelUsage.calls).toBe(0);
    expect(again.written).toBe(0);
  });

  test('a dry run writes nothing in between: every agent runs at once, in one pass, as before', async () => {
    const { a, b } = await compare('dry-run', { dryRun: true });
    expect(a.incremental!.rounds).toBe(1);
    expect(b.incremental!.rounds).toBe(1);
    expect(a.outcomes).toEqual(b.outcomes);
  });
});
