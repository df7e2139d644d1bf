import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';
import { perEntityAndDescription } from '../entity-memo';
import { tableTokens } from './identifier';
import { shapeOf, type ColumnShape } from './name-shape';
import { readTable, type TableReadingResult } from './table-reading';
import { TEXTUAL, typeFamily } from './type-fits';
import {
  ACCOUNT_NOUNS,
  BANK_CONTEXT,
  CODE_SUFFIXES,
  ID_SUFFIXES,
  isPayTableWord,
  WORKER_NOUNS,
  type NounKind,
} from './vocabulary';
import { singular } from '../words';

/**
 * The table as the classifier weighs a column of it: whose record a row is (judgment/pii/table-reading.ts) and
 * what else the table says about pay, bank details, company accounts and the contacts its columns hold.
 */

export interface TableContext {
  name: string;
  /** The primary key's type when it is a text type (varchar(18)): what a reference to a record looks like. */
  keyType?: string;
  kind: NounKind;
  /** Why the kind was chosen, for explanations. */
  reason: string;
  /** Whose record a row is, and the refinements of that reading (judgment/pii/table-reading.ts). */
  reading: TableReadingResult;
  /** Some token of the table name names a person (customer_addresses, dept_emp). */
  mentionsPerson: boolean;
  /** The table is a pay record or links a paid person (emp_no, staff_id) next to its columns. */
  payContext: boolean;
  /** The table name itself says pay (salaries, payroll, employee_pay_history). */
  payTable: boolean;
  /** The table name speaks of bank details or payouts. */
  bankContext: boolean;
  /**
   * The table is an organisation, a company account (accounts, tenants) with no person on the row, or a record
   * of such an account (a contract with an account key).
   */
  businessRow: boolean;
  /** The columns holding an e-mail, phone or address under a qualifier (supplied_email → "supplied"). */
  contactQualifiers: ReadonlyMap<string, ContactSibling>;
}

export interface ContactSibling {
  column: CatalogColumn;
  shape: ColumnShape;
}

/** The table's context (its name, description and column names), remembered per entity and description. */
export const tableContext = perEntityAndDescription(computeTableContext);

function computeTableContext(entity: CatalogEntity): TableContext {
  const tokens = tableTokens(entity.name);
  const reading = readTable(entity);
  const { kind } = reading;
  const shapes = entity.columns.map((c) => ({ column: c, shape: shapeOf(c.name) }));

  const payTable = tokens.some(isPayTableWord);
  const payContext =
    payTable ||
    tokens.some((t) => WORKER_NOUNS.has(singular(t))) ||
    shapes.some((s) => {
      const nameWords = s.shape.items.map((t) => t.text);
      const last = nameWords[nameWords.length - 1];
      return (
        last !== undefined &&
        (ID_SUFFIXES.has(last) || CODE_SUFFIXES.has(last)) &&
        nameWords.some((w) => WORKER_NOUNS.has(singular(w)))
      );
    });

  const bankContext = tokens.some((t) => BANK_CONTEXT.has(singular(t)));
  const businessRow =
    kind === 'organisation' ||
    (kind === 'neutral' && (tokens.some((t) => ACCOUNT_NOUNS.has(singular(t))) || reading.accountLinked));
  const contactQualifiers = new Map<string, ContactSibling>();
  for (const s of shapes) {
    const concept = s.shape.concept;
    if (concept !== 'email' && concept !== 'phone' && concept !== 'address') continue;
    const at = s.shape.items.findIndex((t) => t.concept === concept);
    const qualifier = s.shape.items
      .slice(0, at)
      .map((t) => t.text)
      .join(' ');
    if (qualifier && !contactQualifiers.has(qualifier)) contactQualifiers.set(qualifier, s);
  }
  const keys = entity.columns.filter((c) => c.primary_key);
  const keyType =
    keys.length === 1 && keys[0] && TEXTUAL.has(typeFamily(keys[0].type)) ? keyTypeOf(keys[0]) : undefined;
  return {
    name: entity.name,
    ...(keyType ? { keyType } : {}),
    kind,
    reason: reading.why,
    reading,
    mentionsPerson: reading.mentionsPerson,
    payContext,
    payTable,
    bankContext,
    businessRow,
    contactQualifiers,
  };
}

/** A column's type as a key comparison reads it: lower case, no spaces; a bare text type says nothing. */
export function keyTypeOf(column: CatalogColumn): string | undefined {
  const t = column.type.toLowerCase().replace(/\s+/g, '');
  return /\(\d+\)/.test(t) ? t : undefined;
}
