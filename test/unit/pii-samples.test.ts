import { CatalogEntity } from '../../domain/catalog';
import type { PiiTagChange, Proposal } from '../../domain/proposal';
import { createCatalogContext } from '../../judgment/catalog-context';
import { mechanicalReview } from '../../judgment/gate/mechanical-gate';
import { confirmBySamples, proposeFromSamples, samplingCandidates } from '../../judgment/pii/samples';
import { valueEvidence } from '../../judgment/pii/value-patterns';

const contacts = CatalogEntity.parse({
  id: 'crm.contacts',
  database: 'crm',
  name: 'contacts',
  kind: 'table',
  pii_exceptions: ['c9'],
  columns: [
    { name: 'id', type: 'integer', primary_key: true },
    { name: 'c7', type: 'text' },
    { name: 'c8', type: 'text' },
    { name: 'c9', type: 'text' },
    { name: 'email', type: 'text' },
    { name: 'account_id', type: 'integer', foreign_key: 'crm.accounts.id' },
    { name: 'login_count', type: 'integer' },
  ],
});
const ctx = createCatalogContext(['crm.contacts', 'crm.accounts']);
const emails = Array.from({ length: 10 }, (_, i) => `person${i}@example.org`);

describe('value sampling in judgment/', () => {
  it('samples only columns the rules leave undecided: no keys, exceptions, statistics or already proposed', () => {
    const candidates = samplingCandidates(contacts, new Set(['email']));
    expect(candidates).toEqual(expect.arrayContaining(['c7', 'c8']));
    for (const never of ['id', 'c9', 'email', 'account_id', 'login_count']) expect(candidates).not.toContain(never);
  });

  it('proposes a tag from counts alone, and the explanation holds no value', () => {
    const ev = valueEvidence(emails)!;
    const [p] = proposeFromSamples(contacts, new Map([['c7', ev]]));
    expect(p!.change).toMatchObject({ kind: 'pii_tag', column: 'c7', category: 'email' });
    expect(JSON.stringify(p)).not.toContain('example.org');
    expect((p!.change as PiiTagChange).explanation).toMatch(/10 of 10 values sampled in the worker/);
  });

  it("the gate's own sample overturns only a rejection for want of evidence, and only for the same category", () => {
    const change: PiiTagChange = {
      kind: 'pii_tag',
      column: 'c7',
      category: 'email',
      confidence: 0.9,
      explanation: 'x',
    };
    const proposal: Proposal = { id: 'p', entityId: contacts.id, agent: 'pii-classifier', change, evidence: [] };
    const gate = mechanicalReview(proposal, contacts, ctx);
    expect(gate.decision).toBe('rejected');
    const ev = valueEvidence(emails);
    expect(confirmBySamples(gate, change, ev)).toMatchObject({ decision: 'approved', rule: 'pii:sampled-values' });
    expect(confirmBySamples(gate, { ...change, category: 'phone' }, ev)).toEqual(gate);
    expect(confirmBySamples(gate, change, undefined)).toEqual(gate);
    // A person said c9 is not personal data: values do not overrule them.
    const onException = mechanicalReview({ ...proposal, change: { ...change, column: 'c9' } }, contacts, ctx);
    expect(confirmBySamples(onException, { ...change, column: 'c9' }, ev)).toEqual(onException);
  });
});
