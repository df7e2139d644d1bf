import type { CatalogEntity } from '../domain/catalog';
import type { DescriptionChange, DescriptionRemovalChange } from '../domain/proposal';
import type { CatalogContext } from './catalog-context';
import {
  basisOfArgusText,
  descriptionFacts,
  inheritedOriginGone,
  type DescriptionFact,
  type Neighbours,
} from './description-evidence';
import { isRestatement } from './informative';

/** A drafted description and what it rests on. */
export interface Draft {
  change: DescriptionChange;
  fact: DescriptionFact;
}

/**
 * Draft descriptions without a model for the table and the columns that have none (or only an earlier
 * ARGUS restatement of the schema, or ARGUS's inherited or derived text that its evidence no longer gives),
 * and only where the catalog establishes something beyond name and type: a person's description inherited
 * along lineage, a derivation read from SQL, a relationship, or what a row of a view is. A column of which
 * nothing more is known gets no draft. Pure and deterministic.
 */
export function draftDescriptions(entity: CatalogEntity, ctx: CatalogContext, neighbours: Neighbours): Draft[] {
  const facts = descriptionFacts(entity, ctx, neighbours);
  const drafts: Draft[] = [];
  if (facts.table !== undefined && needsText(entity, entity, facts.table)) {
    drafts.push({ change: { kind: 'description', target: 'table', text: facts.table.text }, fact: facts.table });
  }
  for (const column of entity.columns) {
    const fact = facts.columns.get(column.name);
    if (fact === undefined || !needsText(column, entity, fact, column.name)) continue;
    drafts.push({ change: { kind: 'description', target: 'column', column: column.name, text: fact.text }, fact });
  }
  return drafts;
}

/** No text, or ARGUS's own text that only restates the schema (written by an earlier version) or is outdated. */
function needsText(
  holder: { description?: string; description_source?: string },
  entity: CatalogEntity,
  fact: DescriptionFact,
  column?: string,
): boolean {
  const text = holder.description;
  if (text === undefined || text.trim() === '') return true;
  return (holder.description_source === 'argus' && isRestatement(text, entity, column)) || outdated(holder, fact);
}

/**
 * Whether `holder` carries ARGUS's inherited or derived text that its evidence no longer gives: the person's text
 * it was inherited from, or the SQL it was derived from, changed since it was written. It follows its evidence (a
 * model's text, and a person's, stay as they are).
 */
export function outdated(
  holder: { description?: string; description_source?: string },
  fact: DescriptionFact | undefined,
): boolean {
  const text = holder.description;
  return (
    holder.description_source === 'argus' &&
    text !== undefined &&
    fact !== undefined &&
    text !== fact.text &&
    basisOfArgusText(text) !== 'model'
  );
}

/**
 * ARGUS's inherited descriptions on the entity whose origin no longer holds the person's text they were copied
 * from, and that no other evidence gives a text for (with one, the drafter replaces the text instead): each is
 * proposed for removal, which takes back only that very text. Pure and deterministic.
 */
export function draftRemovals(
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours: Neighbours,
): { change: DescriptionRemovalChange; evidence: string[] }[] {
  const holders = [
    {
      holder: entity as { description?: string; description_source?: string },
      column: undefined as string | undefined,
    },
    ...entity.columns.map((c) => ({ holder: c, column: c.name })),
  ].filter(({ holder }) => holdsArgusInheritedText(holder));
  if (holders.length === 0) return [];
  const facts = descriptionFacts(entity, ctx, neighbours);
  const out: { change: DescriptionRemovalChange; evidence: string[] }[] = [];
  for (const { holder, column } of holders) {
    const fact = column === undefined ? facts.table : facts.columns.get(column);
    if (!orphaned(holder, fact, column === undefined, ctx, neighbours)) continue;
    out.push({
      change: {
        kind: 'description_removal',
        target: column === undefined ? 'table' : 'column',
        ...(column === undefined ? {} : { column }),
        text: holder.description!,
      },
      evidence: [`inherited text whose origin no longer holds a person's description`],
    });
  }
  return out;
}

/**
 * ARGUS's inherited text that its evidence gives nothing for any more (no fact: not even a derivation or a foreign
 * key to replace it with) and whose origin, read now, holds no person's text to inherit (inheritedOriginGone).
 */
export function orphaned(
  holder: { description?: string; description_source?: string },
  fact: DescriptionFact | undefined,
  table: boolean,
  ctx: CatalogContext,
  neighbours: Neighbours,
): boolean {
  return (
    holdsArgusInheritedText(holder) &&
    fact === undefined &&
    inheritedOriginGone(holder.description!, table, ctx, neighbours)
  );
}

/** Whether `holder` carries ARGUS's inherited text: all a description removal can take back. */
export function holdsArgusInheritedText(holder: { description?: string; description_source?: string }): boolean {
  return (
    holder.description_source === 'argus' &&
    holder.description !== undefined &&
    holder.description.trim() !== '' &&
    basisOfArgusText(holder.description) === 'inherited'
  );
}
