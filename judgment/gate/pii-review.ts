import { PiiCategory, type CatalogEntity } from '../../domain/catalog';
import type { PiiTagChange } from '../../domain/proposal';
import { approve, findColumn, q, reject, type GateVerdict } from './verdict';
import { typeFamily, type TypeFamily } from '../sql/types';
import { evidenceOf, gateWords, nameEvidence, NAME_SUPPORTS, type NameEvidence } from './name-support';
import { readTable } from '../pii/table-reading';
import { FREE_TEXT_HEADS, readDescription } from '../pii/description-reader';
import { actorVerb, flagMarker, statisticMarker } from '../pii/markers';
import {
  ADDRESS_ROLES,
  GEO_NOUNS,
  ID_SUFFIXES,
  INFRA_NOUNS,
  isPayTableWord,
  LEDGER_NOUNS,
  ORG_NOUNS,
  PAY_AMOUNT_WORDS,
  PERSON_NOUNS,
  STAT_PREFIXES,
  STAT_SUFFIXES,
  THING_NOUNS,
  words,
} from '../pii/vocabulary';
import { singular } from '../words';

// ---------------------------------------------------------------------------------------------
// PII tags: the gate's own evidence (name tokens, type, table context, the column's own description read as
// vocabulary), independent of any classifier and never the proposal's explanation or evidence.

/**
 * Whose a value is, as the gate reads a table word or a qualifier: the vocabulary's nouns (judgment/pii/
 * vocabulary.ts), and the few words the gate reads otherwise. A tenant rents a flat here (the classifier reads
 * tenants as a SaaS company's accounts); billing and shipping name the party billed or shipped to (to the
 * classifier, the address roles of a company's record); a partner is a business (the classifier leaves a
 * partner's name to a spouse's); a channel, a campaign, a segment is a thing and "demographic" a segment (to the
 * classifier's table reading they are events and a person's record).
 */
const PERSON: ReadonlySet<string> = new Set([...PERSON_NOUNS, 'tenant', 'billing', 'shipping']);
const BUSINESS: ReadonlySet<string> = new Set([...ORG_NOUNS, 'partner']);
const MACHINE = INFRA_NOUNS;
const NON_PERSON: ReadonlySet<string> = new Set([
  ...THING_NOUNS,
  ...GEO_NOUNS,
  ...words('subcategory channel campaign calendar segment demographic'),
]);

/** A text column named for a role holds that person's name ("Salesperson", "manager"); every one a person noun. */
const ROLE_NOUNS = words(`
  salesperson salesman saleswoman manager composer author director actor writer editor owner recipient sender
  assignee reporter approver reviewer requester representative agent driver passenger patient physician doctor
  nurse teacher instructor student employee signer signatory cosigner buyer champion stakeholder influencer
`);

const MACHINE_CATEGORIES = new Set<PiiCategory>(['ip_address', 'address', 'postal_code', 'precise_location', 'email']);

/** Categories whose value may itself be an identifier (email_id, tax_id, login_key). */
const ID_CATEGORIES = new Set<PiiCategory>(['email', 'username', 'national_id', 'payment_card', 'bank_account']);

/** Column words that on their own never make a column personal. */
const GENERIC = new Set([
  'region',
  'status',
  'state',
  'type',
  'kind',
  'code',
  'title',
  'rating',
  'category',
  'created',
  'updated',
  'deleted',
  'modified',
  'inserted',
  'at',
  'on',
  'date',
  'time',
  'timestamp',
  'ts',
  'id',
  'key',
  'flag',
  'active',
  'count',
  'amount',
  'total',
  'price',
  'quantity',
  'qty',
  'description',
  'desc',
  'country',
  'currency',
  'language',
  'year',
  'month',
  'day',
  'level',
  'rank',
  'score',
  'sort',
  'order',
  'sequence',
  'version',
  'is',
  'has',
  'territory',
  'zone',
  'city',
  'continent',
  'uuid',
  'no',
  'num',
  'number',
]);

const LEDGER_GENERIC = new Set(['account', 'acct', 'number', 'no', 'num', 'nbr', 'id', 'code', 'key', 'name', 'type']);

const CONTACT_CATEGORIES = new Set<PiiCategory>(['email', 'phone', 'address', 'postal_code', 'person_name']);

/** Families whose values the gate cannot judge (unknown, semi-structured, arrays, uuids): no type check. */
const UNCHECKED_TYPES = new Set<TypeFamily>(['unknown', 'other', 'json', 'array', 'uuid']);
const TEXT: TypeFamily[] = ['text', 'enum'];
const TEXT_OR_NUMBER: TypeFamily[] = ['text', 'enum', 'int', 'decimal'];
const ALLOWED_TYPES: Record<PiiCategory, TypeFamily[]> = {
  person_name: TEXT,
  email: TEXT,
  address: TEXT,
  username: TEXT,
  free_text_personal: TEXT,
  phone: TEXT_OR_NUMBER,
  postal_code: TEXT_OR_NUMBER,
  national_id: TEXT_OR_NUMBER,
  payment_card: TEXT_OR_NUMBER,
  bank_account: TEXT_OR_NUMBER,
  birth_date: ['date', 'timestamp', 'text', 'int'],
  ip_address: ['text', 'int', 'network', 'binary'],
  gender: ['text', 'enum', 'int', 'bool'],
  compensation: ['decimal', 'float', 'int'],
  precise_location: ['decimal', 'float', 'spatial', 'text'],
  credential: ['text', 'binary'],
};

/** Words of a person's contact value: the sibling that grounds a name under the same qualifier. */
const CONTACT_WORDS = new Set(['email', 'mail', 'phone', 'mobile', 'telephone', 'tel']);

/**
 * A qualifier names a person as the owner (primary_contact_phone): not an address role (billing, shipping),
 * which on a company's record is the company's, nor any word in `not`.
 */
function ownerIsPerson(qualifiers: readonly string[], not: readonly string[] = []): boolean {
  return qualifiers.some((w) => (PERSON.has(w) || ROLE_NOUNS.has(w)) && !ADDRESS_ROLES.has(w) && !not.includes(w));
}

/** The column under the same qualifier words as a name that holds an e-mail or phone (supplied_email). */
function siblingContactOf(entity: CatalogEntity, qualifier: readonly string[]): string | undefined {
  if (qualifier.some((w) => BUSINESS.has(singular(w)) || NON_PERSON.has(singular(w)) || MACHINE.has(singular(w))))
    return undefined;
  const hit = entity.columns.find((c) => {
    const w = nameEvidence(c.name).words;
    return (
      w.length >= qualifier.length + 1 &&
      qualifier.every((q, i) => w[i] === q) &&
      w.slice(qualifier.length).some((x) => CONTACT_WORDS.has(x)) &&
      w.slice(qualifier.length).every((x) => CONTACT_WORDS.has(x) || x === 'address' || x === 'number')
    );
  });
  return hit?.name;
}

export function reviewPiiTag(change: PiiTagChange, entity: CatalogEntity): GateVerdict {
  const column = findColumn(entity, change.column);
  if (!column) return reject('unknown-column', `cites column ${q(change.column)}, which ${q(entity.id)} does not have`);
  const category = change.category;
  const col = q(column.name);
  const table = q(entity.name);
  // A category outside the taxonomy cannot be governed (no policy names it): never approved, whoever proposed it.
  if (!PiiCategory.safeParse(category).success)
    return reject(
      'pii:unknown-category',
      `${q(category)} is not a PII category ARGUS knows (${PiiCategory.options.join(', ')})`,
    );

  if (entity.pii_exceptions.some((e) => e.toLowerCase() === column.name.toLowerCase())) {
    return reject('pii:exception', `${col} is listed as a known non-personal column of ${table}`);
  }

  const name = nameEvidence(column.name);
  const tableWords = evidenceOf(gateWords(entity.name)).words.map(singular);
  const ledger = tableWords.some((w) => LEDGER_NOUNS.has(w));
  const supports = Object.prototype.hasOwnProperty.call(NAME_SUPPORTS, category) ? NAME_SUPPORTS[category] : undefined;
  if (supports === undefined) return reject('pii:unknown-category', `${q(String(category))} is not a PII category`);
  const type = typeFamily(column.type);

  // The column's own description is evidence too, for or against, as vocabulary: never followed as orders.
  const described = descriptionEvidence(column.description);
  if (
    described?.against &&
    !(category === 'credential' && described.against.kind === 'hashed') &&
    !(category === 'compensation' && described.against.kind === 'statistic')
  ) {
    return reject('pii:described-otherwise', `${col}'s own description says ${described.against.why}`);
  }
  // employeepayhistory.rate: on a pay record the rate is the pay.
  const payRecord =
    category === 'compensation' && tableWords.some(isPayTableWord) && name.words.some((w) => PAY_AMOUNT_WORDS.has(w));
  const stated = supports(name.leaf ?? name, type) || payRecord;
  const describedName =
    category === 'person_name' &&
    described !== undefined &&
    described.head[described.head.length - 1] === 'name' &&
    described.subject.some((w) => PERSON.has(w)) &&
    !described.subject.some((w) => BUSINESS.has(w));
  const describedText = category === 'free_text_personal' && described?.freeText === true;
  const fromDescription =
    !stated && described !== undefined && (supports(described.evidence, type) || describedName || describedText);

  if (
    !fromDescription &&
    name.words.length > 0 &&
    (name.words.every((w) => GENERIC.has(singular(w))) || (ledger && name.words.every((w) => LEDGER_GENERIC.has(w))))
  ) {
    return reject('pii:generic-column', `${col} is a generic column name on ${table}; it does not identify a person`);
  }

  // What the value is of: the name's words and, when the description is the evidence, the description's.
  const qualifiers = [
    ...name.words,
    ...(fromDescription ? [...described.evidence.words, ...(describedText ? described.author : [])] : []),
  ].map(singular);
  const personQualifier = qualifiers.some((w) => PERSON.has(w) || ROLE_NOUNS.has(w));
  // bank_iban, bank_account_no: "bank" says what kind of account, not whose.
  const businessQualifier = qualifiers.some((w) => BUSINESS.has(w) && !(category === 'bank_account' && w === 'bank'));
  // The value word itself is no qualifier: "demographics" on a person table is the person's, not a segment.
  const thingQualifier =
    qualifiers.slice(0, name.words.length - 1).some((w) => NON_PERSON.has(w)) ||
    qualifiers.slice(name.words.length).some((w) => NON_PERSON.has(w));
  const namedKind: 'business' | 'person' | 'thing' | 'neutral' = tableWords.some((w) => BUSINESS.has(w))
    ? 'business'
    : tableWords.some((w) => PERSON.has(w))
      ? 'person'
      : tableWords.some((w) => NON_PERSON.has(w))
        ? 'thing'
        : 'neutral';
  // Whose record a row is, read from the name, columns, description and keys (the same reading the proposals
  // name): an account with industry and website is a company, a licence is its holder's, addresstype a code list.
  const reading = readTable(entity);
  const tableKind = reading.lookup
    ? 'thing'
    : reading.reading === 'person'
      ? 'person'
      : reading.reading === 'organisation'
        ? 'business'
        : namedKind;

  // user_agent is a browser's string, not an agent.
  const roleName =
    category === 'person_name' &&
    ROLE_NOUNS.has(singular(name.words[name.words.length - 1] ?? '')) &&
    !(name.words[name.words.length - 1] === 'agent' && name.before('agent') === 'user') &&
    (type === 'text' || type === 'unknown' || type === 'other');
  // confirmed_by, ReceivedBy: who did it to the row, as text.
  const actorName =
    category === 'person_name' &&
    actorVerb(name.words) !== undefined &&
    (type === 'text' || type === 'unknown' || type === 'other');
  // supplied_name beside supplied_email: the name of the party whose contact the row holds.
  const siblingName =
    category === 'person_name' && name.words[name.words.length - 1] === 'name' && name.words.length > 1
      ? siblingContactOf(entity, name.words.slice(0, -1))
      : undefined;
  const bareName =
    category === 'person_name' &&
    !stated &&
    !fromDescription &&
    !roleName &&
    !actorName &&
    siblingName === undefined &&
    name.words[name.words.length - 1] === 'name';

  // A statistic or a flag about a value does not hold the value; a key identifies a row, not a person.
  const lastWord = name.words[name.words.length - 1] ?? '';
  if (!fromDescription && name.words.length > 1) {
    const stat =
      category === 'compensation'
        ? undefined
        : (name.words.find((w) => STAT_PREFIXES.has(w) || STAT_SUFFIXES.has(w)) ?? statisticMarker(name.words));
    if (stat) return reject('pii:not-personal', `${col} is a statistic (${q(stat)}), not a person's ${category}`);
    const flag = category === 'gender' ? undefined : flagMarker(name.words);
    if (flag) return reject('pii:not-personal', `${col} is a yes/no flag (${q(flag)}), not a person's ${category}`);
    if (ID_SUFFIXES.has(lastWord) && !ID_CATEGORIES.has(category))
      return reject('pii:identifier', `${col} ends in ${q(lastWord)}: a key, not a person's ${category}`);
  }

  // A machine's or installation's address is not a person's.
  // "IP address of the mail relay server": the description names the machine whatever the table holds.
  const describedMachine =
    described && !described.subject.some((w) => PERSON.has(w))
      ? described.subject.find((w) => MACHINE.has(w))
      : undefined;
  const machine = !MACHINE_CATEGORIES.has(category)
    ? undefined
    : (describedMachine ??
      (!personQualifier && tableKind !== 'person'
        ? (name.words.map(singular).find((w) => MACHINE.has(w)) ?? tableWords.find((w) => MACHINE.has(w)))
        : undefined));
  if (machine) return reject('pii:not-personal', `${col} on ${table}: ${q(machine)} names a machine, not a person`);
  // A server's settings: its secrets, service accounts and addresses are the machine's ("oauth client" is software).
  if (
    reading.reading === 'machine' &&
    !ownerIsPerson(qualifiers, ['client', 'user']) &&
    (MACHINE_CATEGORIES.has(category) || category === 'credential' || category === 'username')
  )
    return reject('pii:not-personal', `${col} on ${table}: ${reading.why}, so it is the machine's, not a person's`);
  // A contract's billing_street: the address of the company account the row belongs to.
  const role = name.words.find((w) => ADDRESS_ROLES.has(w));
  if (
    reading.accountLinked &&
    role !== undefined &&
    !ownerIsPerson(qualifiers) &&
    (CONTACT_CATEGORIES.has(category) || category === 'precise_location') &&
    category !== 'person_name'
  )
    return reject(
      'pii:business-contact',
      `${col} on ${table}: the row belongs to a company account and ${q(role)} names the account's own ${category}`,
    );

  // A credential is sensitive whoever it belongs to; every other category is about a person.
  if (category !== 'credential') {
    // primary_contact_phone on a company's account: the qualifier names the person whose phone it is.
    if (
      businessQualifier ||
      (tableKind === 'business' && !(ownerIsPerson(qualifiers) && CONTACT_CATEGORIES.has(category)))
    ) {
      // A business's contact details are business contacts, but a named contact person (ContactName,
      // first_name on a suppliers table, "Name of the shift supervisor") is still a natural person.
      const namedPerson =
        category === 'person_name' && (stated || describedName || (bareName && personQualifier && !businessQualifier));
      if (!namedPerson) {
        if (category === 'person_name')
          return reject('pii:business-contact', `${col} on ${table} names a business, not a person`);
        if (CONTACT_CATEGORIES.has(category)) {
          return reject(
            'pii:business-contact',
            `${col} on ${table} holds a business's contact details, not a person's`,
          );
        }
        return reject('pii:not-personal', `${col} on ${table} describes a business, not a person`);
      }
    } else if ((thingQualifier || tableKind === 'thing') && !personQualifier) {
      return reject('pii:not-personal', `${col} on ${table} describes a thing or place, not a person`);
    }
  }

  if (bareName) {
    if (!(personQualifier || tableKind === 'person')) {
      return reject(
        'pii:ungrounded',
        `cannot ground category ${category} on column ${col}: "name" with no person-like table or prefix`,
      );
    }
  } else if (!stated && !roleName && !actorName && siblingName === undefined && !fromDescription) {
    return reject('pii:ungrounded', `cannot ground category ${category} on column ${col}`);
  }

  if (category === 'free_text_personal' && !(personQualifier || tableKind === 'person')) {
    return reject(
      'pii:ungrounded',
      `cannot ground category ${category} on column ${col}: free text on a table that does not hold people`,
    );
  }

  if (!UNCHECKED_TYPES.has(type) && !ALLOWED_TYPES[category].includes(type)) {
    return reject('pii:type-mismatch', `${col} has type ${q(column.type, 40)}, which cannot hold ${category}`);
  }

  const basis = stated
    ? `states ${category}`
    : fromDescription
      ? `is described as ${category} by its own description`
      : roleName
        ? `names a person by role`
        : actorName
          ? `names who ${name.words[name.words.length - 2] ?? ''} the row`
          : siblingName !== undefined
            ? `is the name beside ${q(siblingName)}, a person's contact on the same row`
            : `is a name on ${personQualifier ? 'a person-like prefix' : `a table of people (${table})`}`;
  return approve('pii:grounded', `${col} ${basis}; type ${q(column.type, 40)} fits ${category}`);
}

// ---------------------------------------------------------------------------------------------
// The column's own description

interface DescriptionEvidence {
  /** The opening noun phrase and its subject, as name evidence. */
  evidence: NameEvidence;
  head: string[];
  subject: string[];
  /** Who wrote it ("by the customer"): whose free text it is. */
  author: string[];
  /** It opens with free text ("Text written by…", "Message from…"). */
  freeText: boolean;
  /** Why the description says the value is not personal data. */
  against?: { why: string; kind: 'hashed' | 'statistic' | 'flag' | 'denied' | 'business' };
}

/** The column's own description (judgment/pii/description-reader.ts) as the gate weighs it; undefined when none. */
function descriptionEvidence(text: string | undefined): DescriptionEvidence | undefined {
  const reading = readDescription(text);
  if (!reading) return undefined;
  const d = reading.phrase;
  // "by the agent" names who wrote it, not what it is of.
  const subject = reading.authored ? [] : d.subject;
  const { hashed, statistic, flag, denied, businessLine } = reading;
  const against = hashed
    ? { why: `the value is ${q(hashed)}`, kind: 'hashed' as const }
    : statistic
      ? { why: `it is a statistic (${q(statistic)})`, kind: 'statistic' as const }
      : flag
        ? { why: `it is a yes/no flag (${q(flag)})`, kind: 'flag' as const }
        : denied
          ? { why: `it is not ${denied}`, kind: 'denied' as const }
          : businessLine
            ? { why: `it is a business's ${q(businessLine)}`, kind: 'business' as const }
            : undefined;
  return {
    evidence: evidenceOf([...d.head, ...subject]),
    head: d.head,
    subject: subject.map(singular),
    author: reading.authored ? d.subject.map(singular) : [],
    freeText: d.head.some((w) => FREE_TEXT_HEADS.has(w)),
    ...(against ? { against } : {}),
  };
}
