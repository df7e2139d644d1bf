import type { CatalogColumn, CatalogEntity, PiiCategory } from '../domain/catalog';
import { PiiCategory as PiiCategorySchema } from '../domain/catalog';
import type { PiiTagChange } from '../domain/proposal';
import { typeFamily as sqlTypeFamily } from './sql-types';
import { describedPhrase, namePath, singular, splitWords } from './words';

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
}

// ---------------------------------------------------------------------------------------------------
// Vocabulary

function words(list: string): Set<string> {
  return new Set(list.split(/\s+/).filter((w) => w.length > 0));
}

function wordMap(groups: Partial<Record<Concept, string>>): Map<string, Concept> {
  const map = new Map<string, Concept>();
  for (const [concept, list] of Object.entries(groups) as Array<[Concept, string]>) {
    for (const w of words(list)) map.set(w, concept);
  }
  return map;
}

function phraseMap(groups: Partial<Record<Concept, string>>): Map<string, Concept> {
  const map = new Map<string, Concept>();
  for (const [concept, list] of Object.entries(groups) as Array<[Concept, string]>) {
    for (const phrase of list.split(',')) {
      const clean = phrase.trim().replace(/\s+/g, ' ');
      if (clean.length > 0) map.set(clean, concept);
    }
  }
  return map;
}

/** Abbreviations expanded before anything else looks at a name. */
const ABBREVIATIONS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    fname: ['first', 'name'],
    lname: ['last', 'name'],
    mname: ['middle', 'name'],
    uname: ['user', 'name'],
    dob: ['birth', 'date'],
    bday: ['birth', 'date'],
    yob: ['birth', 'year'],
    addr: ['address'],
    adr: ['address'],
    tel: ['phone'],
    ph: ['phone'],
    phn: ['phone'],
    mob: ['mobile'],
    eml: ['email'],
    gndr: ['gender'],
    natl: ['national'],
    ni: ['national', 'insurance'],
    lic: ['license'],
    telephone: ['phone'],
    cellphone: ['phone'],
    cust: ['customer'],
    emp: ['employee'],
    empl: ['employee'],
    mgr: ['manager'],
    rep: ['representative'],
    dept: ['department'],
    acct: ['account'],
    nm: ['name'],
    num: ['number'],
    nbr: ['number'],
    nr: ['number'],
    no: ['number'],
    dt: ['date'],
    desc: ['description'],
    pwd: ['password'],
    passwd: ['password'],
    usr: ['user'],
    pic: ['picture'],
    img: ['image'],
    lat: ['latitude'],
    lng: ['longitude'],
    lon: ['longitude'],
    long: ['longitude'],
    ipv: ['ip'],
    ipaddr: ['ip', 'address'],
    cc: ['credit', 'card'],
    ccn: ['card', 'number'],
    ccnum: ['card', 'number'],
    people: ['person'],
    persons: ['person'],
    hostname: ['host', 'name'],
  }),
);

/** What a name word or phrase can mean; the table context then decides whether it is personal. */
type Concept =
  | 'name_part'
  | 'name'
  | 'birth'
  | 'postal'
  | 'ip'
  | 'email'
  | 'phone'
  | 'extension'
  | 'national'
  | 'card'
  | 'bank'
  | 'account_number'
  | 'username'
  | 'credential'
  | 'gender'
  | 'compensation'
  | 'address'
  | 'location'
  | 'geo'
  | 'free_text'
  | 'personal_record'
  | 'kin'
  | 'photo'
  | 'org_name'
  | 'web'
  | 'title'
  | 'salutation'
  | 'device';

/** Multi-word phrases (after abbreviation expansion), grouped by what they mean. */
const PHRASES: ReadonlyMap<string, Concept> = phraseMap({
  national: `
    social security number, social security, national insurance, national id, national identifier,
    tax id, tax identifier, tax number, taxpayer id, passport number, id card, identity card, identity number,
    id doc, id document, identity document, travel document,
    driver license, drivers license, driver licence, drivers licence, driving license, driving licence
  `,
  salutation: 'title of courtesy',
  birth: 'date of birth, year of birth, birth date, birth day, birth year, born on',
  geo: 'place of birth, birth place, birth city, birth country, country code, region code, state code, time zone',
  name_part: `
    first name, given name, fore name, last name, family name, sur name, middle name, middle initial,
    maiden name, full name
  `,
  postal: 'postal code, post code, zip code, pin code',
  ip: 'ip address, remote address',
  email: 'email address, e mail address, e mail, mail address',
  phone: 'phone number',
  card: 'card number, credit card, debit card, card cvv',
  bank: 'bank account, routing number, sort code',
  account_number: 'account number',
  username: 'user name, login name, screen name, user login',
  credential: `
    pass word, api key, access token, refresh token, auth token, session token, reset token, private key,
    security answer, otp secret, mfa secret
  `,
  gender: 'gender identity',
  address: 'street address, address line, house number, street number, street name',
  location: 'geo location, geo point',
  free_text: 'about me, medical history, free text',
  personal_record: `
    contact info, contact information, contact details, contact data, personal info, personal information,
    personal details, personal data, extra attributes, custom attributes, custom fields, medical record,
    medical info, medical information, medical details, health info, health information, health record
  `,
  kin: 'next of kin, emergency contact, emergency contacts',
  org_name: `
    company name, business name, organisation name, organization name, org name, employer name, trading name
  `,
  web: 'home page, web site, web address',
  device: 'user agent, mac address',
  title: 'job title',
});

/** Single words with a meaning of their own, grouped by meaning. */
const WORDS: ReadonlyMap<string, Concept> = wordMap({
  name_part: 'surname forename initials',
  name: 'name',
  birth: 'birthday birthdate born',
  postal: 'zip zipcode postcode postalcode pincode',
  ip: 'ip',
  email: 'email mail',
  phone: 'phone mobile cell fax msisdn',
  extension: 'extension ext',
  national: 'ssn sin nin tin itin tfn passport aadhaar nric pesel cpf',
  card: 'pan cvv cvc',
  bank: 'iban',
  username: 'username login handle nickname gamertag screenname',
  credential: 'password pin secret token',
  gender: 'gender sex pronouns',
  compensation: 'salary salaries wage wages pay compensation remuneration bonus commission earnings income stipend',
  address: 'address addresses street apartment',
  location: 'latitude longitude geolocation coordinates gps',
  geo: 'city town country region state province county territory nation continent district suburb locality municipality timezone',
  free_text: 'notes note comments comment remarks remark bio biography memo resume cv',
  personal_record: `
    profile demographics demographic skills skillset allergies allergy medications diagnoses diagnosis symptoms
    ethnicity religion hobbies traits attributes
  `,
  kin: 'kin',
  photo: 'photo photograph picture image avatar portrait headshot selfie',
  org_name: 'company employer organisation organization',
  web: 'homepage website url',
  title: 'title',
  salutation: 'salutation honorific courtesy',
});

/** Nouns naming a natural person. As a table head they make the table person-like; as a column head, a name. */
const PERSON_NOUNS = words(`
  person customer client employee staff user member contact patient individual student pupil teacher instructor
  tutor doctor physician nurse clinician dentist therapist practitioner author composer subscriber applicant
  candidate guest visitor passenger driver rider traveler traveller donor volunteer worker contractor freelancer
  owner landlord borrower beneficiary dependent dependant spouse guardian parent child citizen resident voter
  participant attendee learner player athlete holder cardholder payee recipient manager supervisor salesperson
  salesman representative agent clerk assignee reviewer approver requester reporter buyer profile prospect lead
  hire emergency kin husband wife sibling mother father director actor cashier technician engineer consultant
  intern trainee officer caller sender shopper consumer insured policyholder enrollee caregiver carer respondent
`);

/** Person nouns for people who are paid: evidence that a pay column is an individual's pay. */
const WORKER_NOUNS = words(`
  employee staff worker contractor freelancer salesperson salesman representative agent clerk teacher instructor
  tutor doctor physician nurse clinician manager supervisor driver technician engineer consultant intern trainee
  officer cashier hire
`);

/** Nouns naming an organisation or one of its sites: its contact details are business contact, not PII. */
const ORG_NOUNS = words(`
  supplier shipper vendor company business store shop office branch merchant carrier manufacturer publisher agency
  organisation organization org institution bank warehouse factory hospital clinic pharmacy school university
  college hotel restaurant venue airline retailer distributor dealer dealership firm employer insurer laboratory
  lab franchise outlet depot headquarters hq subsidiary corporation corporate enterprise brand practice library
  museum theater theatre cinema gym studio
`);

/** Places: an organisation's site, unless the table name also names a person (user_locations). */
const SITE_NOUNS = new Set(['location', 'site', 'premises', 'building', 'facility', 'campus']);

/** Things and catalogue items: none of their columns describe a person by default. */
const THING_NOUNS = words(`
  product item part sku film movie album track song genre category book playlist media catalog catalogue inventory
  asset tag course lesson menu dish recipe animal pet dog cat horse livestock document file report project plan
  tier feature language currency department team room equipment vehicle model show episode game artwork material
  ingredient component
`);

const GEO_NOUNS = words(`
  region territory country nation city state province district zone continent county area municipality locale
  timezone
`);

const LEDGER_NOUNS = words(`
  ledger gl journal chart coa posting budget fiscal cost center
`);

/** Machines, installations and their networks: an address or IP they qualify is a machine's, not a person's. */
const INFRA_NOUNS = words(`
  server host hostname node machine instance installation install cluster router gateway subnet network vm container
  pod endpoint datacenter firewall switch database db replica shard proxy daemon deployment runner tower mast antenna
  sensor analyser analyzer instrument meter printer scanner kiosk appliance balancer relay
`);

/** Equipment that may be a person's (a user's device): infrastructure as a table's row, not as a qualifier. */
const EQUIPMENT_NOUNS = words('device handset terminal');

/**
 * Statistics about people are not personal data: a count, total, average or share of users says nothing about
 * one of them. STAT_PREFIXES open such a name (count_registered_users, avg_user_age, pct_users_with_email),
 * STAT_SUFFIXES close it (users_count, signup_rate). "number" and "n" count only before "of" or a plural
 * (number_of_leads, num_customers, n_signups), so phone_number and TPC-H's n_name keep their meaning.
 */
const STAT_PREFIXES = words(`
  count counts cnt total totals sum avg average mean median pct percent percentage ratio proportion fraction share
  distinct nb dau wau mau
`);
const STAT_SUFFIXES = words(`
  count counts cnt total totals sum avg average mean median pct percent percentage ratio rate proportion fraction
  share dau wau mau
`);
/** "<period> active": daily_active_users, weekly_active_members, l28_active_accounts. */
const STAT_PERIODS = words('daily weekly monthly yearly quarterly annual hourly');

/**
 * A yes/no flag about an attribute (is_valid_email, has_phone, email_verified, has_opted_out_of_fax) does not
 * carry the attribute: ARGUS tags the column that holds the e-mail, not the one that says whether it exists.
 */
const FLAG_PREFIXES = words('is has have had was were can could should did does do will allow allows needs');
/** Verb-like words that make a flag wherever they stand (email_is_verified). */
const FLAG_INNER = words('is has was');
const FLAG_SUFFIXES = words(`
  flag flags flg ind indicator verified unverified validated valid invalid confirmed exists present missing
  available enabled disabled bounced unsubscribed subscribed optout optin opted consented
`);
const FLAG_PAIRS = new Set(['opted out', 'opted in', 'opt out', 'opt in']);

/**
 * Business functions: an e-mail, phone or address qualified by one (billing_email, billing_contact_email,
 * support_phone) on an organisation's or a company account's row is the business's mailbox, not a person's.
 */
const FUNCTION_WORDS = words(`
  billing invoice invoicing payable receivable support helpdesk finance accounting sales admin technical tech abuse
  info noreply notification notifications ops operations security legal compliance procurement purchasing
`);
/** Table heads that, without a person on the row, are usually a company's account (CRM, SaaS tenants). */
const ACCOUNT_NOUNS = words('account tenant workspace');

/** Table names that are themselves an HR compensation record. */
const PAY_TABLE_NOUNS = words(`
  salary payroll payslip paycheck wage compensation bonus commission
`);

/** Words in view and table names that say nothing about what a row is. */
const NAME_NOISE = words(`
  v vw view qry query list of and the for summary current full alphabetical extended dim fact stg staging raw tbl
  t latest date all active detail details info data history log new old tmp temp master mart src snapshot x map
  link xref
`);

/** Tokens that may follow a value word without changing what the column holds (phone_number, email_2, ...). */
const VALUE_SUFFIXES = words(`
  number line primary secondary alt alternate other main e164 formatted normalized normalised raw value text full
  masked encrypted enc hash hashed digest lower clean cleaned str string plain txt home work personal private
  office business international local national current last digits
`);

const EXTRA_SUFFIXES: Partial<Record<Concept, ReadonlySet<string>>> = {
  compensation: words(
    'amount amt usd eur gbp rate pct percent percentage annual monthly yearly hourly weekly gross net base total value paid',
  ),
  gender: new Set(['code', 'cd', 'flag']),
  geo: new Set(['code', 'cd', 'name', 'description', 'iso', 'abbr', 'abbreviation']),
  birth: new Set(['date', 'year', 'day', 'month']),
  free_text: new Set(['body', 'content', 'details']),
  photo: new Set(['path', 'url', 'uri', 'file', 'blob', 'data', 'link']),
};

const PAY_AMOUNT_WORDS = new Set(['rate', 'amount', 'amt', 'gross', 'net', 'total', 'value', 'sum']);

/** Words around an account number that make it a payout or bank account rather than a record number. */
const BANK_CONTEXT = words(`
  bank banking payee payout deposit direct beneficiary refund ach wire sepa remittance disbursement
`);

const ID_SUFFIXES = new Set(['id', 'key', 'uuid', 'guid', 'pk', 'fk', 'sk', 'ref', 'oid', 'uid', 'nk']);
const CODE_SUFFIXES = new Set(['number', 'code', 'cd']);

/** Qualities of a name that defer to the table ("legal_name" on a person table is a person's name). */
const NAME_QUALITIES = words(`
  legal preferred official real primary current display short long nick common formal informal known previous
  former alias alternate alt other english local
`);

const DP_VOCAB = new Set<string>([
  ...[...WORDS.keys()].filter((w) => w.length >= 3 && !['sin', 'nin', 'tin', 'pan', 'pin', 'ext', 'cpf'].includes(w)),
  ...[...PHRASES.keys()].flatMap((p) => p.split(' ')).filter((w) => w.length >= 3),
  ...[...PERSON_NOUNS, ...ORG_NOUNS, ...THING_NOUNS, ...GEO_NOUNS].filter((w) => w.length >= 3 && !w.includes('_')),
  ...[...VALUE_SUFFIXES].filter((w) => w.length >= 3),
  ...words(`
  ip id no emp cust dob ssn addr zip fax sex tax pay ship shipping billing mailing delivery home work code rate
  date time type status count last first middle given family login user email sales person page web key hire
  order invoice unit price quantity amount total created updated deleted eml tel phn
  `),
]);

/**
 * Splits an identifier into lower-case word tokens the way words.ts does (snake_case, kebab, spaces, camelCase,
 * PascalCase, acronyms: IPAddress → ip address, digits); then expands abbreviations and splits glued words
 * (zipcode → zip code) when every piece is a known word.
 */
const splitCache = new Map<string, readonly string[]>();

export function splitIdentifier(raw: string): string[] {
  const hit = splitCache.get(raw);
  if (hit) return [...hit];
  const out = splitIdentifierUncached(raw);
  if (splitCache.size > 100_000) splitCache.clear();
  splitCache.set(raw, out);
  return [...out];
}

function splitIdentifierUncached(raw: string): string[] {
  return expandWords(splitWords(raw));
}

/** Abbreviations expanded and glued words split, over words already split by words.ts. */
function expandWords(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const expanded = ABBREVIATIONS.get(token);
    if (expanded) {
      out.push(...expanded);
      continue;
    }
    if (WORDS.has(token) || DP_VOCAB.has(token) || token.length < 5 || /^[0-9]+$/.test(token)) {
      out.push(token);
      continue;
    }
    const glued = splitGlued(token);
    for (const piece of glued) out.push(...(ABBREVIATIONS.get(piece) ?? [piece]));
  }
  return out;
}

/** Fewest-pieces split of a glued lower-case word into known words; the word itself when none exists. */
function splitGlued(word: string): string[] {
  const best: Array<string[] | undefined> = new Array(word.length + 1);
  best[0] = [];
  for (let end = 1; end <= word.length; end++) {
    for (let start = 0; start < end; start++) {
      const head = best[start];
      const piece = word.slice(start, end);
      if (!head || !DP_VOCAB.has(piece)) continue;
      const current = best[end];
      if (!current || current.length > head.length + 1) best[end] = [...head, piece];
    }
  }
  return best[word.length] ?? [word];
}

interface Item {
  text: string;
  concept?: Concept;
}

function toItems(tokens: readonly string[]): Item[] {
  const items: Item[] = [];
  let i = 0;
  outer: while (i < tokens.length) {
    for (const len of [3, 2]) {
      if (i + len > tokens.length) continue;
      const phrase = tokens.slice(i, i + len).join(' ');
      const hit = PHRASES.get(phrase);
      if (hit) {
        items.push({ text: phrase, concept: hit });
        i += len;
        continue outer;
      }
    }
    const token = tokens[i] as string;
    const concept = WORDS.get(token) ?? WORDS.get(singular(token));
    items.push(concept ? { text: token, concept } : { text: token });
    i += 1;
  }
  return items;
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

type TableKind = 'person' | 'organisation' | 'thing' | 'geo' | 'ledger' | 'infra' | 'neutral';

interface TableContext {
  kind: TableKind;
  /** Why the kind was chosen, for explanations. */
  reason: string;
  /** Some token of the table name names a person (customer_addresses, dept_emp). */
  mentionsPerson: boolean;
  /** The table is a pay record or links a paid person (emp_no, staff_id) next to its columns. */
  payContext: boolean;
  /** The table name itself says pay (salaries, payroll, employee_pay_history). */
  payTable: boolean;
  /** The table name speaks of bank details or payouts. */
  bankContext: boolean;
  /** The table is an organisation, or a company account (accounts, tenants) with no person on the row. */
  businessRow: boolean;
}

function nounKind(word: string): TableKind | undefined {
  const w = singular(word);
  if (PAY_TABLE_NOUNS.has(w) || PERSON_NOUNS.has(w)) return 'person';
  if (ORG_NOUNS.has(w)) return 'organisation';
  if (GEO_NOUNS.has(w)) return 'geo';
  if (THING_NOUNS.has(w)) return 'thing';
  if (LEDGER_NOUNS.has(w)) return 'ledger';
  if (INFRA_NOUNS.has(w)) return 'infra';
  return undefined;
}

function isPersonWord(word: string): boolean {
  return PERSON_NOUNS.has(singular(word));
}

function isOrgWord(word: string): boolean {
  return ORG_NOUNS.has(singular(word));
}

interface ColumnShape {
  /** Items of the leaf: the whole name, or the last meaningful segment of a path (payload.customer.email). */
  items: Item[];
  concept?: Concept;
  /** Words around the value word, nearest first, then the words of the qualifying path segments, nearest first. */
  modifiers: string[];
  /** Words of the path segments before the leaf, nearest first; none for a plain name. */
  qualifiers: string[];
  /** Every word of the name (after abbreviations), for explanations. */
  words: string[];
  /** The leaf's words before abbreviations were expanded ("ph" stays "ph"). */
  rawLeaf: string[];
}

/**
 * Reads a column name. A plain name is its own leaf; a dotted, bracketed or arrowed path is read by its last
 * meaningful segment, qualified by the segments before it (user.name is the user's name, not a user_name).
 */
function shapeOf(name: string): ColumnShape {
  const path = namePath(name);
  if (path.segments.length <= 1) {
    const tokens = splitIdentifier(name);
    return leafShape(toItems(tokens), [], tokens, path.leaf);
  }
  const segments = path.segments.map(expandWords);
  const leaf = segments[segments.length - 1] ?? [];
  const qualifiers = segments
    .slice(0, -1)
    .reverse()
    .flatMap((seg) => [...seg].reverse());
  const words = segments.flat();
  const shape = leafShape(toItems(leaf), qualifiers, words, path.leaf);
  // card.number, phones[0].number: the value word may sit in the segment before a bare "number" or "line".
  const prev = segments[segments.length - 2];
  if (shape.concept || !prev || (prev.length === 1 && (isPersonWord(prev[0]!) || isOrgWord(prev[0]!)))) return shape;
  const joined = leafShape(toItems([...prev, ...leaf]), qualifiers.slice(prev.length), words, path.leaf);
  return joined.concept ? joined : shape;
}

/** Finds the value concept: the last concept whose following tokens are only value suffixes. */
function leafShape(items: Item[], qualifiers: string[], words: string[], rawLeaf: string[]): ColumnShape {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as Item;
    if (!item.concept) continue;
    // avatar_url, photo_path: the link to a photo is read as the photo.
    if (item.concept === 'web' && items.slice(0, i).some((t) => t.concept === 'photo')) continue;
    const extra = EXTRA_SUFFIXES[item.concept];
    const tailOk = items
      .slice(i + 1)
      .every((t) => VALUE_SUFFIXES.has(t.text) || /^[0-9]+$/.test(t.text) || extra?.has(t.text));
    if (!tailOk) break;
    // Nearest qualifier first: in contact_company_phone the company, not the contact, owns the phone.
    const before = items
      .slice(0, i)
      .flatMap((t) => t.text.split(' '))
      .reverse();
    const after = items.slice(i + 1).flatMap((t) => t.text.split(' '));
    return {
      items,
      concept: item.concept,
      modifiers: [...before, ...after, ...qualifiers],
      qualifiers,
      words,
      rawLeaf,
    };
  }
  return { items, modifiers: [...items.flatMap((t) => t.text.split(' ')), ...qualifiers], qualifiers, words, rawLeaf };
}

// Table context depends on the entity's name and column names, which a sweep never changes.
const tableContextCache = new WeakMap<CatalogEntity, TableContext>();

function tableContext(entity: CatalogEntity): TableContext {
  let hit = tableContextCache.get(entity);
  if (!hit) {
    hit = computeTableContext(entity);
    tableContextCache.set(entity, hit);
  }
  return hit;
}

function computeTableContext(entity: CatalogEntity): TableContext {
  let tokens = splitIdentifier(entity.name).filter((t) => !NAME_NOISE.has(t) && !/^[0-9]+$/.test(t));
  // "Sales by Category": what follows "by"/"per" is a grouping, not the row.
  const cut = tokens.findIndex((t) => t === 'by' || t === 'per');
  if (cut > 0) tokens = tokens.slice(0, cut);
  const mentionsPerson = tokens.some(isPersonWord) || tokens.some((t) => PAY_TABLE_NOUNS.has(singular(t)));
  let kind: TableKind = 'neutral';
  let reason = `table "${entity.name}" is no organisation or catalogue`;
  for (let i = tokens.length - 1; i >= 0; i--) {
    const word = singular(tokens[i] as string);
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
      reason = `table "${entity.name}" is ${describeKind(k)}`;
      break;
    }
  }

  const shapes = entity.columns.map((c) => ({ column: c, shape: shapeOf(c.name) }));
  const unqualified = (s: ColumnShape): boolean => s.modifiers.every((m) => m.length <= 1 || NAME_QUALITIES.has(m));
  const personNames = shapes.filter((s) => s.shape.concept === 'name_part' && unqualified(s.shape));
  const personFacts = shapes.filter(
    (s) =>
      (s.shape.concept === 'birth' || s.shape.concept === 'gender' || s.shape.concept === 'national') &&
      unqualified(s.shape),
  );
  const orgNames = shapes.filter((s) => s.shape.concept === 'org_name' && unqualified(s.shape));

  if (personNames.length > 0 && kind !== 'organisation') {
    if (kind !== 'person') reason = `columns such as ${personNames[0]?.column.name} make "${entity.name}" person-like`;
    kind = 'person';
  } else if (personFacts.length > 0 && kind === 'neutral') {
    kind = 'person';
    reason = `column ${personFacts[0]?.column.name} makes "${entity.name}" person-like`;
  } else if (orgNames.length > 0 && (kind === 'person' || kind === 'neutral')) {
    // A row that carries a company name and no person name describes an organisation (B2B customers).
    kind = 'organisation';
    reason = `"${entity.name}" rows carry ${orgNames[0]?.column.name} and no person name, so describe organisations`;
  }

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
    kind === 'organisation' || (kind === 'neutral' && tokens.some((t) => ACCOUNT_NOUNS.has(singular(t))));
  return {
    kind,
    reason,
    mentionsPerson: mentionsPerson || kind === 'person',
    payContext,
    payTable,
    bankContext,
    businessRow,
  };
}

function describeKind(kind: TableKind): string {
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
    if (CODE_SUFFIXES.has(last) && nameWords.length > 1) {
      return notPii('identifier', 0.8, `${tokensText} name a code or number of a record, not of a person`);
    }
    if (column.foreign_key !== undefined) return notPii('identifier', 0.85, `foreign key with ${tokensText}`);
    // A column named after a person's role (manager, salesperson, contact_person) holds that person.
    if (isPersonWord(last) && !isOrgWord(last)) {
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
    if (table.payTable && NUMERIC.includes(family) && nameWords.some((w) => PAY_AMOUNT_WORDS.has(w))) {
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
      if (table.kind === 'thing' || table.kind === 'geo' || owner === 'organisation') {
        return notPii('none', 0.6, `${tokensText}; ${table.reason}: not a person's login`);
      }
      return pii('username', 0.85, `${tokensText}: a login or handle of a person`);
    case 'credential':
      if (table.kind === 'thing' || table.kind === 'geo') return notPii('none', 0.55, `${tokensText}; ${table.reason}`);
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
      const role = shape.modifiers.find((m) => FUNCTION_WORDS.has(m));
      if (role && table.businessRow && concept !== 'location')
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
  for (const m of shape.modifiers) {
    if (m.length <= 1 || NAME_QUALITIES.has(m)) continue;
    if (isPersonWord(m)) return pii('person_name', 0.85, `${tokensText}: the name of a ${singular(m)}, a person`);
    if (isOrgWord(m))
      return notPii('business_contact', 0.8, `${tokensText}: the name of a ${singular(m)}, an organisation`);
    if (nounKind(m) === 'geo') return notPii('geo_coarse', 0.8, `${tokensText}: the name of a place`);
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
      explanation: result.explanation,
    });
  }
  return changes;
}
