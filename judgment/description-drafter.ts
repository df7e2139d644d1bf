import { UNKNOWN_COLUMN_TYPE, type CatalogColumn, type CatalogEntity } from '../domain/catalog';
import type { DescriptionChange } from '../domain/proposal';
import { nameWords, type CatalogContext } from './catalog-context';

/** Longest text a draft may have (exclusive bound is 300). */
const MAX_DRAFT = 299;
/** Types longer than this are left out of drafts rather than cut mid-token. */
const MAX_TYPE = 80;
/** Humanised names longer than this are replaced by "This column". */
const MAX_NAME = 120;

/**
 * Draft descriptions without a model for the table (if it has none) and for every column without one.
 * A draft restates only what the schema and recorded lineage establish: kind, columns and types,
 * keys, nullability, existing recorded upstream. Pure and deterministic.
 */
export function draftDescriptions(entity: CatalogEntity, ctx: CatalogContext): DescriptionChange[] {
  const drafts: DescriptionChange[] = [];
  if (!hasText(entity.description)) {
    drafts.push({ kind: 'description', target: 'table', text: draftEntityText(entity, ctx) });
  }
  const pkCount = entity.columns.filter((c) => c.primary_key).length;
  for (const column of entity.columns) {
    if (hasText(column.description)) continue;
    drafts.push({ kind: 'description', target: 'column', column: column.name, text: draftColumnText(column, pkCount) });
  }
  return drafts;
}

function hasText(text: string | undefined): boolean {
  return text !== undefined && text.trim() !== '';
}

function humanise(name: string): string {
  const words = nameWords(name);
  const text = words.length > 0 ? words.join(' ') : name.trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function restatableType(type: string): string | undefined {
  const flat = type.replace(/\s+/g, ' ').trim();
  return flat.length > 0 && flat.length <= MAX_TYPE && flat.toLowerCase() !== UNKNOWN_COLUMN_TYPE ? flat : undefined;
}

function draftColumnText(column: CatalogColumn, pkCount: number): string {
  const human = humanise(column.name);
  const subject = human.length <= MAX_NAME ? human : 'This column';
  const type = restatableType(column.type);
  const key = column.primary_key ? (pkCount > 1 ? 'part of the primary key' : 'primary key') : undefined;
  const nullability = column.nullable ? 'nullable' : 'not null';
  const fk = column.foreign_key !== undefined ? `references ${column.foreign_key}` : undefined;

  // From richest to plainest; the first that fits wins.
  const variants = [
    [type, nullability, key, fk],
    [type, nullability, key, fk === undefined ? undefined : 'foreign key'],
    [nullability, key, fk === undefined ? undefined : 'foreign key'],
  ];
  for (const facts of variants) {
    const text = `${subject}: ${facts.filter((f) => f !== undefined).join(', ')}.`;
    if (text.length <= MAX_DRAFT) return text;
  }
  return `This column: ${nullability}.`;
}

function draftEntityText(entity: CatalogEntity, ctx: CatalogContext): string {
  const kind = entity.kind === 'view' ? 'View' : 'Table';
  const n = entity.columns.length;
  const count = `${kind} with ${n} ${n === 1 ? 'column' : 'columns'}`;
  const typed = entity.columns.map((c) => {
    const type = restatableType(c.type);
    return type === undefined ? c.name : `${c.name} (${type})`;
  });
  const header = [
    `${count}: ${typed.join(', ')}.`,
    `${count}: ${entity.columns.map((c) => c.name).join(', ')}.`,
    `${count}.`,
  ];

  const pk = entity.columns.filter((c) => c.primary_key).map((c) => c.name);
  const pkText =
    pk.length === 0 ? [''] : [pk.length === 1 ? `Primary key: ${pk[0]}.` : `Primary key: (${pk.join(', ')}).`, ''];

  const fks = entity.columns.filter((c) => c.foreign_key !== undefined);
  const fkText =
    fks.length === 0
      ? ['']
      : [
          `${fks.length === 1 ? 'Foreign key' : 'Foreign keys'}: ${fks.map((c) => `${c.name} references ${c.foreign_key}`).join('; ')}.`,
          `Foreign ${fks.length === 1 ? 'key column' : 'key columns'}: ${fks.map((c) => c.name).join(', ')}.`,
          '',
        ];

  // Only upstream entities that exist: a dangling edge is a lineage defect, not a fact to restate.
  const upstream = [...new Set(entity.upstream)].filter((id) => ctx.exists(id));
  const lead = entity.kind === 'view' ? 'Defined by SQL over' : 'Recorded upstream:';
  const lineageText =
    upstream.length === 0
      ? ['']
      : [
          `${lead} ${upstream.join(', ')}.`,
          `${lead} ${upstream.length} catalog ${upstream.length === 1 ? 'entity' : 'entities'}.`,
          '',
        ];

  const parts = [header, pkText, fkText, lineageText];
  const level = parts.map(() => 0);
  // Give up detail until the text fits: column types, foreign key targets, the column list, then
  // lineage ids, and last the keys.
  const degradeOrder = [0, 2, 0, 3, 2, 3, 1];
  const render = () =>
    parts
      .map((options, i) => options[level[i]!]!)
      .filter((s) => s !== '')
      .join(' ');
  let text = render();
  for (const i of degradeOrder) {
    if (text.length <= MAX_DRAFT) break;
    if (level[i]! < parts[i]!.length - 1) level[i] = level[i]! + 1;
    text = render();
  }
  return text.length <= MAX_DRAFT ? text : `${count}.`;
}
