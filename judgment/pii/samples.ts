import type { CatalogEntity, PiiCategory } from '../../domain/catalog';
import type { PiiTagChange } from '../../domain/proposal';
import type { AgentProposal } from '../agents';
import { approve, q, type GateVerdict } from '../gate/verdict';
import { classifyColumn, withReading } from './classifier';
import { splitIdentifier } from './identifier';
import { flagMarker, statisticMarker } from './markers';
import { readTable } from './table-reading';
import { typeFamily, type TypeFamily } from '../sql/types';
import type { ValueEvidence } from './value-patterns';

/** Gate rejections that the values themselves may overturn: the name said too little, not "this is not personal". */
const OVERTURNABLE = new Set(['pii:ungrounded', 'pii:generic-column', 'pii:type-mismatch']);

/** Types whose values no pattern here can match (a phone or card stored as a number is still sampled). */
const NOT_SAMPLED: ReadonlySet<TypeFamily> = new Set([
  'bool',
  'decimal',
  'float',
  'date',
  'time',
  'timestamp',
  'binary',
]);

/**
 * Columns worth sampling (sweep input `sampleValues`): those the name, type and description leave undecided
 * as plain data — not tagged yet, not a person's exception, not a key, a statistic, a flag or a business contact.
 */
export function samplingCandidates(entity: CatalogEntity, alreadyProposed: ReadonlySet<string>): string[] {
  return entity.columns
    .filter(
      (c) =>
        !alreadyProposed.has(c.name) &&
        !entity.pii_exceptions.includes(c.name) &&
        !c.tags.some((t) => t.kind === 'pii') &&
        !c.primary_key &&
        c.foreign_key === undefined,
    )
    .filter((c) => {
      if (NOT_SAMPLED.has(typeFamily(c.type))) return false;
      const tokens = splitIdentifier(c.name);
      if (statisticMarker(tokens) !== undefined || flagMarker(tokens) !== undefined) return false;
      const verdict = classifyColumn(c, entity);
      return !verdict.pii && verdict.category === 'none';
    })
    .map((c) => c.name);
}

function line(ev: ValueEvidence): string {
  return `${ev.matched} of ${ev.sampled} values sampled in the worker look like ${ev.pattern}`;
}

/** Tags for columns whose sampled values match one personal-data pattern. Counts only: never a value. */
export function proposeFromSamples(
  entity: CatalogEntity,
  evidence: ReadonlyMap<string, ValueEvidence>,
): AgentProposal[] {
  const out: AgentProposal[] = [];
  const { reading } = readTable(entity);
  for (const column of entity.columns) {
    const ev = evidence.get(column.name);
    if (ev === undefined) continue;
    const change: PiiTagChange = {
      kind: 'pii_tag',
      column: column.name,
      category: ev.category as PiiCategory,
      confidence: Math.min(0.95, Math.round((0.6 + 0.35 * (ev.matched / ev.sampled)) * 100) / 100),
      explanation: withReading(`${column.name}: ${line(ev)}`, reading),
      reading,
    };
    out.push({
      change,
      evidence: [`column ${column.name} of ${entity.id}`, `values: ${line(ev)} (values kept out of Temporal)`],
    });
  }
  return out;
}

/**
 * The gate's verdict on a PII tag, given what the gate's own sample of the column shows: a rejection because
 * the name said too little becomes an approval when the values match the proposed category; anything else
 * (an exception a person set, a business contact, a key) stands.
 */
export function confirmBySamples(
  verdict: GateVerdict,
  change: PiiTagChange,
  ev: ValueEvidence | undefined,
): GateVerdict {
  if (verdict.decision === 'approved' || ev === undefined || !OVERTURNABLE.has(verdict.rule)) return verdict;
  if (ev.category !== change.category) return verdict;
  return approve('pii:sampled-values', `${q(change.column)}: ${line(ev)}, which fits ${change.category}`);
}
