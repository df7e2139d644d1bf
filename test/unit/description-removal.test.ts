import { CatalogEntity, type CatalogEntityInput } from '../../domain/catalog';
import type { DescriptionRemovalChange, Proposal, ProposalChange } from '../../domain/proposal';
import { proposalId } from '../../domain/digest';
import { createCatalogContext } from '../../judgment/catalog-context';
import { draftDescriptions, draftRemovals } from '../../judgment/description-drafter';
import type { Neighbours } from '../../judgment/description-evidence';
import { evidenceView } from '../../judgment/fingerprint';
import { mechanicalReview } from '../../judgment/gate/mechanical-gate';
import { NO_MODEL_AGENTS } from '../../judgment/agents';
import { applyChange, revertChange } from '../../catalog/entity-repairs';

// Removing ARGUS's inherited text once the person's text it was copied from is gone, on a small lineage chain:
// a raw table whose columns people described, a staging view reading it, a mart view reading the staging one.
const entity = (input: CatalogEntityInput): CatalogEntity => CatalogEntity.parse(input);

function warehouse(): CatalogEntity[] {
  return [
    entity({
      id: 'raw.accounts',
      database: 'shop',
      schema: 'raw',
      name: 'accounts',
      kind: 'table',
      description: 'One row per storefront account, as the sign-up form stored it.',
      description_source: 'human',
      columns: [
        { name: 'account_id', type: 'integer', primary_key: true },
        {
          name: 'contact_email',
          type: 'text',
          description: 'Address the customer confirmed at sign-up; lower-cased.',
          description_source: 'human',
        },
        {
          name: 'plan_code',
          type: 'text',
          description: 'Billing plan chosen at checkout, as the payment page named it.',
          description_source: 'human',
        },
      ],
    }),
    entity({
      id: 'staging.accounts',
      database: 'shop',
      schema: 'staging',
      name: 'accounts',
      kind: 'view',
      upstream: ['raw.accounts'],
      sql: 'select account_id, contact_email, plan_code from raw.accounts',
      columns: [
        { name: 'account_id', type: 'integer' },
        { name: 'contact_email', type: 'text' },
        { name: 'plan_code', type: 'text', foreign_key: 'raw.plans.plan_code' },
      ],
    }),
    entity({
      id: 'mart.accounts',
      database: 'shop',
      schema: 'mart',
      name: 'accounts',
      kind: 'view',
      upstream: ['staging.accounts'],
      sql: 'select account_id, contact_email from staging.accounts',
      columns: [
        { name: 'account_id', type: 'integer' },
        { name: 'contact_email', type: 'text' },
      ],
    }),
    entity({
      id: 'raw.plans',
      database: 'shop',
      schema: 'raw',
      name: 'plans',
      kind: 'table',
      columns: [{ name: 'plan_code', type: 'text', primary_key: true }],
    }),
  ];
}

/** The catalog as the judgment reads it: its ids, and each neighbour as its evidence view. */
function reading(entities: CatalogEntity[], hidden: string[] = []) {
  const byId = new Map(entities.map((e) => [e.id, e]));
  const ctx = createCatalogContext(entities.map((e) => e.id));
  const neighbours: Neighbours = {
    get: (id) => (hidden.includes(id) || !byId.has(id) ? undefined : evidenceView(byId.get(id)!)),
  };
  return { byId, ctx, neighbours };
}

/** A sweep with no model: every drafted description written, upstream first. */
function describeAll(entities: CatalogEntity[]): void {
  for (const e of entities) {
    const { ctx, neighbours } = reading(entities);
    for (const d of draftDescriptions(e, ctx, neighbours)) applyChange(e, d.change, 'p', false);
  }
}

const proposal = (e: CatalogEntity, change: ProposalChange): Proposal => ({
  id: proposalId('shop', e.id, change),
  entityId: e.id,
  agent: 'description-drafter',
  change,
  evidence: [],
});

const column = (entities: CatalogEntity[], id: string, name: string) =>
  entities.find((e) => e.id === id)!.columns.find((c) => c.name === name)!;

describe('description removals', () => {
  test("ARGUS's copies, direct and through a view, are proposed for removal once the person's text is gone", () => {
    const w = warehouse();
    describeAll(w);
    const staged = column(w, 'staging.accounts', 'contact_email');
    const mart = column(w, 'mart.accounts', 'contact_email');
    expect(staged.description).toMatch(
      /^Address the customer confirmed.*Inherited from `raw\.accounts\.contact_email`\.$/,
    );
    expect(mart.description).toMatch(/Inherited from `raw\.accounts\.contact_email` through `staging\.accounts`\.$/);
    const { ctx, neighbours } = reading(w);
    // While the person's text is there, nothing is taken back.
    for (const e of w) expect(draftRemovals(e, ctx, neighbours)).toEqual([]);

    delete column(w, 'raw.accounts', 'contact_email').description;
    const after = reading(w);
    const removals = w.flatMap((e) => draftRemovals(e, after.ctx, after.neighbours).map((r) => [e.id, r] as const));
    expect(removals.map(([id, r]) => [id, r.change])).toEqual([
      [
        'staging.accounts',
        { kind: 'description_removal', target: 'column', column: 'contact_email', text: staged.description },
      ],
      [
        'mart.accounts',
        { kind: 'description_removal', target: 'column', column: 'contact_email', text: mart.description },
      ],
    ]);
    // The drafter's agent proposes them beside its drafts; nothing new is drafted for those columns.
    const agent = NO_MODEL_AGENTS['description-drafter'](w[1]!, after.ctx, after.neighbours).map((p) => p.change);
    expect(agent).toContainEqual(removals[0]![1].change);
    expect(agent.filter((c) => c.kind === 'description' && c.column === 'contact_email')).toEqual([]);

    for (const [id, r] of removals) {
      const e = after.byId.get(id)!;
      const verdict = mechanicalReview(proposal(e, r.change), e, after.ctx, after.neighbours);
      expect(verdict).toMatchObject({ decision: 'approved', rule: 'removal:origin-gone' });
      expect(verdict.reason).toContain('(raw.accounts.contact_email) is gone');
    }
  });

  test('the write takes back exactly that text, is idempotent, and undo restores it as ARGUS text', () => {
    const w = warehouse();
    describeAll(w);
    const holder = column(w, 'staging.accounts', 'contact_email');
    const text = holder.description!;
    const change: DescriptionRemovalChange = {
      kind: 'description_removal',
      target: 'column',
      column: 'contact_email',
      text,
    };
    const e = w[1]!;
    const written = applyChange(e, change, 'r1', false);
    expect(written).toEqual({
      status: 'written',
      before: { description: text, description_source: 'argus' },
      after: { description: null, description_source: null },
    });
    expect(holder).not.toHaveProperty('description');
    expect(holder).not.toHaveProperty('description_source');
    expect(applyChange(e, change, 'r1', false).status).toBe('already');
    if (written.status !== 'written') throw new Error('not written');
    expect(revertChange(e, change, written.before, written.after)).toEqual({ ok: true, note: 'description restored' });
    expect(holder).toMatchObject({ description: text, description_source: 'argus' });
  });

  test("a person's text, another text, or a model's text is never taken back", () => {
    const w = warehouse();
    describeAll(w);
    const e = w[1]!;
    const holder = column(w, 'staging.accounts', 'contact_email');
    const text = holder.description!;
    delete column(w, 'raw.accounts', 'contact_email').description;
    const change: DescriptionRemovalChange = {
      kind: 'description_removal',
      target: 'column',
      column: 'contact_email',
      text,
    };
    // A person now owns the very same text: theirs to keep.
    holder.description_source = 'human';
    const { ctx, neighbours } = reading(w);
    expect(draftRemovals(e, ctx, neighbours)).toEqual([]);
    expect(mechanicalReview(proposal(e, change), e, ctx, neighbours)).toMatchObject({
      decision: 'rejected',
      rule: 'removal:not-argus-text',
    });
    expect(applyChange(e, change, 'r', false).status).toBe('conflict');
    // ARGUS text other than the one the removal names (written since): the removal is stale.
    holder.description_source = 'argus';
    const stale = { ...change, text: 'Another text. Inherited from `raw.accounts.contact_email`.' };
    expect(mechanicalReview(proposal(e, stale), e, ctx, neighbours)).toMatchObject({ rule: 'removal:not-argus-text' });
    expect(applyChange(e, stale, 'r', false).status).toBe('conflict');
    // A model's text rests on no origin: it stays.
    holder.description = 'Where the shop writes to the customer.';
    expect(draftRemovals(e, ctx, neighbours)).toEqual([]);
  });

  test('no removal while the evidence stands or cannot be read', () => {
    const w = warehouse();
    describeAll(w);
    const e = w[1]!;
    const holder = column(w, 'staging.accounts', 'contact_email');
    const change: DescriptionRemovalChange = {
      kind: 'description_removal',
      target: 'column',
      column: 'contact_email',
      text: holder.description!,
    };
    // The view no longer reads the column from raw.accounts, but the person's text is still there: the lineage
    // may have moved for a while, so the text stays until its origin's text is gone.
    e.sql = "select account_id, 'x' as contact_email, plan_code from raw.accounts";
    let r = reading(w);
    expect(draftRemovals(e, r.ctx, r.neighbours)).toEqual([]);
    expect(mechanicalReview(proposal(e, change), e, r.ctx, r.neighbours)).toMatchObject({
      decision: 'rejected',
      rule: 'removal:evidence-stands',
    });
    // The origin's text is gone but the origin was not read (a bounded load, an unreadable record): no evidence.
    e.sql = 'select account_id, contact_email, plan_code from raw.accounts';
    delete column(w, 'raw.accounts', 'contact_email').description;
    r = reading(w, ['raw.accounts']);
    expect(draftRemovals(e, r.ctx, r.neighbours)).toEqual([]);
    expect(mechanicalReview(proposal(e, change), e, r.ctx, r.neighbours)).toMatchObject({ decision: 'rejected' });
    // Read, it is: the removal is proposed and approved.
    r = reading(w);
    expect(draftRemovals(e, r.ctx, r.neighbours).map((x) => x.change)).toEqual([change]);
  });

  test('a column with a key it references gets that text instead of a removal', () => {
    const w = warehouse();
    describeAll(w);
    const e = w[1]!;
    const holder = column(w, 'staging.accounts', 'plan_code');
    expect(holder.description).toMatch(
      /^Billing plan chosen.*Inherited from `raw\.accounts\.plan_code`\. References `raw\.plans\.plan_code`\.$/,
    );
    delete column(w, 'raw.accounts', 'plan_code').description;
    const { ctx, neighbours } = reading(w);
    expect(draftRemovals(e, ctx, neighbours)).toEqual([]);
    expect(draftDescriptions(e, ctx, neighbours).map((d) => d.change)).toContainEqual({
      kind: 'description',
      target: 'column',
      column: 'plan_code',
      text: 'References `raw.plans.plan_code`.',
    });
  });

  test('a table whose inherited text lost its origin is proposed for removal too', () => {
    const w = warehouse();
    // A view reading one table whole inherits the table's description.
    const view = entity({
      id: 'staging.accounts_all',
      database: 'shop',
      schema: 'staging',
      name: 'accounts_all',
      kind: 'view',
      upstream: ['raw.accounts'],
      sql: 'select * from raw.accounts',
      columns: [{ name: 'account_id', type: 'integer' }],
    });
    w.push(view);
    describeAll(w);
    expect(view.description).toMatch(/Inherited from `raw\.accounts`, one row per row of it\.$/);
    delete w[0]!.description;
    const { ctx, neighbours } = reading(w);
    expect(draftRemovals(view, ctx, neighbours).map((r) => r.change)).toEqual([
      { kind: 'description_removal', target: 'table', text: view.description },
    ]);
  });
});
