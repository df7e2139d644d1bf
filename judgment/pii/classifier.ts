import type { CatalogColumn, CatalogEntity, PiiCategory } from '../../domain/catalog';
import { PiiCategory as PiiCategorySchema } from '../../domain/catalog';
import type { PiiTagChange, TableReading } from '../../domain/proposal';
import { shapeOf, toItems, type ColumnShape } from './name-shape';
import { expandWords, tableTokens } from './identifier';
import {
  ACCOUNT_NOUNS,
  BANK_CONTEXT,
  CODE_SUFFIXES,
  FLAG_INNER,
  FLAG_PAIRS,
  FLAG_PREFIXES,
  FLAG_SUFFIXES,
  FUNCTION_WORDS,
  ID_SUFFIXES,
  NAME_QUALITIES,
  PAY_AMOUNT_WORDS,
  PAY_TABLE_NOUNS,
  STAT_PERIODS,
  STAT_PREFIXES,
  STAT_SUFFIXES,
  VALUE_SUFFIXES,
  WORKER_NOUNS,
  isOrgWord,
  isPersonWord,
  nounKind,
  words,
  type Concept,
  type NounKind,
} from './vocabulary';
import { readTable, type TableReadingResult } from './table-reading';
import { typeFamily as sqlTypeFamily } from '../sql/types';
import { describedPhrase, singular } from '../words';

export { splitIdentifier } from './identifier';

/**
 * The no-model PII classifier: decides from column-name tokens (a nested path read by its last segment and
 * the segments that qualify it), the column type, the table context (table name tokens and sibling columns)
 * and the column's own description, read as vocabulary only. Pure: no I/O, deterministic, safe to call from
 * any activity.
 */

export type ColumnCategory = PiiCategory | 'business_contact' | 'geo_coarse' | 'identifier' | 'none';

export interface ColumnClassification {
  pii: boolean;
  category: ColumnCategory;
  confidence: number;
  /** One line, at most 200 characters: the evidence that decided. */
  explanation: string;
  /** Whose record the table's rows were read as (judgment/pii/table-reading.ts). */
  reading: TableReading;
}

// ---------------------------------------------------------------------------------------------------
// Types

/** sql-types' families, with the ones no rule here tells apart (arrays, interval, domains) read as unknown. */
type TypeFamily = Exclude<ReturnType<typeof sqlTypeFamily>, 'array' | 'other'>;

function typeFamily(type: string): TypeFamily {
  const family = sqlTypeFamily(type);
  return family === 'array' || family === 'other' ? 'unknown' : family;
}

const TEXTUAL: ReadonlySet<TypeFamily> = new Set(['text', 'unknown', 'enum']);

const NUMERIC: readonly TypeFamily[] = ['int', 'decimal', 'float'];
const DATED: readonly TypeFamily[] = ['date', 'timestamp', 'time'];
const fits = (...families: Array<TypeFamily | readonly TypeFamily[]>): ReadonlySet<TypeFamily> =>
  new Set(families.flat());

/** Types a value of each kind can plausibly be stored in. */
const TYPE_FITS: Record<Concept, ReadonlySet<TypeFamily>> = {
  name_part: TEXTUAL,
  name: TEXTUAL,
  birth: fits(DATED, 'text', 'int', 'unknown'),
  postal: fits('text', 'int', 'unknown'),
  ip: fits('text', 'network', 'int', 'binary', 'unknown'),
  email: TEXTUAL,
  phone: fits('text', NUMERIC, 'unknown'),
  extension: fits('text', 'int', 'unknown'),
  national: fits('text', NUMERIC, 'binary', 'unknown'),
  card: fits('text', NUMERIC, 'binary', 'unknown'),
  bank: fits('text', NUMERIC, 'binary', 'unknown'),
  account_number: fits('text', NUMERIC, 'binary', 'unknown'),
  username: TEXTUAL,
  credential: fits('text', 'binary', 'uuid', 'unknown'),
  gender: fits('text', 'enum', 'int', 'bool', 'unknown'),
  compensation: fits(NUMERIC, 'text', 'unknown'),
  address: fits([...TEXTUAL], 'json'),
  location: fits('decimal', 'float', 'spatial', 'text', 'json', 'unknown'),
  geo: fits('text', 'enum', 'int', 'unknown', 'decimal', 'float'),
  free_text: fits('text', 'unknown', 'json'),
  personal_record: fits('text', 'unknown', 'json'),
  kin: fits('text', 'unknown', 'json'),
  photo: fits('binary', 'text', 'unknown'),
  org_name: TEXTUAL,
  web: TEXTUAL,
  title: TEXTUAL,
  salutation: TEXTUAL,
  device: TEXTUAL,
};

// ---------------------------------------------------------------------------------------------------
// Table context

interface TableContext {
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

interface ContactSibling {
  column: CatalogColumn;
  shape: ColumnShape;
}

// Table context depends on the entity's name, description and column names, which a sweep never changes.
const tableContextCache = new WeakMap<CatalogEntity, { description?: string; context: TableContext }>();

function tableContext(entity: CatalogEntity): TableContext {
  const hit = tableContextCache.get(entity);
  if (hit && hit.description === entity.description) return hit.context;
  const context = computeTableContext(entity);
  tableContextCache.set(entity, { description: entity.description, context });
  return context;
}

function computeTableContext(entity: CatalogEntity): TableContext {
  const tokens = tableTokens(entity.name);
  const reading = readTable(entity);
  const { kind } = reading;
  const shapes = entity.columns.map((c) => ({ column: c, shape: shapeOf(c.name) }));

  const payTable = tokens.some((t) => PAY_TABLE_NOUNS.has(singular(t)) || t === 'pay');
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

// ---------------------------------------------------------------------------------------------------
// Decision

type Owner = 'person' | 'organisation' | 'thing' | 'geo' | 'machine' | undefined;

/** The nearest qualifying noun to the left of the value word decides whose value it is. */
function ownerOf(modifiers: readonly string[]): { owner: Owner; word?: string } {
  for (const m of modifiers) {
    if (m.length <= 1 || VALUE_SUFFIXES.has(m)) continue;
    if (isPersonWord(m)) return { owner: 'person', word: m };
    if (isOrgWord(m)) return { owner: 'organisation', word: m };
    const k = nounKind(m);
    if (k === 'geo') return { owner: 'geo', word: m };
    if (k === 'thing') return { owner: 'thing', word: m };
    if (k === 'infra') return { owner: 'machine', word: m };
  }
  return { owner: undefined };
}

function isPlural(word: string): boolean {
  return singular(word) !== word;
}

/** The word that makes a name a statistic about people (count, avg, "number of", "weekly active"), if any. */
export function statisticMarker(tokens: readonly string[]): string | undefined {
  const first = tokens[0];
  const last = tokens[tokens.length - 1];
  if (tokens.length < 2 || first === undefined || last === undefined) return undefined;
  if (STAT_PREFIXES.has(first)) return first;
  if (STAT_SUFFIXES.has(last)) return last;
  const next = tokens[1] as string;
  if ((first === 'number' || first === 'n') && (next === 'of' || isPlural(next))) return `${first} ${next}`;
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (STAT_PERIODS.has(tokens[i] as string) && tokens[i + 1] === 'active') return `${tokens[i]} active`;
  }
  return undefined;
}

/** The word that makes a name a yes/no flag (is_, has_, _verified, _opted_out), if any. */
export function flagMarker(tokens: readonly string[]): string | undefined {
  const first = tokens[0];
  const last = tokens[tokens.length - 1];
  if (tokens.length < 2 || first === undefined || last === undefined) return undefined;
  if (FLAG_PREFIXES.has(first)) return first;
  const inner = tokens.find((t) => FLAG_INNER.has(t));
  if (inner) return inner;
  if (FLAG_SUFFIXES.has(last)) return last;
  const pair = tokens.slice(-2).join(' ');
  if (FLAG_PAIRS.has(pair)) return pair;
  return undefined;
}

interface Verdict {
  category: ColumnCategory;
  pii: boolean;
  confidence: number;
  why: string;
  /**
   * The name settles it: a key, a statistic or a flag whatever a description says ('name'); a non-person owner
   * (supplier_phone) unless the description names a person as the owner ('owner').
   */
  decisive?: 'name' | 'owner';
}

const pii = (category: PiiCategory, confidence: number, why: string): Verdict => ({
  category,
  pii: true,
  confidence,
  why,
});
const notPii = (category: Exclude<ColumnCategory, PiiCategory>, confidence: number, why: string): Verdict => ({
  category,
  pii: false,
  confidence,
  why,
});

const STRONG_KEYED: ReadonlySet<Concept> = new Set(['national', 'card']);
const ID_VALUE_CONCEPTS: ReadonlySet<Concept> = new Set(['email', 'username', 'national', 'phone']);

/**
 * Classifies one column of `entity`. Pure and deterministic; the explanation names the deciding evidence
 * (name tokens, type, table context, the words of the column's own description) in one line of at most
 * 200 characters.
 */
export function classifyColumn(column: CatalogColumn, entity: CatalogEntity): ColumnClassification {
  const verdict = decide(column, entity);
  lookCache.set(column, { entity, description: column.description, pii: verdict.pii });
  const explanation = `${column.name}: ${verdict.why}`.replace(/\s+/g, ' ').trim();
  return {
    pii: verdict.pii,
    category: verdict.category,
    confidence: Math.round(verdict.confidence * 100) / 100,
    explanation: explanation.length > 200 ? `${explanation.slice(0, 197)}...` : explanation,
    reading: tableContext(entity).reading.reading,
  };
}

// Whether a column looks like PII depends on its name, type, keys and description and on its table's name and
// columns. A page's figures before and after its writes, and its PII agent, ask once between them; a description
// written in between is seen because the description is part of the key.
const lookCache = new WeakMap<CatalogColumn, { entity: CatalogEntity; description?: string; pii: boolean }>();

/** classifyColumn(column, entity).pii, remembered per column. */
export function looksLikePii(column: CatalogColumn, entity: CatalogEntity): boolean {
  const hit = lookCache.get(column);
  if (hit && hit.entity === entity && hit.description === column.description) return hit.pii;
  const pii = decide(column, entity).pii;
  lookCache.set(column, { entity, description: column.description, pii });
  return pii;
}

/** The name's verdict, then the column's own description weighed against it. */
function decide(column: CatalogColumn, entity: CatalogEntity): Verdict {
  const shape = shapeOf(column.name);
  const family = typeFamily(column.type);
  const table = tableContext(entity);
  const byName = decideByName(column, shape, family, table);
  const reading = readDescription(column, byName, family, table);
  return reading ? weighDescription(byName, reading) : byName;
}

function decideByName(column: CatalogColumn, shape: ColumnShape, family: TypeFamily, table: TableContext): Verdict {
  const nameWords = shape.items.map((t) => t.text);
  const last = nameWords[nameWords.length - 1] ?? '';
  const keyed = column.primary_key || column.foreign_key !== undefined;
  const tokensText = `tokens "${shape.words.join(' ')}"`;

  // Keys: a surrogate or foreign key identifies a row, not a person, unless the key is itself a national id or card.
  if (keyed && (family === 'int' || family === 'uuid') && !(shape.concept && STRONG_KEYED.has(shape.concept))) {
    return decisive(
      notPii(
        'identifier',
        0.95,
        `${column.primary_key ? 'primary' : 'foreign'} key of type ${column.type}: surrogate identifier`,
      ),
    );
  }
  // An individual's pay stays pay whatever its figure is called (commission_rate, total_compensation).
  const stat = shape.concept === 'compensation' || table.payTable ? undefined : statisticMarker(nameWords);
  if (stat) {
    return decisive(
      notPii('none', 0.8, `${tokensText}: "${stat}" makes it a statistic about people, not a person's data`),
    );
  }
  const flag = shape.concept === 'gender' ? undefined : flagMarker(nameWords);
  if (flag) {
    return decisive(
      notPii('none', 0.8, `${tokensText}: "${flag}" makes it a yes/no flag about a value, not the value`),
    );
  }
  // "ph" is a phone only as text: a decimal ph is a pH reading.
  if (shape.concept === 'phone' && shape.rawLeaf.includes('ph') && (family === 'decimal' || family === 'float')) {
    return notPii('none', 0.6, `${tokensText}: "ph" with type ${column.type} reads as a pH value, not a phone`);
  }
  if (ID_SUFFIXES.has(last)) {
    const beforeItem = shape.items[shape.items.length - 2];
    const before = beforeItem?.concept;
    // email_id, login_id hold the value; cell_id is a radio cell, not a mobile.
    if (before && ID_VALUE_CONCEPTS.has(before) && beforeItem.text !== 'cell' && !keyed && TEXTUAL.has(family)) {
      return conceptVerdict(before, { ...shape, concept: before }, family, table, column, tokensText);
    }
    return notPii('identifier', 0.9, `${tokensText} end in "${last}": a key, not personal data`);
  }
  if (!shape.concept) {
    // confirmed_by, received_by: who did it to the row.
    const act = actorVerb(nameWords);
    if (act) {
      if (family === 'int' || family === 'uuid')
        return notPii('identifier', 0.75, `${tokensText} with type ${column.type}: a key of who ${act} it`);
      if (table.kind === 'infra')
        return notPii('none', 0.6, `${tokensText}; ${table.reason}: a machine's record, not a person's`);
      if (TEXTUAL.has(family))
        return pii('person_name', 0.6, `${tokensText} name who ${act} the row: a person's name or login`);
      return notPii('none', 0.7, `${tokensText} with type ${column.type}: not who ${act} it`);
    }
    if (CODE_SUFFIXES.has(last) && nameWords.length > 1) {
      return notPii('identifier', 0.8, `${tokensText} name a code or number of a record, not of a person`);
    }
    if (column.foreign_key !== undefined) return notPii('identifier', 0.85, `foreign key with ${tokensText}`);
    // A column named after a person's role (manager, salesperson, contact_person) holds that person.
    if (isPersonWord(last) && !isOrgWord(last)) {
      // invoice.customer, subscription.customer: the processor's key for the customer (cus_...), not a name.
      // onboarding_manager__c typed varchar(18) like the row's own key: a lookup to the manager's record.
      if (
        !isPlural(last) &&
        TEXTUAL.has(family) &&
        !column.primary_key &&
        table.keyType !== undefined &&
        table.keyType === keyTypeOf(column)
      )
        return notPii(
          'identifier',
          0.6,
          `${tokensText} typed ${column.type} like the key of "${table.name}": a reference to the ${singular(last)}'s record`,
        );
      if (PARTY_REFERENCES.has(last) && TEXTUAL.has(family) && !table.reading.headIsPerson)
        return notPii(
          'identifier',
          0.6,
          `${tokensText} on ${table.reading.reading} rows of "${table.name}": a reference to the ${singular(last)}'s record, not a name`,
        );
      // A plural (active_users, new_customers) names a group: without a text type it is a count of them.
      if (isPlural(last) && family !== 'text' && family !== 'enum')
        return notPii('none', 0.7, `${tokensText} name a group of people and type ${column.type}: a count of them`);
      // db_user, host_login: an account of a machine, not a person.
      const machine = [...nameWords.slice(0, -1), ...shape.qualifiers].find((w) => nounKind(w) === 'infra');
      if (machine) return notPii('none', 0.65, `${tokensText}: qualifier "${machine}" names a machine, not a person`);
      if (TEXTUAL.has(family))
        return pii(
          'person_name',
          0.65,
          `${tokensText} name a person's role and the type ${column.type} holds text: a person's name`,
        );
      if (family === 'int' || family === 'uuid')
        return notPii('identifier', 0.7, `${tokensText} name a role but type ${column.type} is a reference`);
      // payload.customer, buyer as json: a nested record about that person.
      if (family === 'json')
        return pii('free_text_personal', 0.6, `${tokensText} name a person and type ${column.type} nests their record`);
    }
    if (family === 'spatial')
      return conceptVerdict(
        'location',
        { ...shape, concept: 'location' },
        family,
        table,
        column,
        `type ${column.type}`,
      );
    // On a pay record (salaries, employee_pay_history) the rate or amount is the pay itself.
    if (
      table.payTable &&
      (NUMERIC.includes(family) || family === 'unknown') &&
      nameWords.some((w) => PAY_AMOUNT_WORDS.has(w))
    ) {
      return pii('compensation', 0.7, `numeric ${tokensText}; ${table.reason}: an individual's pay`);
    }
    return notPii('none', 0.8, `${tokensText} match no personal-data pattern`);
  }
  if (column.foreign_key !== undefined && !['email', 'username', 'national', 'card', 'phone'].includes(shape.concept)) {
    return decisive(notPii('identifier', 0.85, `foreign key with ${tokensText}`));
  }
  const verdict = conceptVerdict(shape.concept, shape, family, table, column, tokensText);
  // supplier_phone, server_ip: the name itself says whose value it is.
  const { owner } = ownerOf(ownerModifiers(shape.concept, shape.modifiers));
  return !verdict.pii && owner !== undefined && owner !== 'person' ? { ...verdict, decisive: 'owner' } : verdict;
}

const decisive = (verdict: Verdict): Verdict => ({ ...verdict, decisive: 'name' });

/** A column's type as a key comparison reads it: lower case, no spaces; a bare text type says nothing. */
function keyTypeOf(column: CatalogColumn): string | undefined {
  const t = column.type.toLowerCase().replace(/\s+/g, '');
  return /\(\d+\)/.test(t) ? t : undefined;
}

/** Bare party nouns that, on another party's row, reference that party's record in its own system. */
const PARTY_REFERENCES = words('customer client subscriber payer');

/** Verbs of what a person does to a record: confirmed_by, received_by name who did it. */
const ACT_VERBS = words(`
  created updated modified changed edited deleted entered recorded received confirmed approved rejected reviewed
  verified checked signed submitted requested assigned completed closed opened resolved cancelled canceled
  authorized authorised prepared processed handled inspected packed picked accepted acknowledged witnessed
  performed reported raised logged booked invited referred released counted
`);

/** The verb of a "<verb> by" name (confirmed_by, ReceivedBy), if it is one. */
function actorVerb(nameWords: readonly string[]): string | undefined {
  const verb = nameWords[nameWords.length - 2];
  return nameWords[nameWords.length - 1] === 'by' && verb !== undefined && ACT_VERBS.has(verb) ? verb : undefined;
}

/** Address roles that, on a company's record, are the company's addresses (billing_street, shipping_latitude). */
const ADDRESS_ROLES = words('billing shipping mailing delivery');

/** A sibling e-mail, phone or address under the same qualifier as this name, when that contact is a person's. */
function siblingContact(shape: ColumnShape, table: TableContext): ContactSibling | undefined {
  const at = shape.items.findIndex((t) => t.concept === 'name');
  if (at <= 0) return undefined;
  const qualifier = shape.items
    .slice(0, at)
    .map((t) => t.text)
    .join(' ');
  const sibling = table.contactQualifiers.get(qualifier);
  if (!sibling?.shape.concept) return undefined;
  const verdict = conceptVerdict(
    sibling.shape.concept,
    sibling.shape,
    typeFamily(sibling.column.type),
    table,
    sibling.column,
    '',
  );
  return verdict.pii ? sibling : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Descriptions: the column's own text, read for its vocabulary only

/** Words that say a value was hashed or anonymised: no longer the person's value itself. */
const HASH_WORDS = words(
  'hash hashed hashes sha sha1 sha256 md5 digest salted anonymised anonymized anonymous irreversible',
);
/** Openers of a description of a statistic ("Aggregated number of...", "How many..."), beyond STAT_PREFIXES. */
const DESCRIPTION_STAT_OPENERS = words('aggregated aggregate aggregation summed how');
/** Openers of a description of a yes/no flag ("Whether the customer...", "True when..."). */
const DESCRIPTION_FLAG_OPENERS = words('whether true false boolean yes flag flags');
const DESCRIPTION_FLAG_VERBS = words('indicates indicating shows tells says marks');
/** What a description says a value is not ("not a personal line", "non-personal", "no PII"). */
const DENIED = words('personal pii personally identifying identifiable sensitive');
const NEGATIONS = words('not no non never nothing');
/** A business's shared lines and mailboxes. */
const BUSINESS_LINES = words('switchboard reception hotline helpdesk servicedesk');
const BUSINESS_LINE_PAIRS = new Set([
  'main line',
  'front desk',
  'shared mailbox',
  'generic mailbox',
  'role mailbox',
  'team mailbox',
  'group mailbox',
  'distribution list',
  'service desk',
  'help desk',
]);
/** Head words that make a description one of free text ("Text written by the customer..."). */
const FREE_TEXT_HEADS = words('text message messages narrative prose writeup transcript');

interface DescriptionReading {
  /** The description's words that were read, for explanations: never its raw text. */
  quote: string;
  /** What the description says the column holds, judged like a name with the description's owner words. */
  verdict?: Verdict;
  /** The owner the description names, when it names one. */
  owner: Owner;
  ownerWord?: string;
  /** Why the description says the column is not personal data. */
  against?: { category: 'business_contact' | 'none'; why: string };
}

/**
 * Reads the column's own description as vocabulary: the concept its opening noun phrase names, whose value
 * it says it is, and whether it says the value is a statistic, a flag, hashed or not personal. A description
 * that gives orders is not evidence of anything.
 */
function readDescription(
  column: CatalogColumn,
  byName: Verdict,
  family: TypeFamily,
  table: TableContext,
): DescriptionReading | undefined {
  const d = describedPhrase(column.description);
  if (!d || d.instruction || d.clause.length === 0) return undefined;
  const head = expandWords(d.head);
  const subject = expandWords(d.subject);
  const clause = expandWords(d.clause);
  const quote = `description "${[...d.head, ...(d.subject.length > 0 ? ['…', ...d.subject] : [])].join(' ').slice(0, 60)}"`;

  // The concept: the first one the opening phrase names; "date of birth" spans a preposition; "Text written
  // by the customer" is free text.
  const items = toItems(head);
  let at = items.findIndex((t) => t.concept !== undefined);
  let conceptItems = items;
  if (at < 0) {
    const clauseItems = toItems(clause);
    const spanning = clauseItems.findIndex((t) => t.concept !== undefined && t.text.includes(' of '));
    if (spanning >= 0) {
      conceptItems = clauseItems;
      at = spanning;
    }
  }
  let concept = at >= 0 ? conceptItems[at]?.concept : undefined;
  if (!concept) {
    at = items.findIndex((t) => FREE_TEXT_HEADS.has(t.text));
    if (at >= 0) {
      concept = 'free_text';
      conceptItems = items;
    }
  }
  // "by the customer" names an author: whose the text is, but not whose phone or address.
  const authorOnly = d.subjectIntro === 'by' || d.subjectIntro === 'from';
  const subjectNearestFirst = authorOnly && concept !== 'free_text' ? [] : [...subject].reverse();
  const modifiers =
    at >= 0
      ? [
          ...conceptItems
            .slice(0, at)
            .flatMap((t) => t.text.split(' '))
            .reverse(),
          ...conceptItems.slice(at + 1).flatMap((t) => t.text.split(' ')),
          ...subjectNearestFirst,
        ]
      : [...head].reverse();
  const { owner, word: ownerWord } = ownerOf(concept ? ownerModifiers(concept, modifiers) : modifiers);
  const nameConcept = byName.category;

  const against = ((): DescriptionReading['against'] => {
    const hashed = d.words.find((w) => HASH_WORDS.has(w));
    if (hashed && nameConcept !== 'credential' && concept !== 'credential')
      return { category: 'none', why: `${quote} says "${hashed}": not the person's value itself` };
    const first = d.clause[0] ?? '';
    const stat =
      nameConcept === 'compensation' || concept === 'compensation'
        ? undefined
        : (statisticMarker(clause) ?? (DESCRIPTION_STAT_OPENERS.has(first) ? first : undefined));
    if (stat) return { category: 'none', why: `${quote} opens with "${stat}": a statistic, not a person's data` };
    if (
      DESCRIPTION_FLAG_OPENERS.has(first) ||
      (DESCRIPTION_FLAG_VERBS.has(first) && ['whether', 'if'].includes(d.clause[1] ?? ''))
    )
      return { category: 'none', why: `${quote} opens with "${first}": a yes/no flag, not the value` };
    const denied = d.words.findIndex(
      (w, i) => DENIED.has(w) && d.words.slice(Math.max(0, i - 3), i).some((n) => NEGATIONS.has(n)),
    );
    if (denied >= 0) return { category: 'none', why: `${quote} says it is not ${d.words[denied]}` };
    const line =
      d.words.find((w) => BUSINESS_LINES.has(w)) ??
      d.words.map((w, i) => `${w} ${d.words[i + 1] ?? ''}`).find((p) => BUSINESS_LINE_PAIRS.has(p));
    if (line) return { category: 'business_contact', why: `${quote} names a business's "${line}"` };
    return undefined;
  })();

  const shape: ColumnShape = {
    items: conceptItems,
    ...(concept ? { concept } : {}),
    modifiers,
    qualifiers: [],
    words: [...head, ...subject],
    rawLeaf: d.head,
  };
  const verdict = concept ? conceptVerdict(concept, shape, family, table, column, quote) : undefined;
  return {
    quote,
    ...(verdict ? { verdict: { ...verdict, confidence: Math.min(verdict.confidence, 0.85) } } : {}),
    owner,
    ...(ownerWord ? { ownerWord } : {}),
    ...(against ? { against } : {}),
  };
}

/**
 * A description is as good as a name: it can make an opaque column personal, say whose a value is, or say that
 * the value is not personal (a statistic, a flag, a hash, a business's line). It cannot undo what the name
 * settles (a key, a statistic, a flag, a supplier's phone).
 */
function weighDescription(byName: Verdict, reading: DescriptionReading): Verdict {
  const { verdict, against } = reading;
  if (!byName.pii) {
    if (byName.decisive === 'name' || against || !verdict?.pii) return byName;
    // vendor_name described as "Name of the homeowner selling the property": the description names the person.
    if (byName.decisive === 'owner' && reading.owner !== 'person') return byName;
    return verdict;
  }
  if (against) return notPii(against.category, 0.7, `${against.why}; the name alone read ${byName.category}`);
  if (verdict) {
    // "Main line of the site", "IP address of the relay server": the description names a non-person owner.
    if (!verdict.pii && reading.owner !== undefined && reading.owner !== 'person') return verdict;
    // "sender" described as the e-mail address the customer wrote from: the description is the more specific.
    if (verdict.pii && verdict.category !== byName.category && byName.category !== 'credential') return verdict;
    return byName;
  }
  if (reading.owner === 'organisation' || reading.owner === 'machine') {
    const category = reading.owner === 'organisation' ? 'business_contact' : 'none';
    return notPii(
      category,
      0.65,
      `${reading.quote}: qualifier "${reading.ownerWord ?? ''}" names ${reading.owner === 'organisation' ? 'an organisation' : 'a machine'}, not a person`,
    );
  }
  return byName;
}

/** The words that may name a value's owner: "bank" in bank_iban says what kind of account, not whose. */
function ownerModifiers(concept: Concept, modifiers: readonly string[]): readonly string[] {
  return concept === 'bank' || concept === 'account_number' ? modifiers.filter((m) => !BANK_CONTEXT.has(m)) : modifiers;
}

function conceptVerdict(
  concept: Concept,
  shape: ColumnShape,
  family: TypeFamily,
  table: TableContext,
  column: CatalogColumn,
  tokensText: string,
): Verdict {
  if (!TYPE_FITS[concept].has(family)) {
    return notPii(
      'none',
      0.7,
      `${tokensText} suggest ${concept.replace('_', ' ')} but type ${column.type} cannot hold one`,
    );
  }
  const { owner, word: ownerWord } = ownerOf(ownerModifiers(concept, shape.modifiers));
  const ownerText = ownerWord
    ? `qualifier "${ownerWord}" names ${owner === 'person' ? 'a person' : owner === 'organisation' ? 'an organisation' : owner === 'machine' ? 'a machine' : 'a place or thing'}`
    : table.reason;
  // Whose contact detail is this: a person's (PII) or an organisation's (business contact)?
  const contactOwner = (): 'person' | 'organisation' | 'coarse' =>
    owner === 'person'
      ? 'person'
      : owner === 'organisation'
        ? 'organisation'
        : owner === 'geo'
          ? 'coarse'
          : table.kind === 'organisation' || table.kind === 'thing'
            ? 'organisation'
            : table.kind === 'geo'
              ? 'coarse'
              : 'person';
  const personal =
    owner === 'person' ||
    (owner === undefined &&
      (table.kind === 'person' || table.kind === 'neutral' || table.kind === 'ledger' || table.kind === 'infra'));

  switch (concept) {
    case 'name_part':
      if (owner === 'organisation')
        return notPii('business_contact', 0.6, `${tokensText}; ${ownerText}: an organisation's name`);
      return pii('person_name', 0.95, `${tokensText} name a part of a person's name`);
    case 'name':
      return nameVerdict(shape, table, tokensText);
    case 'birth':
      if (!personal) return notPii('none', 0.6, `${tokensText} is a birth date,; ${ownerText}: not a person`);
      return pii(
        'birth_date',
        family === 'date' || family === 'timestamp' ? 0.95 : 0.85,
        `${tokensText} with type ${column.type}: a date of birth`,
      );
    case 'gender':
      if (!personal) return notPii('none', 0.6, `${tokensText}; ${ownerText}: not a person`);
      return pii('gender', 0.9, `${tokensText}: a person's gender or sex`);
    case 'national':
      if (owner === 'organisation' || (owner === undefined && table.kind === 'organisation')) {
        return notPii('business_contact', 0.7, `${tokensText}; ${ownerText}: a business registration or tax number`);
      }
      return pii('national_id', 0.9, `${tokensText}: a government-issued personal identifier`);
    case 'card':
      if (owner === 'organisation' || (owner === undefined && table.kind === 'organisation')) {
        return notPii('business_contact', 0.6, `${tokensText}; ${ownerText}: an organisation's card`);
      }
      return pii('payment_card', 0.9, `${tokensText}: a payment card number or code`);
    case 'bank':
    case 'account_number':
      return bankVerdict(concept, shape, owner, table, tokensText, ownerText);
    case 'username':
      // smtp_username, bind_username in a server's settings: the machine's service account.
      if (table.kind === 'infra' && owner !== 'person')
        return notPii(
          'none',
          0.65,
          `${tokensText}; ${table.reason}: a machine's service account, not a person's login`,
        );
      if (table.kind === 'thing' || table.kind === 'geo' || owner === 'organisation') {
        return notPii('none', 0.6, `${tokensText}; ${table.reason}: not a person's login`);
      }
      return pii('username', 0.85, `${tokensText}: a login or handle of a person`);
    case 'credential':
      if (table.kind === 'thing' || table.kind === 'geo') return notPii('none', 0.55, `${tokensText}; ${table.reason}`);
      // zoom_api_key, github_oauth_client_secret in a server's settings: a machine's secret, sensitive but not personal.
      if ((table.kind === 'infra' || owner === 'machine') && owner !== 'person')
        return notPii(
          'none',
          0.6,
          `${tokensText}; ${owner === 'machine' ? ownerText : table.reason}: a machine's secret, not a person's data`,
        );
      return pii(
        'credential',
        table.mentionsPerson || owner === 'person' ? 0.85 : 0.65,
        `${tokensText}: a secret that authenticates an account`,
      );
    case 'ip':
      if (owner === 'machine') return notPii('none', 0.7, `${tokensText}; ${ownerText}: a machine's address`);
      if (table.kind === 'infra' && owner !== 'person')
        return notPii('none', 0.6, `${tokensText}; ${table.reason}: a machine's address`);
      return pii('ip_address', 0.85, `${tokensText}: an IP address, which identifies a person's device`);
    case 'email':
    case 'phone':
    case 'address':
    case 'postal':
    case 'location': {
      if (owner === 'machine' && concept !== 'email' && concept !== 'phone')
        return notPii('none', 0.7, `${tokensText}; ${ownerText}: a machine's address, not a person's`);
      // A mast's site address, a sensor's coordinates: where an installation is, not where a person is.
      if (owner === undefined && table.kind === 'infra' && concept !== 'email' && concept !== 'phone')
        return notPii('none', 0.65, `${tokensText}; ${table.reason}: where an installation is, not a person`);
      // billing_email, billing_contact_email on a company's row: a business function's mailbox.
      const role = shape.modifiers.find((m) => FUNCTION_WORDS.has(m) || (table.businessRow && ADDRESS_ROLES.has(m)));
      // billing_latitude on a contract: the geocode of the account's billing address.
      if (role && table.businessRow && (concept !== 'location' || ADDRESS_ROLES.has(role)))
        return notPii(
          'business_contact',
          0.7,
          `${tokensText}; qualifier "${role}" names a business function and ${table.reason}: a business contact`,
        );
      return contactVerdict(concept, contactOwner(), tokensText, ownerText, table, column, family);
    }
    case 'extension':
      if (table.kind === 'person' && owner !== 'organisation')
        return pii('phone', 0.55, `${tokensText}; ${table.reason}: a person's phone extension`);
      return notPii('none', 0.6, `${tokensText} outside a person table`);
    case 'compensation':
      if (
        owner === 'person' ||
        table.kind === 'person' ||
        (table.payContext && table.kind !== 'thing' && table.kind !== 'organisation')
      ) {
        return pii(
          'compensation',
          0.85,
          `${tokensText} with ${owner === 'person' ? ownerText : table.kind === 'person' ? table.reason : 'a paid person linked on the row'}: an individual's pay`,
        );
      }
      return notPii(
        'none',
        0.65,
        `${tokensText} but ${table.reason}, with no person on the row: not an individual's pay`,
      );
    case 'free_text':
      if (owner === 'person' || (owner === undefined && table.kind === 'person')) {
        return pii('free_text_personal', 0.75, `free text (${tokensText}); ${ownerText}: notes about a person`);
      }
      return notPii('none', 0.6, `free text (${tokensText}); ${ownerText}: not about a person`);
    case 'personal_record':
      // contact_info, demographics, skills, profile json: a semi-structured record of the row's person.
      if (owner === 'person' || (owner === undefined && table.kind === 'person')) {
        return pii('free_text_personal', 0.7, `${tokensText}; ${ownerText}: a record of a person's details`);
      }
      if (owner === 'organisation' || (owner === undefined && table.kind === 'organisation'))
        return notPii('business_contact', 0.6, `${tokensText}; ${ownerText}: an organisation's details`);
      return notPii('none', 0.6, `${tokensText}; ${ownerText}: details of a thing, not a person`);
    case 'kin':
      // next_of_kin, emergency_contact: another person's details, wherever the row is.
      if (owner === 'organisation' || owner === 'machine' || table.kind === 'thing' || table.kind === 'geo')
        return notPii('none', 0.55, `${tokensText}; ${ownerText}: not a person's contact`);
      if (family === 'json')
        return pii('free_text_personal', 0.7, `${tokensText} with type ${column.type}: a related person's details`);
      return pii('person_name', 0.65, `${tokensText}: names a related person (next of kin, emergency contact)`);
    case 'photo':
      if (owner === 'person' || (owner === undefined && table.kind === 'person')) {
        // A person's photograph is personal data but PiiCategory has no image/biometric category.
        return {
          category: 'none',
          pii: true,
          confidence: 0.7,
          why: `${tokensText}; ${ownerText}: a photograph of a person (no ARGUS category)`,
        };
      }
      return notPii('none', 0.7, `${tokensText}; ${ownerText}: an image of a thing`);
    case 'geo':
      return notPii('geo_coarse', 0.9, `${tokensText}: coarse geography, not personal on its own`);
    case 'org_name':
      return notPii('business_contact', 0.85, `${tokensText}: the name of an organisation`);
    case 'web':
      if (table.kind === 'organisation' || table.kind === 'thing' || owner === 'organisation') {
        return notPii('business_contact', 0.75, `${tokensText}; ${table.reason}: an organisation's website`);
      }
      return notPii('none', 0.6, `${tokensText}: a web address`);
    case 'title':
      return notPii('none', 0.85, `${tokensText}: a title (job, work or courtesy), not identifying on its own`);
    case 'salutation':
      return notPii('none', 0.5, `${tokensText}: a courtesy title, not identifying on its own`);
    case 'device':
      return notPii('none', 0.6, `${tokensText}: device metadata`);
  }
}

const CONTACT_CATEGORY: Record<'email' | 'phone' | 'address' | 'postal' | 'location', PiiCategory> = {
  email: 'email',
  phone: 'phone',
  address: 'address',
  postal: 'postal_code',
  location: 'precise_location',
};

function contactVerdict(
  concept: 'email' | 'phone' | 'address' | 'postal' | 'location',
  who: 'person' | 'organisation' | 'coarse',
  tokensText: string,
  ownerText: string,
  table: TableContext,
  column: CatalogColumn,
  family: TypeFamily,
): Verdict {
  const category = CONTACT_CATEGORY[concept];
  const label = category.replace('_', ' ');
  if (who === 'organisation')
    return notPii('business_contact', 0.8, `${tokensText}; ${ownerText}: a business's ${label}`);
  if (who === 'coarse')
    return notPii('geo_coarse', 0.7, `${tokensText}; ${ownerText}: describes a place, not a person`);
  const base = table.kind === 'person' ? 0.9 : 0.75;
  const typed = concept === 'phone' && family === 'int' ? base - 0.2 : base;
  return pii(
    category,
    typed,
    `${tokensText}; ${ownerText}${family === 'int' ? ` (type ${column.type})` : ''}: a person's ${label}`,
  );
}

function nameVerdict(shape: ColumnShape, table: TableContext, tokensText: string): Verdict {
  const sibling = siblingContact(shape, table);
  for (const m of shape.modifiers) {
    if (m.length <= 1 || NAME_QUALITIES.has(m)) continue;
    if (isPersonWord(m)) return pii('person_name', 0.85, `${tokensText}: the name of a ${singular(m)}, a person`);
    if (isOrgWord(m))
      return notPii('business_contact', 0.8, `${tokensText}: the name of a ${singular(m)}, an organisation`);
    if (nounKind(m) === 'geo') return notPii('geo_coarse', 0.8, `${tokensText}: the name of a place`);
    // supplied_name beside supplied_email, shipping_name beside shipping_phone: the same party's name.
    if (sibling)
      return pii(
        'person_name',
        0.7,
        `${tokensText} beside ${sibling.column.name}, a person's contact: that person's name`,
      );
    return notPii('none', 0.7, `${tokensText}: a ${m} name, not a person's`);
  }
  switch (table.kind) {
    case 'person':
      return pii('person_name', 0.8, `${tokensText}; ${table.reason}: a person's name`);
    case 'organisation':
      return notPii('business_contact', 0.75, `${tokensText}; ${table.reason}: an organisation's name`);
    case 'geo':
      return notPii('geo_coarse', 0.8, `${tokensText}; ${table.reason}: a place name`);
    default:
      return notPii('none', 0.7, `${tokensText}; ${table.reason}: names a record, not a person`);
  }
}

function bankVerdict(
  concept: 'bank' | 'account_number',
  shape: ColumnShape,
  owner: Owner,
  table: TableContext,
  tokensText: string,
  ownerText: string,
): Verdict {
  if (table.kind === 'ledger')
    return notPii('none', 0.8, `${tokensText}; ${table.reason}: a bookkeeping account, not a person's bank account`);
  if (owner === 'organisation' || (owner === undefined && table.kind === 'organisation')) {
    return notPii('business_contact', 0.7, `${tokensText}; ${ownerText}: an organisation's bank account`);
  }
  if (concept === 'bank') return pii('bank_account', 0.85, `${tokensText}: a bank account identifier`);
  // A bare account number is usually the record's own number (customer account AW0001); only bank or
  // payout context makes it a person's bank account.
  const bankish = table.bankContext || shape.modifiers.some((m) => BANK_CONTEXT.has(m));
  if (bankish && (owner === 'person' || table.mentionsPerson || table.kind === 'neutral')) {
    return pii('bank_account', 0.75, `${tokensText} in a bank/payout context: a person's bank account`);
  }
  return notPii('identifier', 0.6, `${tokensText} with no bank or payout context: an account's record number`);
}

/**
 * Proposes a PII tag for every column classified as personal data that has no pii tag yet and is not
 * listed in `entity.pii_exceptions`. Columns that are personal but fit no PiiCategory (a photograph) are
 * skipped, since a tag needs a category.
 */
export function proposePiiTags(entity: CatalogEntity): PiiTagChange[] {
  const exceptions = new Set(entity.pii_exceptions.map((c) => c.toLowerCase()));
  const changes: PiiTagChange[] = [];
  for (const column of entity.columns) {
    if (column.tags.some((t) => t.kind === 'pii')) continue;
    if (exceptions.has(column.name.toLowerCase())) continue;
    if (!looksLikePii(column, entity)) continue;
    const result = classifyColumn(column, entity);
    const category = PiiCategorySchema.safeParse(result.category);
    if (!result.pii || !category.success) continue;
    changes.push({
      kind: 'pii_tag',
      column: column.name,
      category: category.data,
      confidence: result.confidence,
      explanation: withReading(result.explanation, result.reading),
      reading: result.reading,
    });
  }
  return changes;
}

/** A proposal's explanation: the classifier's line and, beside its tokens, the table reading it used. */
export function withReading(explanation: string, reading: TableReading): string {
  return `${explanation} [table read as ${reading}]`.slice(0, 300);
}
