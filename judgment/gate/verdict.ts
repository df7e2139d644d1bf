import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';

/** What the mechanical gate decided about one proposal, and the rule that decided it. */
export interface GateVerdict {
  decision: 'approved' | 'rejected';
  /** One readable line. */
  reason: string;
  /** Short stable id of the rule that decided, e.g. 'unknown-column', 'claim:cadence', 'pii:grounded'. */
  rule: string;
}

export function approve(rule: string, reason: string): GateVerdict {
  return { decision: 'approved', reason, rule };
}

export function reject(rule: string, reason: string): GateVerdict {
  return { decision: 'rejected', reason, rule };
}

/** Catalog names go into reasons: keep each on one short line. */
export function q(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 3)}...`;
}

export function findColumn(entity: CatalogEntity, name: string | undefined): CatalogColumn | undefined {
  return name === undefined ? undefined : entity.columns.find((c) => c.name === name);
}
