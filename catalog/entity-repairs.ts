// One repair applied to (or taken back from) an entity held in memory, idempotent by content: the file catalog
// writes the result, the dbt catalog keeps its parsed manifest current with it, and the benchmarks simulate writes.
import type { CatalogEntity } from '../domain/catalog';
import type { ProposalChange } from '../domain/proposal';
import { stableJson } from '../domain/digest';

export type ApplyResult =
  | { status: 'written'; before: unknown; after: unknown }
  | { status: 'already'; note: string }
  | { status: 'kept_human'; note: string }
  | { status: 'conflict'; note: string };

function hasText(s: string | undefined): s is string {
  return typeof s === 'string' && s.trim().length > 0;
}

/** The table or the column a description change is about (undefined: the column is gone). */
function descriptionHolder(
  entity: CatalogEntity,
  change: { target: 'table' | 'column'; column?: string | undefined },
): { description?: string; description_source?: 'human' | 'argus' } | undefined {
  return change.target === 'table' ? entity : entity.columns.find((c) => c.name === change.column);
}

/**
 * Apply one approved change to an entity in place. Idempotent by content: a change already present is
 * reported as `already`, so a retried write after a crash applies nothing twice. Text without a recorded
 * source is treated as a person's.
 */
export function applyChange(
  entity: CatalogEntity,
  change: ProposalChange,
  proposalId: string,
  overwriteHumanText: boolean,
): ApplyResult {
  switch (change.kind) {
    case 'description': {
      const holder = descriptionHolder(entity, change);
      if (!holder) return { status: 'conflict', note: `column ${change.column ?? '?'} no longer exists` };
      if (holder.description === change.text && holder.description_source === 'argus')
        return { status: 'already', note: 'description already in the catalog' };
      if (hasText(holder.description) && holder.description_source !== 'argus' && !overwriteHumanText) {
        return {
          status: 'kept_human',
          note: 'a person wrote this description; not overwritten (overwriteHumanText is off)',
        };
      }
      const before = { description: holder.description ?? null, description_source: holder.description_source ?? null };
      holder.description = change.text;
      holder.description_source = 'argus';
      return { status: 'written', before, after: { description: change.text, description_source: 'argus' } };
    }
    case 'description_removal': {
      const holder = descriptionHolder(entity, change);
      if (!holder) return { status: 'conflict', note: `column ${change.column ?? '?'} no longer exists` };
      if (!hasText(holder.description)) return { status: 'already', note: 'description already removed' };
      if (holder.description !== change.text || holder.description_source !== 'argus')
        return { status: 'conflict', note: "the description is no longer ARGUS's text the removal was proposed for" };
      const before = { description: holder.description, description_source: holder.description_source };
      delete holder.description;
      delete holder.description_source;
      return { status: 'written', before, after: { description: null, description_source: null } };
    }
    case 'pii_tag': {
      const col = entity.columns.find((c) => c.name === change.column);
      if (!col) return { status: 'conflict', note: `column ${change.column} no longer exists` };
      const existing = col.tags.find((t) => t.kind === 'pii');
      if (existing) {
        if (existing.proposalId === proposalId) return { status: 'already', note: 'tag already in the catalog' };
        return existing.source === 'human'
          ? { status: 'kept_human', note: `column already carries a human PII tag (${existing.category})` }
          : { status: 'already', note: `column already tagged ${existing.category}` };
      }
      const before = col.tags.map((t) => ({ ...t }));
      col.tags.push({
        kind: 'pii',
        category: change.category,
        confidence: change.confidence,
        explanation: change.explanation,
        source: 'argus',
        proposalId,
      });
      return { status: 'written', before, after: col.tags.map((t) => ({ ...t })) };
    }
    case 'lineage_flag': {
      const before = [...entity.upstream];
      if (change.finding === 'dangling_edge') {
        if (!entity.upstream.includes(change.upstream)) return { status: 'already', note: 'edge already removed' };
        entity.upstream = entity.upstream.filter((u) => u !== change.upstream);
      } else {
        if (entity.upstream.includes(change.upstream)) return { status: 'already', note: 'edge already recorded' };
        entity.upstream = [...entity.upstream, change.upstream];
      }
      return { status: 'written', before, after: [...entity.upstream] };
    }
  }
}

/**
 * What the catalog holds now for the field a change touches, in the form a write records as before/after;
 * undefined when the target is gone.
 */
function currentValue(entity: CatalogEntity, change: ProposalChange): unknown {
  switch (change.kind) {
    case 'description':
    case 'description_removal': {
      const holder = descriptionHolder(entity, change);
      return (
        holder && { description: holder.description ?? null, description_source: holder.description_source ?? null }
      );
    }
    case 'pii_tag':
      return entity.columns.find((c) => c.name === change.column)?.tags;
    case 'lineage_flag':
      return entity.upstream;
  }
}

/** Whether the field a change touches holds exactly `value` (a write's recorded before or after). */
export function holds(entity: CatalogEntity, change: ProposalChange, value: unknown): boolean {
  const now = currentValue(entity, change);
  return now !== undefined && stableJson(now) === stableJson(value);
}

/** Revert one written change if the catalog still holds exactly what the write left; otherwise report the conflict. */
export function revertChange(
  entity: CatalogEntity,
  change: ProposalChange,
  before: unknown,
  after: unknown,
): { ok: boolean; note: string } {
  switch (change.kind) {
    case 'description':
    case 'description_removal': {
      const holder = descriptionHolder(entity, change);
      if (!holder) return { ok: false, note: 'target no longer exists' };
      const now = { description: holder.description ?? null, description_source: holder.description_source ?? null };
      if (stableJson(now) !== stableJson(after))
        return { ok: false, note: 'changed since the sweep wrote it; left as is' };
      const b = before as { description: string | null; description_source: 'human' | 'argus' | null };
      if (b.description === null) delete holder.description;
      else holder.description = b.description;
      if (b.description_source === null) delete holder.description_source;
      else holder.description_source = b.description_source;
      return { ok: true, note: 'description restored' };
    }
    case 'pii_tag': {
      const col = entity.columns.find((c) => c.name === change.column);
      if (!col) return { ok: false, note: 'column no longer exists' };
      if (stableJson(col.tags) !== stableJson(after))
        return { ok: false, note: 'tags changed since the sweep wrote them; left as is' };
      col.tags = (before as typeof col.tags).map((t) => ({ ...t }));
      return { ok: true, note: 'tag removed' };
    }
    case 'lineage_flag': {
      if (stableJson(entity.upstream) !== stableJson(after))
        return { ok: false, note: 'lineage changed since the sweep wrote it; left as is' };
      entity.upstream = [...(before as string[])];
      return { ok: true, note: 'lineage restored' };
    }
  }
}
