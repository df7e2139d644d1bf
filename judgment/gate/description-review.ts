import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';
import type { DescriptionChange, DescriptionRemovalChange } from '../../domain/proposal';
import type { CatalogContext } from '../catalog-context';
import { detectUnsupportedClaims } from '../claims/detect';
import { descriptionFacts, inheritedFrom, type Neighbours } from '../description-evidence';
import { isRestatement, isUninformative } from '../informative';
import { orphaned } from '../description-drafter';
import { approve, findColumn, q, reject, type GateVerdict } from './verdict';

/** The column a description change names (none: the table), and how reasons name it; or why it names none. */
function targetOf(
  change: DescriptionChange | DescriptionRemovalChange,
  entity: CatalogEntity,
): { column: CatalogColumn | undefined; subject: string } | GateVerdict {
  if (change.target === 'table')
    return change.column === undefined
      ? { column: undefined, subject: q(entity.id) }
      : reject('malformed-target', `table description also names column ${q(change.column)}`);
  if (change.column === undefined) return reject('malformed-target', 'column description names no column');
  const column = findColumn(entity, change.column);
  if (!column) return reject('unknown-column', `cites column ${q(change.column)}, which ${q(entity.id)} does not have`);
  return { column, subject: `column ${q(column.name)}` };
}

/**
 * A proposed description: approved when it is exactly what the lineage and SQL establish, or when it claims
 * nothing the schema and recorded lineage do not support; rejected when it says nothing beyond the name,
 * only restates the catalog, or asserts what the evidence cannot establish.
 */
export function reviewDescription(
  change: DescriptionChange,
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours: Neighbours,
): GateVerdict {
  const target = targetOf(change, entity);
  if ('decision' in target) return target;
  const { column, subject } = target;

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

/**
 * A proposed removal of ARGUS's own description: approved only when the table or column holds exactly that text as
 * ARGUS's, and the gate's own reading finds it orphaned (an inherited text whose origin, read now, holds no person's
 * text, and no other evidence to replace it with). The one review that reads an existing description, and only to
 * compare it with the proposal and to find the origin its "Inherited from" sentence names.
 */
export function reviewDescriptionRemoval(
  change: DescriptionRemovalChange,
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours: Neighbours,
): GateVerdict {
  const target = targetOf(change, entity);
  if ('decision' in target) return target;
  const { column, subject } = target;
  const holder: { description?: string; description_source?: string } = column ?? entity;
  if (holder.description !== change.text || holder.description_source !== 'argus')
    return reject(
      'removal:not-argus-text',
      `the description of ${subject} is not the ARGUS text the removal names; only ARGUS's own text is taken back`,
    );
  const facts = descriptionFacts(entity, ctx, neighbours);
  if (!orphaned(holder, column ? facts.columns.get(column.name) : facts.table, !column, ctx, neighbours))
    return reject(
      'removal:evidence-stands',
      `the description of ${subject} still has evidence, or its origin could not be read: kept`,
    );
  return approve(
    'removal:origin-gone',
    `the person's text that ARGUS's description of ${subject} was inherited from (${q(inheritedFrom(change.text) ?? '?')}) is gone, and nothing else gives one`,
  );
}
