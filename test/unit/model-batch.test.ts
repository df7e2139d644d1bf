import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { CatalogFile, type CatalogEntity } from '../../domain/catalog';
import { proposalId } from '../../domain/digest';
import {
  fromWire,
  MODEL_BATCH_OUTPUT_SCHEMAS,
  toWire,
  WireEvidence,
  type EntityEvidence,
  type ModelTask,
} from '../../domain/model-io';
import type { AgentName, Outcome, ProposalChange } from '../../domain/proposal';
import {
  AGENT_TASK,
  batchEntities,
  estimateEntityTokens,
  needsModelCall,
  proposeBatchWithModel,
  proposeWithModel,
  type EntityCost,
} from '../../activities/model/model-agents';
import {
  agentEvidence,
  describeTargets,
  entityEvidence,
  knownNear,
  proposalForReview,
  reviewBatchWithModel,
  reviewWithModel,
  type BatchItem,
} from '../../activities/model/model-review';
import { createCatalogContext } from '../../judgment/catalog-context';
import { descriptionFacts, type Neighbours } from '../../judgment/description-evidence';
import { estimateTokens, type EndpointSpec, type TokenCount } from '../../llm/client';
import { ProviderError } from '../../llm/errors';
import { answerTask, extractTask, FAKE_REVIEWERS, type FakeReviewer } from '../../fakes/model';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { BATCH_SYSTEM_PROMPTS, EVIDENCE_DEFAULTS, SYSTEM_PROMPTS } from '../../llm/prompts';

// Batched model calls against the real loopback fake provider: several entities per call must give exactly
// what one call per entity gives, and a bad or missing item costs only its own entity.

const ROOT = path.resolve(__dirname, '..', '..');
const demo = CatalogFile.parse(JSON.parse(readFileSync(path.join(ROOT, 'catalog/demo/shop-warehouse.json'), 'utf8')));
const entities: CatalogEntity[] = demo.entities;
const ctx = createCatalogContext(entities.map((e) => e.id));
const byId = new Map(entities.map((e) => [e.id, e]));
const neighbours: Neighbours = { get: (id) => byId.get(id) };
const items: BatchItem[] = entities.map((entity) => ({ entity, neighbours }));
const AGENTS: AgentName[] = ['description-drafter', 'pii-classifier', 'lineage-checker'];
const LIMITS = { maxEntities: 8, promptTokens: 6000, outputTokens: 3000 };

let fp: FakeProvider;
beforeAll(async () => {
  fp = await startFakeProvider();
});
afterAll(async () => {
  await fp.close();
});
beforeEach(() => fp.reset());

const endpoint = (scenario: string, reviewer: FakeReviewer = 'correct'): EndpointSpec => ({
  id: `fake-${scenario}-${reviewer}`,
  baseUrl: fp.baseUrl(scenario, reviewer),
  model: 'argus-fake',
  structuredOutput: 'json_schema',
  maxOutputTokens: 4000,
  timeoutMs: 10_000,
});
const answered = (scenario: string, reviewer: FakeReviewer = 'correct') =>
  fp.stats()[fp.endpointKey(scenario, reviewer)]?.answered ?? 0;

async function singles(agent: AgentName, list: BatchItem[], ep: EndpointSpec): Promise<Map<string, ProposalChange[]>> {
  const out = new Map<string, ProposalChange[]>();
  for (const i of list)
    out.set(i.entity.id, await proposeWithModel(agent, i.entity, ctx, { endpoint: ep }, i.neighbours));
  return out;
}

/** `n` demo entities that each need a call of the agent. */
const needing = (agent: AgentName, n: number, from = 0): BatchItem[] =>
  items.filter((i) => needsModelCall(agent, i.entity, ctx, i.neighbours)).slice(from, from + n);

describe('proposeBatchWithModel on the demo catalog', () => {
  test.each(AGENTS)('%s: batched proposals equal the union of single-entity proposals', async (agent) => {
    const ep = endpoint('ok');
    const single = await singles(agent, items, ep);
    const singleCalls = answered('ok');
    expect(singleCalls).toBe(items.filter((i) => needsModelCall(agent, i.entity, ctx, i.neighbours)).length);

    const batches = batchEntities(items, (i) => estimateEntityTokens(agent, i.entity, ctx, i.neighbours), LIMITS);
    const batched = new Map<string, ProposalChange[]>();
    for (const b of batches) {
      const r = await proposeBatchWithModel(agent, b, ctx, { endpoint: ep });
      expect(r.missing).toEqual([]);
      expect([...r.byEntity.keys()]).toEqual(b.map((i) => i.entity.id));
      for (const [id, changes] of r.byEntity) batched.set(id, changes);
    }
    expect(Object.fromEntries(batched)).toEqual(Object.fromEntries(single));
    expect([...single.values()].flat().length).toBeGreaterThan(0);
    const batchCalls = answered('ok') - singleCalls;
    expect(batchCalls).toBeLessThanOrEqual(batches.length);
    expect(batchCalls).toBeLessThan(singleCalls / 3);
  });

  test('entities with nothing to ask are not sent: an empty list, not missing, and no call at all', async () => {
    const described = items.find((i) => !needsModelCall('lineage-checker', i.entity, ctx))!;
    const r = await proposeBatchWithModel('lineage-checker', [described, described], ctx, { endpoint: endpoint('ok') });
    expect(r).toEqual({ byEntity: new Map([[described.entity.id, []]]), missing: [], reserved: 0 });
    expect(answered('ok')).toBe(0);
  });

  test.each(AGENTS)('%s: batch-drop-last leaves only the dropped entity missing', async (agent) => {
    const four = needing(agent, 4, 10);
    const want = await singles(agent, four, endpoint('ok'));
    const r = await proposeBatchWithModel(agent, four, ctx, { endpoint: endpoint('batch-drop-last') });
    const last = four[3]!.entity.id;
    expect(r.missing).toEqual([last]);
    expect(r.byEntity.has(last)).toBe(false);
    want.delete(last);
    expect(Object.fromEntries(r.byEntity)).toEqual(Object.fromEntries(want));
  });

  test.each(AGENTS)('%s: batch-bad-item leaves only the spoilt entity missing', async (agent) => {
    const three = needing(agent, 3, 20);
    const want = await singles(agent, three, endpoint('ok'));
    const r = await proposeBatchWithModel(agent, three, ctx, { endpoint: endpoint('batch-bad-item') });
    const last = three[2]!.entity.id;
    expect(r.missing).toEqual([last]);
    want.delete(last);
    expect(Object.fromEntries(r.byEntity)).toEqual(Object.fromEntries(want));
  });

  test.each(AGENTS)('%s: an answer cut off at max_tokens keeps the entities it answered in full', async (agent) => {
    const six = needing(agent, 6);
    const want = await singles(agent, six, endpoint('ok'));
    // Room for the first two of the six answers: the provider stops mid-JSON, as a real one does at max_tokens.
    const task = {
      argusTask: AGENT_TASK[agent],
      entities: six.map((i) => agentEvidence(AGENT_TASK[agent], i.entity, ctx, i.neighbours)),
    } as ModelTask;
    const answerItems = (answerTask(task, 'correct') as { entities: unknown[] }).entities;
    const endOfSecond = '{"entities":['.length + JSON.stringify(answerItems.slice(0, 2)).length - 1;
    const short = { ...endpoint('ok'), maxOutputTokens: Math.ceil(endOfSecond / 4) };
    const used: TokenCount[] = [];
    const r = await proposeBatchWithModel(agent, six, ctx, { endpoint: short, onUsage: (t) => used.push(t) });
    expect(r.cutShort).toBe(true);
    expect(used).toHaveLength(1);
    expect(used[0]!.completionTokens).toBeLessThanOrEqual(short.maxOutputTokens);
    // What came back is a prefix in full, the rest missing: never a half-answered entity given a default.
    const kept = [...r.byEntity.keys()];
    expect(kept).toHaveLength(2);
    expect(kept).toEqual(six.slice(0, kept.length).map((i) => i.entity.id));
    expect(r.missing).toEqual(six.slice(kept.length).map((i) => i.entity.id));
    for (const id of kept) expect(r.byEntity.get(id)).toEqual(want.get(id));
  });

  test('a cut-off review keeps the entities whose every verdict came in full', async () => {
    const withProposals = items.slice(0, 12).flatMap((i) => {
      const changes: ProposalChange[] = i.entity.columns.slice(0, 3).map((c) => ({
        kind: 'pii_tag',
        column: c.name,
        category: 'email',
        confidence: 0.9,
        explanation: 'x',
      }));
      return changes.map((change) => ({
        id: proposalId(demo.name, i.entity.id, change),
        entityId: i.entity.id,
        change,
      }));
    });
    const sent = items.slice(0, 12);
    const whole = await reviewBatchWithModel({ items: sent, ctx, proposals: withProposals, endpoint: endpoint('ok') });
    expect(whole.missing).toEqual([]);
    const short = { ...endpoint('ok'), maxOutputTokens: 200 };
    const r = await reviewBatchWithModel({ items: sent, ctx, proposals: withProposals, endpoint: short });
    expect(r.cutShort).toBe(true);
    expect(r.missing.length).toBeGreaterThan(0);
    const answeredEntities = new Set(r.outcomes.map((o) => withProposals.find((p) => p.id === o.proposalId)!.entityId));
    for (const id of r.missing) expect(answeredEntities.has(id)).toBe(false);
    // Each entity answered has all its verdicts, and they are the ones the whole answer gave.
    for (const id of answeredEntities) {
      const mine = withProposals.filter((p) => p.entityId === id).map((p) => p.id);
      expect(r.outcomes.filter((o) => mine.includes(o.proposalId))).toEqual(
        whole.outcomes.filter((o) => mine.includes(o.proposalId)),
      );
    }
    expect(answeredEntities.size + r.missing.length).toBe(new Set(withProposals.map((p) => p.entityId)).size);
  });

  test('a batch reports the output it reserved: what estimateEntityTokens plans its entities at', async () => {
    for (const agent of AGENTS) {
      // Entities with something to ask, and one with nothing (which reserves nothing).
      const idle = items.find((i) => !needsModelCall(agent, i.entity, ctx, i.neighbours));
      const sent = [...needing(agent, 8), ...(idle ? [idle] : [])];
      const r = await proposeBatchWithModel(agent, sent, ctx, { endpoint: endpoint('ok') });
      const planned = sent.reduce((n, i) => n + estimateEntityTokens(agent, i.entity, ctx, i.neighbours).output, 0);
      expect(planned).toBeGreaterThan(0);
      expect(r.reserved).toBe(planned);
    }
  });

  test('a one-entity batch is answered whole by the batch scenarios', async () => {
    const one = needing('pii-classifier', 1);
    for (const scenario of ['batch-drop-last', 'batch-bad-item']) {
      const r = await proposeBatchWithModel('pii-classifier', one, ctx, { endpoint: endpoint(scenario) });
      expect(r.missing).toEqual([]);
    }
  });

  test('a wholly malformed answer makes every entity sent missing, and is not thrown', async () => {
    const idle = items.find((i) => !needsModelCall('lineage-checker', i.entity, ctx))!;
    const sent = needing('lineage-checker', 3);
    const r = await proposeBatchWithModel('lineage-checker', [...sent, idle], ctx, { endpoint: endpoint('malformed') });
    expect(r.missing).toEqual(sent.map((i) => i.entity.id));
    expect([...r.byEntity.keys()]).toEqual([idle.entity.id]);
  });

  test.each<[string, string]>([
    ['server-500', 'server'],
    ['burst-5', 'burst'],
    ['daily-quota-0', 'exhausted'],
    ['auth-401', 'auth'],
  ])('a provider error (%s) is thrown as the typed error', async (scenario, kind) => {
    const err: unknown = await proposeBatchWithModel('pii-classifier', needing('pii-classifier', 3), ctx, {
      endpoint: endpoint(scenario),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe(kind);
  });

  test('token usage is reported once per batched call, as the provider counted it, malformed answers too', async () => {
    for (const scenario of ['ok', 'malformed']) {
      const seen: TokenCount[] = [];
      await proposeBatchWithModel('description-drafter', needing('description-drafter', 5), ctx, {
        endpoint: endpoint(scenario),
        onUsage: (t) => seen.push(t),
      });
      const st = fp.stats()[fp.endpointKey(scenario, 'correct')]!;
      expect(seen).toEqual([
        { promptTokens: st.promptTokens, completionTokens: st.completionTokens, estimated: false },
      ]);
      expect(st.calls).toBe(1);
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** Proposals of the demo's first entities, as the model agents make them, with their sweep ids. */
async function demoProposals(n: number): Promise<{ id: string; entityId: string; change: ProposalChange }[]> {
  const out: { id: string; entityId: string; change: ProposalChange }[] = [];
  for (const agent of AGENTS) {
    const r = await proposeBatchWithModel(agent, items.slice(0, n), ctx, { endpoint: endpoint('ok') });
    for (const [entityId, changes] of r.byEntity)
      for (const change of changes) out.push({ id: proposalId(demo.name, entityId, change), entityId, change });
  }
  return out;
}

async function reviewSingly(
  list: BatchItem[],
  proposals: { id: string; entityId: string; change: ProposalChange }[],
  ep: EndpointSpec,
): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const i of list) {
    const mine = proposals.filter((p) => p.entityId === i.entity.id);
    if (mine.length > 0)
      out.push(
        ...(await reviewWithModel({ entity: i.entity, ctx, neighbours: i.neighbours, proposals: mine, endpoint: ep })),
      );
  }
  return out;
}

const byProposal = (outcomes: Outcome[]) => Object.fromEntries(outcomes.map((o) => [o.proposalId, o]));

describe('reviewBatchWithModel', () => {
  test.each(FAKE_REVIEWERS)('the %s reviewer decides the same batched and one entity a call', async (reviewer) => {
    const list = items.slice(0, 12);
    const proposals = await demoProposals(12);
    const ep = endpoint('ok', reviewer);
    const single = await reviewSingly(list, proposals, ep);
    const batched: Outcome[] = [];
    for (const b of batchEntities(list, () => ({ prompt: 1, output: 1 }), { ...LIMITS, maxEntities: 5 })) {
      const ids = new Set(b.map((i) => i.entity.id));
      const r = await reviewBatchWithModel({
        items: b,
        ctx,
        proposals: proposals.filter((p) => ids.has(p.entityId)),
        endpoint: ep,
      });
      expect(r.missing).toEqual([]);
      batched.push(...r.outcomes);
    }
    expect(single).toHaveLength(proposals.length);
    expect(byProposal(batched)).toEqual(byProposal(single));
    expect(new Set(single.map((o) => o.reviewer))).toEqual(new Set([`model:${ep.id}`]));
    if (reviewer === 'correct')
      expect(new Set(single.map((o) => o.decision))).toEqual(new Set(['approved', 'rejected']));
  });

  test.each(['batch-drop-last', 'batch-bad-item'])(
    '%s: only the last entity with proposals is missing',
    async (scenario) => {
      const list = items.slice(0, 6);
      const proposals = await demoProposals(6);
      const withProposals = list.filter((i) => proposals.some((p) => p.entityId === i.entity.id));
      expect(withProposals.length).toBeGreaterThan(2);
      const last = withProposals[withProposals.length - 1]!.entity.id;
      const r = await reviewBatchWithModel({ items: list, ctx, proposals, endpoint: endpoint(scenario) });
      expect(r.missing).toEqual([last]);
      const want = (await reviewSingly(list, proposals, endpoint('ok'))).filter(
        (o) => proposals.find((p) => p.id === o.proposalId)!.entityId !== last,
      );
      expect(byProposal(r.outcomes)).toEqual(
        byProposal(want.map((o) => ({ ...o, reviewer: `model:${endpoint(scenario).id}` }))),
      );
    },
  );

  test('a wholly malformed answer: every entity with proposals missing, no outcome, nothing thrown', async () => {
    const list = items.slice(0, 4);
    const proposals = await demoProposals(4);
    const r = await reviewBatchWithModel({ items: list, ctx, proposals, endpoint: endpoint('malformed') });
    expect(r.outcomes).toEqual([]);
    expect(r.missing).toEqual(list.map((i) => i.entity.id).filter((id) => proposals.some((p) => p.entityId === id)));
  });

  test('no proposals: no call; a proposal for an entity not among the items is a caller error', async () => {
    expect(await reviewBatchWithModel({ items, ctx, proposals: [], endpoint: endpoint('ok') })).toEqual({
      outcomes: [],
      missing: [],
    });
    expect(answered('ok')).toBe(0);
    const [p] = await demoProposals(1);
    await expect(
      reviewBatchWithModel({ items: items.slice(1, 2), ctx, proposals: [p!], endpoint: endpoint('ok') }),
    ).rejects.toThrow(/not among the items/);
  });

  test('token usage is reported for a batched review', async () => {
    const proposals = await demoProposals(3);
    fp.reset();
    const seen: TokenCount[] = [];
    await reviewBatchWithModel({
      items: items.slice(0, 3),
      ctx,
      proposals,
      endpoint: endpoint('ok'),
      onUsage: (t) => seen.push(t),
    });
    const st = fp.stats()[fp.endpointKey('ok', 'correct')]!;
    expect(seen).toEqual([{ promptTokens: st.promptTokens, completionTokens: st.completionTokens, estimated: false }]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the batched prompts', () => {
  const REVIEW_LINES = [
    'Three kinds of claims:',
    '1. Established by the evidence — ',
    '2. Interpretation of the evidence — ',
    '3. Claims about the world — ',
    'Both errors cost: approving a fabrication puts a lie into a system people rely on; rejecting a correct repair leaves the catalog broken and a sensitive column ungoverned. Rejection is not a safe default.',
  ];

  test('the batch review prompt states the three kinds of claims and both error costs, verbatim', () => {
    for (const line of REVIEW_LINES) expect(BATCH_SYSTEM_PROMPTS.review).toContain(line);
    // Every line of the one-entity contract is there word for word, the answer format included.
    for (const line of SYSTEM_PROMPTS.review.split('\n'))
      expect(BATCH_SYSTEM_PROMPTS.review.split('\n')).toContain(line);
  });

  test.each(['describe', 'classify_pii', 'check_lineage'] as const)(
    '%s: the same contract as the one-entity prompt, answered by entity id',
    (task) => {
      const single = SYSTEM_PROMPTS[task].split('\n');
      const batch = BATCH_SYSTEM_PROMPTS[task].split('\n');
      for (const line of single.slice(1, -1)) expect(batch).toContain(line);
      expect(BATCH_SYSTEM_PROMPTS[task]).toMatch(/several entities/);
      expect(BATCH_SYSTEM_PROMPTS[task]).toContain('{"entities":[{"id":string,');
    },
  );

  test('a batched classify asks for the PII columns only', () => {
    expect(BATCH_SYSTEM_PROMPTS.classify_pii).toMatch(/List only the columns that are PII \(pii: true\)/);
  });

  describe('on the wire', () => {
    // A real loopback server that records each request and answers with the scripted model.
    let server: http.Server;
    let base = '';
    const bodies: Array<{ messages: { role: string; content: string }[]; response_format: unknown }> = [];
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        let raw = '';
        req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
        req.on('end', () => {
          const body = JSON.parse(raw) as (typeof bodies)[number];
          bodies.push(body);
          const content = JSON.stringify(answerTask(extractTask(body.messages)!));
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify({
              id: 'chatcmpl-w',
              object: 'chat.completion',
              created: 0,
              model: 'm',
              choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            }),
          );
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));
    beforeEach(() => void bodies.splice(0));
    const wire: EndpointSpec = {
      id: 'wire',
      baseUrl: '',
      model: 'm',
      structuredOutput: 'json_schema',
      maxOutputTokens: 4000,
      timeoutMs: 10_000,
    };

    test('a batched review sends the instructions once, in the system message, and the entities as data', async () => {
      const proposals = await demoProposals(3);
      await reviewBatchWithModel({ items: items.slice(0, 3), ctx, proposals, endpoint: { ...wire, baseUrl: base } });
      expect(bodies).toHaveLength(1);
      const [system, user, ...rest] = bodies[0]!.messages;
      expect(rest).toEqual([]);
      expect(system).toEqual({ role: 'system', content: BATCH_SYSTEM_PROMPTS.review });
      expect(user?.content).not.toContain('Three kinds of claims');
      const task = JSON.parse(user!.content) as Extract<ModelTask, { entities: unknown; proposals: unknown }>;
      expect(task.argusTask).toBe('review');
      expect(task.entities.map((e) => e.id)).toEqual(
        items
          .slice(0, 3)
          .map((i) => i.entity.id)
          .filter((id) => proposals.some((p) => p.entityId === id)),
      );
      // Each proposal goes under a short name, p1, p2…, in order; the verdicts come back under the real ids.
      expect(task.proposals.map((p) => [p.proposalId, p.entityId])).toEqual(
        proposals.map((p, i) => [`p${i + 1}`, p.entityId]),
      );
      expect(user!.content).not.toContain(proposals[0]!.id);
    });

    test('verdicts come back under the real proposal ids; a name the call did not give is no verdict', async () => {
      const proposals = await demoProposals(3);
      const spec = { ...wire, baseUrl: base };
      const r = await reviewBatchWithModel({ items: items.slice(0, 3), ctx, proposals, endpoint: spec });
      expect(r.missing).toEqual([]);
      expect(r.outcomes.map((o) => o.proposalId).sort()).toEqual(proposals.map((p) => p.id).sort());
      // An answer naming proposals by their long ids (or anything else) answers none of them.
      const answer = {
        verdicts: proposals.map((p) => ({ proposalId: p.id, decision: 'approve', reason: 'x' })),
      };
      const stub = http.createServer((_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'c',
            object: 'chat.completion',
            created: 0,
            model: 'm',
            choices: [
              { index: 0, message: { role: 'assistant', content: JSON.stringify(answer) }, finish_reason: 'stop' },
            ],
          }),
        );
      });
      await new Promise<void>((ok) => stub.listen(0, '127.0.0.1', ok));
      const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/v1`;
      const wrong = await reviewBatchWithModel({
        items: items.slice(0, 3),
        ctx,
        proposals,
        endpoint: { ...wire, baseUrl: url },
      });
      expect(wrong.outcomes).toEqual([]);
      expect(wrong.missing.sort()).toEqual([...new Set(proposals.map((p) => p.entityId))].sort());
      await new Promise<void>((ok) => stub.close(() => ok()));
    });

    test('a review sends of each entity what its proposals need, batched and alone alike', async () => {
      const withSql = entities.filter((e) => e.sql && e.upstream.length > 0 && e.columns.length > 0);
      const [piiOnly, lineageOnly, described] = [withSql[0]!, withSql[1]!, withSql[2]!];
      const change: Record<string, ProposalChange> = {
        [piiOnly.id]: {
          kind: 'pii_tag',
          column: piiOnly.columns[0]!.name,
          category: 'email',
          confidence: 0.9,
          explanation: 'x',
        },
        [lineageOnly.id]: { kind: 'lineage_flag', finding: 'dangling_edge', upstream: 'raw.gone', explanation: 'x' },
        [described.id]: { kind: 'description', target: 'table', text: 'A table.' },
      };
      const three = [piiOnly, lineageOnly, described];
      const proposals = three.map((e) => ({
        id: proposalId(demo.name, e.id, change[e.id]!),
        entityId: e.id,
        change: change[e.id]!,
      }));
      const spec = { ...wire, baseUrl: base };
      await reviewBatchWithModel({
        items: three.map((entity) => ({ entity, neighbours })),
        ctx,
        proposals,
        endpoint: spec,
      });
      const task = JSON.parse(bodies[0]!.messages[1]!.content) as { entities: unknown[] };
      // Sent in wire form (domain/model-io.ts), read back.
      const [pii, lineage, full] = task.entities.map((e) => fromWire(WireEvidence.parse(e)));
      const names = (e: CatalogEntity) => ({
        id: e.id,
        kind: e.kind,
        name: e.name,
        ...(e.description ? { description: e.description } : {}),
      });
      // A PII tag: the columns, no lineage, SQL or established facts.
      expect(pii).toEqual({
        ...names(piiOnly),
        columns: entityEvidence(piiOnly, ctx, neighbours).columns,
        upstream: [],
      });
      // A lineage flag: the recorded upstream and the SQL, no columns.
      expect(lineage).toEqual({
        ...names(lineageOnly),
        columns: [],
        upstream: entityEvidence(lineageOnly, ctx).upstream,
        sql: lineageOnly.sql,
      });
      // A description: everything.
      expect(full).toEqual(entityEvidence(described, ctx, neighbours));
      expect(full!.sql).toBeDefined();
      // Alone, each entity is sent exactly as in the batch.
      for (const [i, e] of three.entries()) {
        bodies.splice(0);
        await reviewWithModel({ entity: e, ctx, neighbours, proposals: [proposals[i]!], endpoint: spec }).catch(
          () => [],
        );
        expect((JSON.parse(bodies[0]!.messages[1]!.content) as { entity: unknown }).entity).toEqual(task.entities[i]);
      }
    });

    test('a batched agent call sends the batch output schema as json_schema and the trimmed evidence', async () => {
      const four = needing('lineage-checker', 4);
      await proposeBatchWithModel('lineage-checker', four, ctx, { endpoint: { ...wire, baseUrl: base } });
      const body = bodies[0]!;
      expect(body.messages[0]?.content).toBe(BATCH_SYSTEM_PROMPTS.check_lineage);
      const format = body.response_format as { type: string; json_schema: { name: string; schema: unknown } };
      expect(format.type).toBe('json_schema');
      expect(format.json_schema.name).toBe('argus_check_lineage_batch');
      expect(JSON.stringify(format.json_schema.schema)).toContain('"findings"');
      const task = JSON.parse(body.messages[1]!.content) as { entities: unknown[] };
      expect(task.entities).toEqual(
        four.map((i) => toWire(agentEvidence('check_lineage', i.entity, ctx, i.neighbours))),
      );
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('agentEvidence: what each task sees', () => {
  const view = entities.find((e) => e.sql && e.upstream.length > 0)!;

  test('describe sees the full evidence, and what it is asked to describe', () => {
    expect(agentEvidence('describe', view, ctx, neighbours)).toEqual({
      ...entityEvidence(view, ctx, neighbours),
      toDescribe: describeTargets(view, ctx, neighbours),
    });
  });

  test('describe is asked for the table and the undescribed columns something grounds, not bare ones', () => {
    const facts = (e: CatalogEntity) => descriptionFacts(e, ctx, neighbours);
    let bare = 0;
    let grounded = 0;
    for (const e of entities) {
      const t = describeTargets(e, ctx, neighbours);
      expect(t.table).toBe(!e.description?.trim());
      for (const c of e.columns) {
        const open = !c.description?.trim();
        const known = !!e.sql?.trim() || facts(e).columns.has(c.name);
        expect(t.columns.includes(c.name)).toBe(open && known);
        if (open && !known) bare++;
        if (open && known) grounded++;
      }
    }
    // The demo has both kinds: the test would pass vacuously otherwise.
    expect(bare).toBeGreaterThan(0);
    expect(grounded).toBeGreaterThan(0);
  });

  test('a column states nullable and primary_key only when they are not the usual (nullable, not a key)', () => {
    let flagged = 0;
    let plain = 0;
    for (const e of entities)
      for (const [i, c] of entityEvidence(e, ctx).columns.entries()) {
        const col = e.columns[i]!;
        expect(c.name).toBe(col.name);
        expect('nullable' in c).toBe(!col.nullable);
        expect('primary_key' in c).toBe(col.primary_key);
        if (!col.nullable) expect(c.nullable).toBe(false);
        if (col.primary_key) expect(c.primary_key).toBe(true);
        if ('nullable' in c || 'primary_key' in c) flagged++;
        else plain++;
      }
    expect(flagged).toBeGreaterThan(0);
    expect(plain).toBeGreaterThan(0);
    // Every prompt whose task sees columns says what a missing flag means.
    for (const task of ['describe', 'classify_pii', 'review'] as const) {
      expect(SYSTEM_PROMPTS[task]).toContain(EVIDENCE_DEFAULTS);
      expect(BATCH_SYSTEM_PROMPTS[task]).toContain(EVIDENCE_DEFAULTS);
    }
  });

  test('the wire form reads back to the evidence, for every demo entity and task', () => {
    const back = (e: EntityEvidence) => fromWire(WireEvidence.parse(JSON.parse(JSON.stringify(toWire(e)))));
    let columns = 0;
    let missingUpstream = 0;
    for (const e of entities)
      for (const ev of [
        ...(['describe', 'classify_pii', 'check_lineage'] as const).map((t) => agentEvidence(t, e, ctx, neighbours)),
        entityEvidence(e, ctx, neighbours),
      ]) {
        expect(back(ev)).toEqual(ev);
        columns += ev.columns.length;
        missingUpstream += ev.upstream.filter((u) => !u.exists).length;
      }
    expect(columns).toBeGreaterThan(0);
    expect(missingUpstream).toBeGreaterThan(0);
  });

  test('the wire form: a column is [name, type, constraints, description], trailing empties left out', () => {
    const ev: EntityEvidence = {
      id: 'public."Order Lines"',
      kind: 'table',
      name: 'Order Lines',
      columns: [
        { name: 'line id', type: 'bigint', nullable: false, primary_key: true },
        { name: 'order_id', type: 'integer', nullable: false, foreign_key: 'public.orders.order_id' },
        { name: 'placed_at', type: 'timestamp with time zone' },
        { name: 'note', type: 'text', description: 'Free text; may say NOT NULL or REFERENCES x.' },
      ],
      upstream: [
        { id: 'raw.lines', exists: true },
        { id: 'raw.gone', exists: false },
      ],
      established: [
        { target: 'table', basis: 'derived', text: 'Built from raw.lines.' },
        { target: 'column', column: 'order_id', basis: 'inherited', text: 'The order.' },
      ],
    };
    const wire = toWire(ev);
    expect(wire.columns).toEqual([
      ['line id', 'bigint', 'NOT NULL PRIMARY KEY'],
      ['order_id', 'integer', 'NOT NULL REFERENCES public.orders.order_id'],
      ['placed_at', 'timestamp with time zone'],
      ['note', 'text', '', 'Free text; may say NOT NULL or REFERENCES x.'],
    ]);
    expect(wire.upstream).toEqual(['raw.lines', 'raw.gone']);
    expect(wire.notInCatalog).toEqual(['raw.gone']);
    expect(wire.established).toEqual([
      { basis: 'derived', text: 'Built from raw.lines.' },
      { column: 'order_id', basis: 'inherited', text: 'The order.' },
    ]);
    expect(fromWire(wire)).toEqual(ev);
    // Empty lists are left out, and read back as empty.
    const bare = toWire({ id: 'a', kind: 'view', name: 'a', columns: [], upstream: [] });
    expect(bare).toEqual({ id: 'a', kind: 'view', name: 'a' });
    expect(fromWire(bare)).toEqual({ id: 'a', kind: 'view', name: 'a', columns: [], upstream: [] });
    // Every prompt says how columns and upstream are written where its task sees them.
    for (const prompts of [SYSTEM_PROMPTS, BATCH_SYSTEM_PROMPTS]) {
      for (const task of ['describe', 'check_lineage', 'review'] as const)
        expect(prompts[task]).toMatch(/notInCatalog/);
      for (const task of ['describe', 'classify_pii', 'review'] as const)
        expect(prompts[task]).toMatch(/\[name, type, constraints, description\]/);
    }
  });

  test('classify_pii: names, description and columns; no upstream, SQL or established facts', () => {
    const full = entityEvidence(view, ctx, neighbours);
    const e = agentEvidence('classify_pii', view, ctx, neighbours);
    expect(e).toEqual({
      id: full.id,
      kind: full.kind,
      name: full.name,
      ...(full.description !== undefined ? { description: full.description } : {}),
      columns: full.columns,
      upstream: [],
    });
  });

  test('check_lineage: names, upstream, SQL and known entities; no columns', () => {
    const full = entityEvidence(view, ctx, neighbours);
    const e = agentEvidence('check_lineage', view, ctx, neighbours);
    expect(e).toEqual({
      id: full.id,
      kind: full.kind,
      name: full.name,
      columns: [],
      upstream: full.upstream,
      sql: full.sql,
      knownEntities: knownNear(view, ctx),
    });
    expect(e.knownEntities!.length).toBeGreaterThan(0);
  });

  test('the fake model answers a batch as it answers each entity alone', () => {
    for (const agent of AGENTS) {
      const task = AGENT_TASK[agent];
      const evidence = items.slice(0, 10).map((i) => agentEvidence(task, i.entity, ctx, i.neighbours));
      const out = MODEL_BATCH_OUTPUT_SCHEMAS[task].parse(answerTask({ argusTask: task, entities: evidence }));
      expect(out.entities.map((x) => x.id)).toEqual(evidence.map((e) => e.id));
    }
    const classified = MODEL_BATCH_OUTPUT_SCHEMAS.classify_pii.parse(
      answerTask({
        argusTask: 'classify_pii',
        entities: items.map((i) => agentEvidence('classify_pii', i.entity, ctx)),
      }),
    );
    const tags = classified.entities.flatMap((x) => x.tags);
    expect(tags.length).toBeGreaterThan(0);
    expect(tags.every((t) => t.pii)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('needsModelCall', () => {
  const base = entities.find((e) => e.id === 'raw.orders')!;
  const described = {
    ...base,
    description: 'Orders.',
    columns: base.columns.map((c) => ({ ...c, description: `The ${c.name}.` })),
  };
  const tagged = {
    ...base,
    columns: base.columns.map((c) => ({
      ...c,
      tags: [
        { kind: 'pii' as const, category: 'email' as const, confidence: 1, explanation: 'x', source: 'human' as const },
      ],
    })),
  };
  const view = entities.find((e) => e.sql && e.upstream.length === 0) ?? { ...base, sql: 'select 1', upstream: [] };

  const oneOpen = [...tagged.columns.slice(1), base.columns[0]!];
  test.each<[string, AgentName, boolean, CatalogEntity]>([
    ['an undescribed table', 'description-drafter', true, base],
    ['only the table undescribed', 'description-drafter', true, { ...described, description: ' ' }],
    [
      'one bare column undescribed (no SQL, no established fact)',
      'description-drafter',
      false,
      { ...described, columns: [...described.columns.slice(1), base.columns[0]!] },
    ],
    [
      'one column of a view undescribed (its SQL can ground it)',
      'description-drafter',
      true,
      {
        ...view,
        description: 'A view.',
        columns: view.columns.map((c, i) => ({ ...c, description: i === 0 ? undefined : `The ${c.name}.` })),
      },
    ],
    ['everything described', 'description-drafter', false, described],
    ['a table with columns', 'pii-classifier', true, base],
    ['every column already tagged', 'pii-classifier', false, tagged],
    [
      'every column tagged or excepted',
      'pii-classifier',
      false,
      { ...tagged, columns: oneOpen, pii_exceptions: [base.columns[0]!.name] },
    ],
    ['one column neither tagged nor excepted', 'pii-classifier', true, { ...tagged, columns: oneOpen }],
    ['a table without SQL or upstream', 'lineage-checker', false, { ...base, sql: undefined, upstream: [] }],
    ['recorded upstream', 'lineage-checker', true, { ...base, sql: undefined, upstream: ['raw.customers'] }],
    ['SQL', 'lineage-checker', true, { ...view, upstream: [] }],
    ['blank SQL', 'lineage-checker', false, { ...base, sql: '  ', upstream: [] }],
  ])('%s (%s): %s', (_name, agent, expected, entity) => {
    expect(needsModelCall(agent, entity, ctx, neighbours)).toBe(expected);
  });
});

describe('estimateEntityTokens', () => {
  test.each(AGENTS)(
    '%s: prompt is the trimmed evidence; the output reserve covers the fake model on every demo entity',
    (agent) => {
      const task = AGENT_TASK[agent];
      for (const { entity } of items) {
        const cost = estimateEntityTokens(agent, entity, ctx, neighbours);
        if (!needsModelCall(agent, entity, ctx, neighbours)) {
          expect(cost).toEqual({ prompt: 0, output: 0 });
          continue;
        }
        const evidence = agentEvidence(task, entity, ctx, neighbours);
        expect(cost.prompt).toBe(estimateTokens(JSON.stringify(toWire(evidence))));
        const answer = answerTask({ argusTask: task, entities: [evidence] }) as { entities: unknown[] };
        expect(cost.output).toBeGreaterThanOrEqual(estimateTokens(JSON.stringify(answer.entities[0])));
      }
    },
  );

  test('review: the evidence and the proposals in the prompt, a verdict reserve per proposal', async () => {
    const proposals = await demoProposals(3);
    const entity = items[0]!.entity;
    const mine = proposals.filter((p) => p.entityId === entity.id);
    expect(mine.length).toBeGreaterThan(1);
    const cost = estimateEntityTokens('review', entity, ctx, neighbours, mine);
    expect(cost.prompt).toBeGreaterThan(estimateTokens(JSON.stringify(entityEvidence(entity, ctx, neighbours))));
    const verdicts = answerTask({
      argusTask: 'review',
      entities: [entityEvidence(entity, ctx, neighbours)],
      proposals: mine.map((p) => ({ ...proposalForReview(p.id, p.change), entityId: p.entityId })),
    }) as { verdicts: unknown[] };
    expect(cost.output).toBeGreaterThanOrEqual(estimateTokens(JSON.stringify(verdicts.verdicts)));
    expect(estimateEntityTokens('review', entity, ctx, neighbours, [])).toEqual({ prompt: 0, output: 0 });
  });
});

describe('batchEntities', () => {
  const c = (prompt: number, output: number): EntityCost => ({ prompt, output });
  const limits = { maxEntities: 3, promptTokens: 100, outputTokens: 50 };
  test.each<[string, EntityCost[], typeof limits, number[][]]>([
    ['nothing', [], limits, []],
    ['all fit in one', [c(10, 5), c(10, 5), c(10, 5)], limits, [[0, 1, 2]]],
    [
      'maxEntities',
      [c(1, 1), c(1, 1), c(1, 1), c(1, 1), c(1, 1)],
      limits,
      [
        [0, 1, 2],
        [3, 4],
      ],
    ],
    ['prompt tokens', [c(60, 1), c(40, 1), c(1, 1)], limits, [[0, 1], [2]]],
    ['prompt tokens, one over', [c(60, 1), c(41, 1), c(1, 1)], limits, [[0], [1, 2]]],
    ['output tokens', [c(1, 30), c(1, 30), c(1, 20)], limits, [[0], [1, 2]]],
    ['too big alone, first', [c(500, 1), c(1, 1), c(1, 1)], limits, [[0], [1, 2]]],
    ['too big alone, in the middle', [c(1, 1), c(1, 99), c(1, 1)], limits, [[0], [1], [2]]],
    ['two too big in a row', [c(101, 1), c(101, 1)], limits, [[0], [1]]],
    ['one at a time', [c(1, 1), c(1, 1)], { ...limits, maxEntities: 1 }, [[0], [1]]],
    ['free items still count against maxEntities', [c(0, 0), c(0, 0), c(0, 0), c(0, 0)], limits, [[0, 1, 2], [3]]],
  ])('%s', (_name, costs, lim, expected) => {
    const indexes = costs.map((_, i) => i);
    const batches = batchEntities(indexes, (i) => costs[i]!, lim);
    expect(batches).toEqual(expected);
    for (const b of batches.filter((x) => x.length > 1)) {
      expect(b.length).toBeLessThanOrEqual(lim.maxEntities);
      expect(b.reduce((n, i) => n + costs[i]!.prompt, 0)).toBeLessThanOrEqual(lim.promptTokens);
      expect(b.reduce((n, i) => n + costs[i]!.output, 0)).toBeLessThanOrEqual(lim.outputTokens);
    }
  });

  test('maxEntities below 1 is refused', () => {
    expect(() => batchEntities([1], () => c(1, 1), { ...limits, maxEntities: 0 })).toThrow(RangeError);
  });
});
