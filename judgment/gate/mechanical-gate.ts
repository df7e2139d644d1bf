import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';
import type { DescriptionChange, LineageFlagChange, Proposal } from '../../domain/proposal';
import type { CatalogContext } from '../catalog-context';
import { tablesReadBySql } from '../sql/tables';
import { approve, findColumn, q, reject, type GateVerdict } from './verdict';
import { reviewPiiTag } from './pii-review';
import { detectUnsupportedClaims } from '../claims/detect';
import { descriptionFacts, NO_NEIGHBOURS, type Neighbours } from '../description-evidence';
import { isRestatement, isUninformative } from '../informative';

export type { GateVerdict };

/**
 * The Arbiter's mechanical gate: the declared reviewer in no-model mode and the first gate in model
 * mode. Approves only what it can ground in the entity's structure (names, types, keys, recorded
 * lineage, SQL) and the catalog's ids; anything it cannot decide is rejected with that reason.
 * Pure and deterministic. It never reads existing descriptions, the proposal's evidence or its
 * explanation: catalog and agent text are data, not instructions. Never throws: an internal error
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

// ---------------------------------------------------------------------------------------------
// Descriptions

function reviewDescription(
  change: DescriptionChange,
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours: Neighbours,
): GateVerdict {
  let column: CatalogColumn | undefined;
  if (change.target === 'column') {
    if (change.column === undefined) return reject('malformed-target', 'column description names no column');
    column = findColumn(entity, change.column);
    if (!column)
      return reject('unknown-column', `cites column ${q(change.column)}, which ${q(entity.id)} does not have`);
  } else if (change.column !== undefined) {
    return reject('malformed-target', `table description also names column ${q(change.column)}`);
  }
  const subject = column ? `column ${q(column.name)}` : q(entity.id);

  // The gate's own reading of the lineage and SQL: a text that is exactly what they establish is grounded.
  const facts = descriptionFacts(entity, ctx, neighbours);
  const fact = column ? facts.columns.get(column.name) : facts.table;
  if (fact !== undefined && fact.text === change.text) {
    return approve(
      `description:${fact.basis}`,
      `description of ${subject} is ${fact.basis}: ${q(fact.evidence.join('; '), 200)}`,
    );
  }
  if (isUninformative(change.text, entity, column?.name)) {
    return reject('description:not-informative', `description of ${subject} says nothing beyond its name`);
  }
  if (isRestatement(change.text, entity, column?.name)) {
    return reject(
      'description:restatement',
      `description of ${subject} only restates what the catalog shows (name, type, nullability, keys, lineage)`,
    );
  }
  const claims = detectUnsupportedClaims(change.text, entity, ctx, column?.name, neighbours);
  const first = claims[0];
  if (first !== undefined) {
    const listed = claims
      .slice(0, 3)
      .map((c) => c.message)
      .join('; ');
    const more = claims.length > 3 ? `; and ${claims.length - 3} more` : '';
    return reject(
      `claim:${first.kind}`,
      `description of ${subject} asserts what the evidence cannot establish: ${listed}${more}`,
    );
  }
  return approve(
    'description:grounded',
    `description of ${subject} claims nothing the schema and lineage do not support`,
  );
}

// ---------------------------------------------------------------------------------------------
// Lineage flags

function reviewLineageFlag(change: LineageFlagChange, entity: CatalogEntity, ctx: CatalogContext): GateVerdict {
  const up = change.upstream;
  const recorded = entity.upstream.includes(up);
  if (change.finding === 'dangling_edge') {
    if (!recorded) return reject('lineage:not-recorded', `${q(up)} is not in the recorded upstream of ${q(entity.id)}`);
    if (ctx.exists(up))
      return reject(
        'lineage:upstream-exists',
        `recorded upstream ${q(up)} exists in the catalog, so the edge is not dangling`,
      );
    return approve('lineage:dangling-confirmed', `recorded upstream ${q(up)} is not an entity in the catalog`);
  }
  if (up === entity.id) return reject('lineage:self', `${q(entity.id)} cannot be its own upstream`);
  if (!ctx.exists(up)) return reject('lineage:unknown-upstream', `${q(up)} is not an entity id in the catalog`);
  if (recorded)
    return reject('lineage:already-recorded', `${q(up)} is already in the recorded upstream of ${q(entity.id)}`);
  if (entity.sql === undefined) return reject('lineage:no-sql', `${q(entity.id)} has no SQL to read ${q(up)} from`);
  const reads = tablesReadBySql(entity.sql);
  const match = reads.find((name) => ctx.resolve(name) === up);
  if (match === undefined) return reject('lineage:not-read', `the SQL of ${q(entity.id)} does not read ${q(up)}`);
  return approve(
    'lineage:unrecorded-read-confirmed',
    `the SQL of ${q(entity.id)} reads ${q(match)} (${q(up)}), which its lineage omits`,
  );
}
