// The review page's backend over a stand-in for the Temporal client: which sweeps it lists, and which decisions it
// refuses before anything reaches a sweep (or maps from the sweep's own validator). The real path runs in
// test/e2e/review-page.test.ts.
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ReviewRefusal, temporalReviewBackend, type DecisionRequest } from '../../client/review-inbox';
import { catalogTextFor } from '../../client/review-details';
import type { PendingReview, ReviewUpdateInput } from '../../workflows/messages';
import type { CatalogEntity } from '../../domain/catalog';

const NOW = new Date('2026-12-01T10:00:00Z');
const LATER = '2026-12-01T12:00:00.000Z';

interface FakeSweep {
  status: string;
  pending: PendingReview[];
  unreachable?: boolean;
  updates: ReviewUpdateInput[];
}

const parked = (id: string, deadline = LATER): PendingReview => ({
  proposalId: id,
  pageIndex: 0,
  entityId: 'raw.customers',
  kind: 'pii_tag',
  summary: `tag raw.customers.${id} as email (0.90): named`,
  arbiterReason: 'grounded',
  deadline,
});

/** Just what the backend calls: list, describe, the two queries, the update (refusing what the sweep's validator refuses). */
function fakeClient(sweeps: Record<string, FakeSweep>): Client {
  return {
    withDeadline: <T>(_d: number, fn: () => Promise<T>) => fn(),
    workflow: {
      list: () =>
        (async function* () {
          for (const [workflowId, s] of Object.entries(sweeps)) if (s.status === 'RUNNING') yield { workflowId };
        })(),
      getHandle: (id: string) => {
        const s = sweeps[id];
        return {
          describe: async () => {
            if (!s) throw new WorkflowNotFoundError('workflow not found', id, undefined);
            return { status: { name: s.status } };
          },
          query: async (q: { name: string }) => {
            if (s?.unreachable) throw new Error('context deadline exceeded');
            return q.name === 'pendingReviews' ? s!.pending : { catalog: 'shop', mode: 'mechanical' };
          },
          executeUpdate: async (_u: unknown, o: { args: [ReviewUpdateInput] }) => {
            const input = o.args[0];
            const unknown = input.decisions.filter((d) => !s!.pending.some((p) => p.proposalId === d.proposalId));
            if (unknown.length)
              throw new WorkflowUpdateFailedError(
                'Workflow Update failed',
                new Error(
                  `not awaiting review: ${unknown.map((d) => d.proposalId).join(', ')} (see the pendingReviews query)`,
                ),
              );
            s!.updates.push(input);
            s!.pending = s!.pending.filter((p) => !input.decisions.some((d) => d.proposalId === p.proposalId));
            return { accepted: input.decisions.length, stillPending: s!.pending.length };
          },
        };
      },
    },
  } as unknown as Client;
}

function setup() {
  const sweeps: Record<string, FakeSweep> = {
    'sweep/a': { status: 'RUNNING', pending: [parked('p-1'), parked('p-2'), parked('p-3')], updates: [] },
    'sweep/late': { status: 'RUNNING', pending: [parked('p-9', '2026-12-01T09:59:59.000Z')], updates: [] },
    'sweep/done': { status: 'COMPLETED', pending: [], updates: [] },
    'sweep/empty': { status: 'RUNNING', pending: [], updates: [] },
    'sweep/gone-worker': { status: 'RUNNING', pending: [], updates: [], unreachable: true },
  };
  const backend = temporalReviewBackend({ client: fakeClient(sweeps), now: () => NOW });
  return { sweeps, backend };
}

const ask = (over: Partial<DecisionRequest> = {}): DecisionRequest => ({
  sweepId: 'sweep/a',
  proposalIds: ['p-1'],
  decision: 'approved',
  reviewer: 'dana',
  ...over,
});

test('the inbox lists running sweeps that wait for people, the nearest deadline first, and names the silent ones', async () => {
  const { backend } = setup();
  const inbox = await backend.inbox();
  expect(inbox.sweeps.map((s) => [s.sweepId, s.proposals.map((p) => p.proposalId), s.deadline])).toEqual([
    ['sweep/late', ['p-9'], '2026-12-01T09:59:59.000Z'],
    ['sweep/a', ['p-1', 'p-2', 'p-3'], LATER],
  ]);
  expect(inbox.sweeps[0]).toMatchObject({ catalog: 'shop', mode: 'mechanical' });
  expect(inbox.unreachable).toEqual([
    { sweepId: 'sweep/gone-worker', reason: 'did not answer within 10 s (is a worker running on its task queue?)' },
  ]);
});

test('a decision is one update with the CLI payload: every id, the reviewer, the time, the note', async () => {
  const { backend, sweeps } = setup();
  const r = await backend.decide(ask({ proposalIds: ['p-1', 'p-2', 'p-1'], note: ' checked ', reviewer: ' dana ' }));
  expect(r).toEqual({
    sweepId: 'sweep/a',
    decision: 'approved',
    reviewer: 'dana',
    note: 'checked',
    proposalIds: ['p-1', 'p-2'],
    accepted: 2,
    stillPending: 1,
  });
  expect(sweeps['sweep/a']!.updates).toEqual([
    {
      decisions: ['p-1', 'p-2'].map((proposalId) => ({
        proposalId,
        decision: 'approved',
        reviewer: 'dana',
        time: NOW.toISOString(),
        comment: 'checked',
      })),
    },
  ]);
});

test.each([
  ['no id', ask({ proposalIds: [] }), 400, 'choose at least one proposal: nothing was sent'],
  ['too many ids', ask({ proposalIds: Array.from({ length: 501 }, (_, i) => `p-${i}`) }), 400, 'at most 500'],
  ['no reviewer', ask({ reviewer: '  ' }), 400, 'name the person deciding'],
  ['a long note', ask({ note: 'x'.repeat(2001) }), 400, 'the note is longer than 2000 characters'],
  ['an unknown sweep', ask({ sweepId: 'sweep/none' }), 404, 'there is no sweep sweep/none: nothing was changed'],
  [
    'a finished sweep',
    ask({ sweepId: 'sweep/done' }),
    409,
    'sweep sweep/done has finished (completed) and takes no more decisions: nothing was changed',
  ],
  [
    'a sweep past its deadline',
    ask({ sweepId: 'sweep/late', proposalIds: ['p-9'] }),
    409,
    'the review deadline of sweep/late passed at 2026-12-01T09:59:59.000Z: the sweep is read-only, nothing was changed',
  ],
  [
    'an id the sweep does not hold (unknown, or decided already)',
    ask({ proposalIds: ['p-1', 'p-x'] }),
    409,
    'the sweep refused the decisions: not awaiting review: p-x (see the pendingReviews query). Nothing was changed',
  ],
])('refused: %s', async (_name, req, status, message) => {
  const { backend, sweeps } = setup();
  const e = await backend.decide(req).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ReviewRefusal);
  expect((e as ReviewRefusal).status).toBe(status);
  expect((e as ReviewRefusal).message).toContain(message);
  for (const s of Object.values(sweeps)) expect(s.updates).toEqual([]);
});

describe('catalogTextFor: what the catalog holds where a proposal would write', () => {
  const entity: CatalogEntity = {
    id: 'raw.customers',
    database: 'shop',
    name: 'customers',
    kind: 'table',
    description: 'One row per customer.',
    description_source: 'human',
    columns: [
      {
        name: 'email',
        type: 'TEXT',
        nullable: true,
        primary_key: false,
        description: 'Login e-mail.',
        description_source: 'argus',
        tags: [{ kind: 'pii', category: 'email', confidence: 1, explanation: 'x', source: 'human' }],
      },
      { name: 'id', type: 'INT', nullable: false, primary_key: true, tags: [] },
    ],
    upstream: ['raw.crm'],
    pii_exceptions: [],
  };
  test.each([
    [
      'a PII tag: the column text and tags',
      { kind: 'pii_tag' as const, column: 'email', category: 'email' as const, confidence: 0.9, explanation: 'e' },
      { found: true, description: 'Login e-mail.', source: 'argus', tags: ['email (human)'] },
    ],
    [
      'a column description on a bare column',
      { kind: 'description' as const, target: 'column' as const, column: 'id', text: 't' },
      { found: true, tags: [] },
    ],
    [
      'a table description',
      { kind: 'description' as const, target: 'table' as const, text: 't' },
      { found: true, description: 'One row per customer.', source: 'human' },
    ],
    [
      'a lineage flag: the recorded upstream',
      { kind: 'lineage_flag' as const, finding: 'dangling_edge' as const, upstream: 'raw.crm' },
      { found: true, upstream: ['raw.crm'] },
    ],
    [
      'a column that is gone',
      { kind: 'pii_tag' as const, column: 'phone', category: 'phone' as const, confidence: 0.9, explanation: 'e' },
      { found: false },
    ],
  ])('%s', (_name, change, text) => {
    expect(catalogTextFor(entity, change)).toEqual(text);
  });
  test('an entity that is gone', () => {
    expect(catalogTextFor(undefined, { kind: 'description', target: 'table', text: 't' })).toEqual({ found: false });
  });
});
