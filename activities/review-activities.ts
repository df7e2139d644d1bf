import { Context } from '@temporalio/activity';
import type { Outcome, ProposalChange } from '../domain/proposal';
import type { ReviewMode } from '../domain/sweep';
import { inPart, partTag, type PagePart } from '../domain/ids';
import {
  DECIDED_BEFORE,
  describeShape,
  piiShapeOf,
  SHAPE_DECISIONS_DOC,
  SHAPE_REVIEWER_PREFIX,
  type ShapeDecision,
} from '../judgment/pii/shape';
import { mechanicalReview } from '../judgment/gate/mechanical-gate';
import { summarize } from '../judgment/agents';
import { catalogContext } from './catalog-access';
import { NO_NEIGHBOURS } from '../judgment/description-evidence';
import { forgetPageNeighbours, pageNeighbours } from './neighbours';
import { confirmBySamples } from '../judgment/pii/samples';
import { sampledEvidence } from './value-sampling';
import { sweepContext, type ActivityDeps } from './sweep-context';

const AWAITING_HUMAN = 'awaiting human review';
const QUEUE_FULL = "not reviewed: the sweep's human review queue is full (";
/** An outcome that holds a proposal for people (parked, or left out because the queue was full). */
export const heldForPeople = (o: Outcome): boolean =>
  o.decision === 'not_reviewed' && (o.reason === AWAITING_HUMAN || o.reason.startsWith(QUEUE_FULL));

/** The mechanical gate over a page, what waits for people, and outcomes decided in the workflow. */
export function createReviewActivities(deps: ActivityDeps) {
  const { ledgerFor, catalogOf, metrics } = sweepContext(deps);
  return {
    /**
     * The mechanical gate over a page's proposals. In mechanical mode its decision is final; in model mode
     * its rejections and its description removals are final, and what else it approves is handed to the model
     * (returned as `passed`).
     */
    async reviewPageMechanically(input: {
      ledgerKey: string;
      pageIndex: number;
      mode: ReviewMode;
      /** The page's part (domain/ids.ts PagePart): only its proposals are reviewed, under its own tag. */
      part?: PagePart;
    }): Promise<{
      approved: number;
      rejected: number;
      passed: Record<string, string[]>;
    }> {
      const ledger = ledgerFor(input.ledgerKey);
      const { meta, catalog } = await catalogOf(ledger);
      const ctx = await catalogContext(catalog);
      const proposals = (await ledger.proposals(input.pageIndex)).filter((p) => inPart(input.part, p.agent));
      const { entities } = await catalog.getEntities([...new Set(proposals.map((p) => p.entityId))]);
      const byId = new Map(entities.map((e) => [e.id, e]));
      // Descriptions inherited or derived along lineage are checked against the entities they read.
      const described = new Set(
        proposals
          .filter((p) => p.change.kind === 'description' || p.change.kind === 'description_removal')
          .map((p) => p.entityId),
      );
      const describing = entities.filter((e) => described.has(e.id));
      // The drafter's neighbours of the page when this worker ran it: its evidence is not computed again.
      const neighbours =
        describing.length > 0
          ? await pageNeighbours(`${input.ledgerKey}#${input.pageIndex}`, catalog, describing, ctx, true)
          : NO_NEIGHBOURS;
      // The drafter's review is their last reader, with descriptions to check or none.
      if (describing.length === 0 && inPart(input.part, 'description-drafter'))
        forgetPageNeighbours(input.ledgerKey, input.pageIndex);
      const outcomes: Outcome[] = [];
      const passed: Record<string, string[]> = {};
      let approved = 0;
      let rejected = 0;
      // People's decisions on PII tags by shape, in this catalog (read from its memory at the sweep's start).
      const shapes = proposals.some((p) => p.change.kind === 'pii_tag')
        ? ((await ledger.doc<Record<string, ShapeDecision>>(SHAPE_DECISIONS_DOC)) ?? {})
        : {};
      const gated = proposals.map((p) => ({ p, r: mechanicalReview(p, byId.get(p.entityId), ctx, neighbours) }));
      // The gate's own sample (opt-in) of the columns whose tags it rejected, never the proposal's account of them:
      // one read per table, whatever the number of its columns.
      const samples = new Map<string, Awaited<ReturnType<typeof sampledEvidence>>>();
      if (meta.sampleRows !== undefined) {
        const columnsOf = new Map<string, Set<string>>();
        for (const { p, r } of gated)
          if (r.decision === 'rejected' && p.change.kind === 'pii_tag' && byId.has(p.entityId))
            (columnsOf.get(p.entityId) ?? columnsOf.set(p.entityId, new Set()).get(p.entityId)!).add(p.change.column);
        for (const [id, columns] of columnsOf) {
          samples.set(id, await sampledEvidence(catalog, byId.get(id)!, [...columns], meta.sampleRows));
          Context.current().heartbeat(id);
        }
      }
      for (const { p, r: gate } of gated) {
        let r = gate;
        const sampled = samples.get(p.entityId);
        if (sampled && r.decision === 'rejected' && p.change.kind === 'pii_tag')
          r = confirmBySamples(r, p.change, sampled.get(p.change.column));
        // A tag of a shape a person rejected is rejected, on their word: the decision is named, and can be taken back.
        const shape = p.change.kind === 'pii_tag' ? piiShapeOf(p.change) : undefined;
        const person = shape !== undefined ? shapes[shape] : undefined;
        if (r.decision !== 'rejected' && person?.decision === 'rejected' && person.entityId !== p.entityId) {
          rejected++;
          outcomes.push({
            proposalId: p.id,
            decision: 'rejected',
            reason:
              `${person.reviewer} rejected ${describeShape(shape!)} on ${person.entityId} (${person.at.slice(0, 10)}, ` +
              `proposal ${person.proposalId}): this is the same shape. \`argus review forget ${person.proposalId} ` +
              `--sweep ${meta.sweepId}\` takes the decision back`,
            reviewer: `${SHAPE_REVIEWER_PREFIX}${person.proposalId}`,
          });
        } else if (r.decision === 'rejected') {
          rejected++;
          outcomes.push({ proposalId: p.id, decision: 'rejected', reason: r.reason, reviewer: 'mechanical-gate' });
        } else if (input.mode === 'mechanical' || p.change.kind === 'description_removal') {
          // A removal takes back ARGUS's own text whose origin is gone: the gate's reading of the catalog decides
          // it in both modes (a model has nothing to add to "the person's text is no longer there").
          approved++;
          outcomes.push({ proposalId: p.id, decision: 'approved', reason: r.reason, reviewer: 'mechanical-gate' });
        } else {
          (passed[p.entityId] ??= []).push(p.id);
        }
      }
      await ledger.putOutcomes(input.pageIndex, 'gate', partTag(input.part, 'gate'), outcomes);
      metrics.verdicts('gate', outcomes);
      return { approved, rejected, passed };
    },

    /** Approved proposals of the given kinds on a page: what the human review gate holds back. */
    async listForHumanReview(input: {
      ledgerKey: string;
      pageIndex: number;
      kinds: string[];
    }): Promise<
      { proposalId: string; entityId: string; kind: ProposalChange['kind']; summary: string; arbiterReason: string }[]
    > {
      const ledger = ledgerFor(input.ledgerKey);
      const outcomes = new Map((await ledger.outcomes(input.pageIndex)).map((o) => [o.proposalId, o]));
      const held = (await ledger.proposals(input.pageIndex)).filter(
        (p) => input.kinds.includes(p.change.kind) && outcomes.get(p.id)?.decision === 'approved',
      );
      const before = await decidedBefore(ledger, held);
      return held.map((p) => ({
        proposalId: p.id,
        entityId: p.entityId,
        kind: p.change.kind,
        summary: summarize(p.entityId, p.change),
        arbiterReason: `${before.get(p.id) ?? ''}${outcomes.get(p.id)?.reason ?? ''}`,
      }));
    },

    /**
     * Park a page's approved proposals of the given kinds for people: each is recorded as "awaiting human
     * review" (so the page's write leaves it alone) and returned, up to `room` of them; past `room` the review
     * queue is full and they stay not reviewed, counted in `overflow`. Returns what waits, for the sweep's one
     * wait at its end.
     */
    async parkForHumanReview(input: {
      ledgerKey: string;
      pageIndex: number;
      kinds: string[];
      room: number;
      limit: number;
    }): Promise<{
      parked: {
        proposalId: string;
        entityId: string;
        kind: ProposalChange['kind'];
        summary: string;
        arbiterReason: string;
      }[];
      overflow: number;
    }> {
      const ledger = ledgerFor(input.ledgerKey);
      const outcomes = new Map((await ledger.outcomes(input.pageIndex)).map((o) => [o.proposalId, o]));
      const held = (await ledger.proposals(input.pageIndex)).filter(
        (p) => input.kinds.includes(p.change.kind) && outcomes.get(p.id)?.decision === 'approved',
      );
      const room = Math.max(0, input.room);
      const parked = held.slice(0, room);
      const overflow = held.slice(room);
      const waiting: Outcome[] = [
        ...parked.map((p) => ({
          proposalId: p.id,
          decision: 'not_reviewed' as const,
          reason: AWAITING_HUMAN,
          reviewer: 'none',
        })),
        ...overflow.map((p) => ({
          proposalId: p.id,
          decision: 'not_reviewed' as const,
          reason: `${QUEUE_FULL}${input.limit} proposals wait for people)`,
          reviewer: 'none',
        })),
      ];
      await ledger.putOutcomes(input.pageIndex, 'awaiting', 'awaiting', waiting);
      metrics.verdicts('awaiting_people', waiting);
      const before = await decidedBefore(ledger, parked);
      return {
        parked: parked.map((p) => ({
          proposalId: p.id,
          entityId: p.entityId,
          kind: p.change.kind,
          summary: summarize(p.entityId, p.change).slice(0, 300),
          arbiterReason: `${before.get(p.id) ?? ''}${outcomes.get(p.id)?.reason ?? ''}`.slice(0, 400),
        })),
        overflow: overflow.length,
      };
    },

    /** Record outcomes decided in the workflow (not_reviewed after the breaker, human decisions). */
    async recordOutcomes(input: {
      ledgerKey: string;
      pageIndex: number;
      tag: 'not-reviewed' | 'pii-not-reviewed' | 'lineage-not-reviewed' | 'human' | `human-${number}`;
      outcomes: Outcome[];
    }): Promise<number> {
      const stage = input.tag.endsWith('not-reviewed') ? 'not-reviewed' : 'human';
      await ledgerFor(input.ledgerKey).putOutcomes(input.pageIndex, stage, input.tag, input.outcomes);
      metrics.verdicts(stage === 'human' ? 'human' : 'model_unavailable', input.outcomes);
      return input.outcomes.length;
    },
  };
}

/**
 * Of proposals held for people, those of a shape a person approved before (in this catalog): the words that open
 * their reason, which the review page groups under "decided before" so one click settles the class.
 */
async function decidedBefore(
  ledger: { doc<T>(name: string): Promise<T | undefined> },
  held: readonly { id: string; change: ProposalChange }[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!held.some((p) => p.change.kind === 'pii_tag')) return out;
  const shapes = (await ledger.doc<Record<string, ShapeDecision>>(SHAPE_DECISIONS_DOC)) ?? {};
  for (const p of held) {
    if (p.change.kind !== 'pii_tag') continue;
    const shape = piiShapeOf(p.change);
    const person = shapes[shape];
    if (person?.decision === 'approved')
      out.set(
        p.id,
        `${DECIDED_BEFORE} ${person.reviewer} approved ${describeShape(shape)} on ${person.entityId} ` +
          `(${person.at.slice(0, 10)}). `,
      );
  }
  return out;
}
