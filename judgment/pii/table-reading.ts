import type { CatalogEntity } from '../../domain/catalog';
import { perEntityAndDescription } from '../entity-memo';
import type { TableReading } from '../../domain/proposal';
import { shapeOf, type ColumnShape } from './name-shape';
import { splitIdentifier, tableTokens } from './identifier';
import {
  ACCOUNT_NOUNS,
  EQUIPMENT_NOUNS,
  FLAG_PREFIXES,
  INFRA_NOUNS,
  NAME_QUALITIES,
  ORG_NOUNS,
  PAY_TABLE_NOUNS,
  PERSON_NOUNS,
  SITE_NOUNS,
  THING_NOUNS,
  isPersonWord,
  nounKind,
  words,
  type NounKind,
} from './vocabulary';
import { typeFamily } from '../sql/types';
import { singular, splitWords } from '../words';

/**
 * Whose record is a row of this table: a person's, an organisation's, a machine's, an event's, or a thing's (a
 * catalogue item, a place, a code list). Read from the table's name, its columns, its description and its keys;
 * the classifier and the gate read contact-like columns (address, phone, coordinates, secrets) through it. Pure.
 */

export interface TableReadingResult {
  reading: TableReading;
  /** The finer kind the classifier's rules read: geo inside thing, ledger inside event. */
  kind: NounKind;
  /** One clause saying why, for explanations ("account" rows describe companies: industry, website). */
  why: string;
  /** Some token of the table name names a person (customer_addresses, dept_emp). */
  mentionsPerson: boolean;
  /** The last noun of the name names people (customers, dept_emp): the rows are the people themselves. */
  headIsPerson: boolean;
  /** Rows are held by a person (licences, subscriptions, trials): their contact columns are the holder's. */
  holder: boolean;
  /** Rows are the values of a code list (addresstype: Home, Billing): nobody's data. */
  lookup: boolean;
  /** Rows are a machine's settings: flags, integration secrets and service accounts of a server or plugin. */
  settings: boolean;
  /** Rows belong to a company account (an account key and no person named on the row), as a contract does. */
  accountLinked: boolean;
  /** What decided. */
  basis: 'name' | 'columns' | 'description' | 'default';
}

/** Nouns of records a person holds: e-mail, phone and name on them are the holder's. */
const HOLDER_NOUNS = words(`
  license licence subscription trial membership registration enrollment enrolment signup entitlement
`);

/** Nouns of business records with a name of their own (an opportunity's, a case's): never a person's name. */
const RECORD_NOUNS = words(`
  onboarding reference risk opportunity deal case ticket incident contract quote renewal escalation milestone
  initiative playbook
`);

/** Table heads of a machine's configuration: servers' settings, plugins, integrations. */
const MACHINE_TABLE_NOUNS = words(
  'config configuration configs setting settings plugin plugins integration integrations',
);

/** Heads of code-list tables (addresstype, phone_number_type, order_status). */
const LOOKUP_HEADS = words('type types kind kinds class classes status statuses lookup lookups code codes enum');
/** A lookup is small: a key, a name or code, a description, audit columns. */
const LOOKUP_MAX_COLUMNS = 8;

/** Column words that only a company has: several of them make the row a company (CRM accounts, B2B customers). */
const ORG_COLUMN_SIGNALS: ReadonlyArray<readonly string[]> = [
  ['industry'],
  ['annual', 'revenue'],
  ['number', 'of', 'employees'],
  ['employee', 'count'],
  ['employees'],
  ['headcount'],
  ['company', 'size'],
  ['website'],
  ['web', 'site'],
  ['ticker'],
  ['sic'],
  ['naics'],
  ['duns'],
  ['ownership'],
  ['year', 'started'],
  ['year', 'founded'],
  ['founded'],
  ['incorporation'],
  ['legal', 'form'],
  ['vat', 'number'],
  ['company', 'registration'],
  ['registration', 'number'],
];

/** First words of a setting's name (enable_user_access_tokens, isdefault_site_url, require_email_verification). */
const SETTING_PREFIXES = words(`
  enable enables disable disables isdefault isnotempty isempty isnot notempty allow require requires enforce skip
  restrict use show hide
`);
/** A settings record: at least this many flags, making at least this share of the non-key columns. */
const SETTINGS_MIN_FLAGS = 5;
const SETTINGS_MIN_SHARE = 0.4;

/** Words that say what a row is in a table's description ("One row per company account"). */
const ROW_WORDS = words('row rows record records entry entries line lines');
const ROW_LINKS = words('per for is are describes describe represents represent holds hold of');
const FILLERS = words('a an the one each every single all list of our its their unique distinct');

/** The reading of `entity`'s rows (from its name, description and columns); remembered per entity and description. */
export const readTable = perEntityAndDescription(computeReading);

/** What a kind reads as, for proposals and the report. */
export function readingOf(kind: NounKind): TableReading {
  switch (kind) {
    case 'person':
      return 'person';
    case 'organisation':
      return 'organisation';
    case 'infra':
      return 'machine';
    case 'thing':
    case 'geo':
      return 'thing';
    case 'ledger':
    case 'neutral':
      return 'event';
  }
}

function computeReading(entity: CatalogEntity): TableReadingResult {
  const name = entity.name;
  const tokens = tableTokens(name);
  const mentionsPerson = tokens.some(isPersonWord) || tokens.some((t) => PAY_TABLE_NOUNS.has(singular(t)));
  const head = singular(tokens[tokens.length - 1] ?? '');
  const headIsPerson = isPersonWord(head) || PAY_TABLE_NOUNS.has(head);
  // tenant_settings, workspace_config: a company account's settings, not a machine's.
  const accountNoun = tokens.some((t) => ACCOUNT_NOUNS.has(singular(t)));

  // The name: the last noun that says what a row is.
  let kind: NounKind = 'neutral';
  let why = `table "${name}" is no organisation or catalogue`;
  let holder = false;
  let record = false;
  for (let i = tokens.length - 1; i >= 0; i--) {
    const word = singular(tokens[i] as string);
    if (HOLDER_NOUNS.has(word)) {
      kind = 'person';
      holder = true;
      why = `"${name}" rows are ${word}s held by a person`;
      break;
    }
    if (RECORD_NOUNS.has(word)) {
      record = true;
      why = `"${name}" rows are ${word} records`;
      break;
    }
    if (MACHINE_TABLE_NOUNS.has(word) && !mentionsPerson && !accountNoun) {
      kind = 'infra';
      why = `"${name}" rows are a machine's ${word}`;
      break;
    }
    const k = SITE_NOUNS.has(word)
      ? mentionsPerson
        ? 'person'
        : 'organisation'
      : EQUIPMENT_NOUNS.has(word)
        ? mentionsPerson
          ? 'person'
          : 'infra'
        : nounKind(word);
    if (k) {
      kind = k;
      why = `table "${name}" is ${describeKind(k)}`;
      break;
    }
  }
  let basis: TableReadingResult['basis'] = kind === 'neutral' && !record ? 'default' : 'name';

  // The columns.
  const shapes = entity.columns.map((c) => ({ column: c, shape: shapeOf(c.name) }));
  const unqualified = (s: ColumnShape): boolean => s.modifiers.every((m) => m.length <= 1 || NAME_QUALITIES.has(m));
  const personNames = shapes.filter((s) => s.shape.concept === 'name_part' && unqualified(s.shape));
  const personFacts = shapes.filter(
    (s) =>
      (s.shape.concept === 'birth' || s.shape.concept === 'gender' || s.shape.concept === 'national') &&
      unqualified(s.shape),
  );
  const orgNames = shapes.filter((s) => s.shape.concept === 'org_name' && unqualified(s.shape));
  const orgSignals = entity.columns.filter((c) => hasSignal(splitIdentifier(c.name)));
  const nonKeys = entity.columns.filter((c) => !c.primary_key && c.foreign_key === undefined);
  const flags = nonKeys.filter((c) => isSetting(c.name, c.type));
  const settingsShape =
    flags.length >= SETTINGS_MIN_FLAGS &&
    flags.length >= SETTINGS_MIN_SHARE * nonKeys.length &&
    personNames.length === 0;
  const lookup =
    LOOKUP_HEADS.has(tokens[tokens.length - 1] ?? '') &&
    tokens.length >= 2 &&
    entity.columns.length <= LOOKUP_MAX_COLUMNS &&
    personNames.length === 0 &&
    personFacts.length === 0;

  const described = describedRowKind(entity.description);
  if (lookup) {
    kind = 'thing';
    why = `"${name}" is a lookup of ${tokens.slice(0, -1).join(' ')} ${tokens[tokens.length - 1]}s: its rows are values of a code list`;
    basis = 'name';
  } else if (described) {
    kind = described.kind;
    why = `the description of "${name}" says a row is a ${described.word}`;
    basis = 'description';
  } else if (personNames.length > 0 && kind !== 'organisation') {
    if (kind !== 'person') {
      why = `columns such as ${personNames[0]?.column.name} make "${name}" person-like`;
      basis = 'columns';
    }
    kind = 'person';
  } else if (holder) {
    // A licence names its holder; the company on it does not make its e-mail a company's.
  } else if (
    (orgSignals.length >= 2 || (accountNoun && orgSignals.length >= 1)) &&
    (kind === 'neutral' || kind === 'person') &&
    personFacts.length === 0
  ) {
    kind = 'organisation';
    why = `"${name}" rows describe companies (${orgSignals
      .slice(0, 3)
      .map((c) => c.name)
      .join(', ')})`;
    basis = 'columns';
  } else if (personFacts.length > 0 && kind === 'neutral') {
    kind = 'person';
    why = `column ${personFacts[0]?.column.name} makes "${name}" person-like`;
    basis = 'columns';
  } else if (orgNames.length > 0 && (kind === 'person' || kind === 'neutral') && !record) {
    // A row that carries a company name and no person name describes an organisation (B2B customers).
    kind = 'organisation';
    why = `"${name}" rows carry ${orgNames[0]?.column.name} and no person name, so describe organisations`;
    basis = 'columns';
  } else if (settingsShape && kind === 'neutral' && !accountNoun) {
    kind = 'infra';
    why = `"${name}" rows are a machine's settings (${flags.length} flags such as ${flags[0]?.name})`;
    basis = 'columns';
  }

  const settings = kind === 'infra' && (settingsShape || tokens.some((t) => MACHINE_TABLE_NOUNS.has(t)));
  const accountKey = entity.columns.some((c) => {
    const t = splitIdentifier(stripKeyWords(c.name));
    return t.length === 1 && t[0] === 'account';
  });
  const personalContact = shapes.some(
    (s) => (s.shape.concept === 'email' || s.shape.concept === 'phone') && unqualified(s.shape),
  );
  const accountLinked =
    kind === 'neutral' && accountKey && personNames.length === 0 && personFacts.length === 0 && !personalContact;
  return {
    reading: readingOf(kind),
    kind,
    why,
    mentionsPerson: mentionsPerson || kind === 'person',
    headIsPerson,
    holder: holder && kind === 'person',
    lookup,
    settings,
    accountLinked,
    basis,
  };
}

/** Words that may follow a signal without changing it (sic_code, ticker_symbol, industry_name). */
const SIGNAL_TAILS = words('code number symbol name type desc description category');

function hasSignal(tokens: readonly string[]): boolean {
  return ORG_COLUMN_SIGNALS.some(
    (signal) =>
      signal.length <= tokens.length &&
      signal.every((w, i) => w === tokens[i]) &&
      tokens.slice(signal.length).every((t) => SIGNAL_TAILS.has(t)),
  );
}

/** account_id, accountid, account__c, AccountId: the row's account key, read without its key word. */
function stripKeyWords(name: string): string {
  return name.replace(/(_?id|_key|_ref)$/i, '');
}

/** A yes/no setting: a boolean, or a name that opens with a setting verb (enable_, isdefault_, require_). */
function isSetting(name: string, type: string): boolean {
  if (typeFamily(type) === 'bool') return true;
  const first = splitWords(name)[0] ?? '';
  return SETTING_PREFIXES.has(first) || (FLAG_PREFIXES.has(first) && splitWords(name).length > 1);
}

/**
 * What the table's own description says a row is: "One row per company account", "Each row is a server's
 * settings", "Licences issued to…", "Companies we sell to". Undefined when it names none of the known nouns.
 */
function describedRowKind(text: string | undefined): { kind: NounKind; word: string } | undefined {
  if (!text) return undefined;
  const sentence = text.split(/[.;:\n]/)[0] ?? '';
  // A noun phrase ends at a comma or bracket: its words keep the piece of the sentence they are in.
  const pieces = sentence.split(/[,()[\]]/).map(splitWords);
  const w = pieces.flat();
  const pieceOf = pieces.flatMap((p, k) => p.map(() => k));
  const rowAt = w.findIndex((x, i) => ROW_WORDS.has(x) && ROW_LINKS.has(w[i + 1] ?? ''));
  let start = rowAt >= 0 ? rowAt + 2 : 0;
  while (start < w.length && FILLERS.has(w[start] as string)) start++;
  // The noun may follow an adjective or two ("each active company account"). English compounds end in their head, and
  // a noun that modifies another is singular: "customer and partner companies" are companies, "company contacts"
  // people, while a plural is a head itself ("users and companies" are users). The phrase ends at a preposition.
  for (let i = start; i < Math.min(w.length, start + 3); i++) {
    let raw = w[i] as string;
    let kind = describedNoun(singular(raw));
    if (!kind) continue;
    for (let j = i + 1; j < w.length && singular(raw) === raw; j++) {
      const next = w[j] as string;
      if (pieceOf[j] !== pieceOf[i] || PHRASE_ENDS.has(next)) break;
      const nextKind = describedNoun(singular(next));
      if (nextKind) {
        raw = next;
        kind = nextKind;
      }
    }
    return { kind, word: singular(raw) };
  }
  return undefined;
}

/** Words that end a description's opening noun phrase ("companies of the CRM", "customers who bought"). */
const PHRASE_ENDS = words(`
  of in from with without that which who whose where when by per for at on to than as into across within via
`);

function describedNoun(word: string): NounKind | undefined {
  if (HOLDER_NOUNS.has(word) || PERSON_NOUNS.has(word)) return 'person';
  if (ORG_NOUNS.has(word)) return 'organisation';
  if (INFRA_NOUNS.has(word) || MACHINE_TABLE_NOUNS.has(word)) return 'infra';
  if (THING_NOUNS.has(word)) return 'thing';
  return undefined;
}

export function describeKind(kind: NounKind): string {
  switch (kind) {
    case 'person':
      return 'person-like';
    case 'organisation':
      return 'an organisation';
    case 'thing':
      return 'a catalogue of things';
    case 'geo':
      return 'a geography table';
    case 'ledger':
      return 'a ledger';
    case 'infra':
      return 'infrastructure';
    case 'neutral':
      return 'neutral';
  }
}
