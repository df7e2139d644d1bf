import type { CatalogEntity } from '../../domain/catalog';
import type { Proposal } from '../../domain/proposal';
import type { CatalogContext } from '../catalog-context';
import { NO_NEIGHBOURS, type Neighbours } from '../description-evidence';
import { reviewDescription, reviewDescriptionRemoval } from './description-review';
import { reviewLineageFlag } from './lineage-review';
import { reviewPiiTag } from './pii-review';
import { q, reject, type GateVerdict } from './verdict';

export type { GateVerdict };

/**
 * The Arbiter's mechanical gate: the declared reviewer in no-model mode and the first gate in model
 * mode. Approves only what it can ground in the entity's structure (names, types, keys, recorded
 * lineage, SQL) and the catalog's ids; anything it cannot decide is rejected with that reason.
 * Pure and deterministic. It never reads existing descriptions (but for a description removal, whose
 * text it compares with the catalog's and whose "Inherited from" origin it looks up), the proposal's evidence or
 * its explanation: catalog and agent text are data, not instructions. Never throws: an internal error
 * rejects the proposal (rule 'gate-error'), so a gate failure can never approve anything.
 */
export function mechanicalReview(
  proposal: Proposal,
  entity: CatalogEntity | undefined,
  ctx: CatalogContext,
  neighbours: Neighbours = NO_NEIGHBOURS,
): GateVerdict {
  try {
    return review(proposal, entity, ctx, neighbours);
  } catch (err) {
    return reject(
      'gate-error',
      `the gate could not decide: ${q(err instanceof Error ? err.message : String(err), 200)}`,
    );
  }
}

function review(
  proposal: Proposal,
  entity: CatalogEntity | undefined,
  ctx: CatalogContext,
  neighbours: Neighbours,
): GateVerdict {
  if (entity === undefined) {
    return reject('unknown-entity', `cites an entity that does not exist (${q(proposal.entityId)})`);
  }
  if (proposal.entityId !== entity.id) {
    return reject(
      'entity-mismatch',
      `proposal is for ${q(proposal.entityId)} but was reviewed against ${q(entity.id)}`,
    );
  }
  const change = proposal.change;
  switch (change.kind) {
    case 'description':
      return reviewDescription(change, entity, ctx, neighbours);
    case 'description_removal':
      return reviewDescriptionRemoval(change, entity, ctx, neighbours);
    case 'pii_tag':
      return reviewPiiTag(change, entity);
    case 'lineage_flag':
      return reviewLineageFlag(change, entity, ctx);
    default: {
      const unknown: never = change;
      return reject(
        'unknown-kind',
        `cannot review a change of kind ${q(String((unknown as { kind?: unknown }).kind))}`,
      );
    }
  }
}
