import { PiiCategory, type CatalogColumn, type CatalogEntity } from '../../domain/catalog';
import type { DescriptionChange, LineageFlagChange, PiiTagChange, Proposal } from '../../domain/proposal';
import { nameWords, type CatalogContext } from '../agents/catalog-context';
import { tablesReadBySql } from '../agents/sql-tables';
import { detectUnsupportedClaims, isUninformative } from './claims';

/** What the mechanical gate decided about one proposal, and the rule that decided it. */
export interface GateVerdict {
  decision: 'approved' | 'rejected';
  /** One readable line. */
  reason: string;
  /** Short stable id of the rule that decided, e.g. 'unknown-column', 'claim:cadence', 'pii:grounded'. */
  rule: string;
}

/**
 * The Arbiter's mechanical gate: the declared reviewer in no-model mode and the first gate in model
 * mode. Approves only what it can ground in the entity's structure (names, types, keys, recorded
 * lineage, SQL) and the catalog's ids; anything it cannot decide is rejected with that reason.
 * Pure and deterministic. It never reads existing descriptions, the proposal's evidence or its
 * explanation: catalog and agent text are data, not instructions. Never throws: an internal error
 * rejects the proposal (rule 'gate-error'), so a gate failure can never approve anything.
 */
export function mechanicalReview(
  proposal: Proposal,
  entity: CatalogEntity | undefined,
  ctx: CatalogContext,
): GateVerdict {
  try {
    return review(proposal, entity, ctx);
  } catch (err) {
    return reject(
      'gate-error',
      `the gate could not decide: ${q(err instanceof Error ? err.message : String(err), 200)}`,
    );
  }
}

function review(proposal: Proposal, entity: CatalogEntity | undefined, ctx: CatalogContext): GateVerdict {
  if (entity === undefined) {
    return reject('unknown-entity', `cites an entity that does not exist (${q(proposal.entityId)})`);
  }
  if (proposal.entityId !== entity.id) {
    return reject(
      'entity-mismatch',
      `proposal is for ${q(proposal.entityId)} but was reviewed against ${q(entity.id)}`,
    );
  }
  const change = proposal.change;
  switch (change.kind) {
    case 'description':
      return reviewDescription(change, entity, ctx);
    case 'pii_tag':
      return reviewPiiTag(change, entity);
    case 'lineage_flag':
      return reviewLineageFlag(change, entity, ctx);
    default: {
      const unknown: never = change;
      return reject(
        'unknown-kind',
        `cannot review a change of kind ${q(String((unknown as { kind?: unknown }).kind))}`,
      );
    }
  }
}

function approve(rule: string, reason: string): GateVerdict {
  return { decision: 'approved', reason, rule };
}

function reject(rule: string, reason: string): GateVerdict {
  return { decision: 'rejected', reason, rule };
}

/** Catalog names go into reasons: keep each on one short line. */
function q(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 3)}...`;
}

function findColumn(entity: CatalogEntity, name: string | undefined): CatalogColumn | undefined {
  return name === undefined ? undefined : entity.columns.find((c) => c.name === name);
}

// ---------------------------------------------------------------------------------------------
// Descriptions

function reviewDescription(change: DescriptionChange, entity: CatalogEntity, ctx: CatalogContext): GateVerdict {
  let column: CatalogColumn | undefined;
  if (change.target === 'column') {
    if (change.column === undefined) return reject('malformed-target', 'column description names no column');
    column = findColumn(entity, change.column);
    if (!column)
      return reject('unknown-column', `cites column ${q(change.column)}, which ${q(entity.id)} does not have`);
  } else if (change.column !== undefined) {
    return reject('malformed-target', `table description also names column ${q(change.column)}`);
  }
  const subject = column ? `column ${q(column.name)}` : q(entity.id);

  if (isUninformative(change.text, entity, column?.name)) {
    return reject('description:not-informative', `description of ${subject} says nothing beyond its name`);
  }
  const claims = detectUnsupportedClaims(change.text, entity, ctx, column?.name);
  const first = claims[0];
  if (first !== undefined) {
    const listed = claims
      .slice(0, 3)
      .map((c) => c.message)
      .join('; ');
    const more = claims.length > 3 ? `; and ${claims.length - 3} more` : '';
    return reject(
      `claim:${first.kind}`,
      `description of ${subject} asserts what the evidence cannot establish: ${listed}${more}`,
    );
  }
  return approve('description:grounded', `description of ${subject} restates only the schema and recorded lineage`);
}

// ---------------------------------------------------------------------------------------------
// Lineage flags

function reviewLineageFlag(change: LineageFlagChange, entity: CatalogEntity, ctx: CatalogContext): GateVerdict {
  const up = change.upstream;
  const recorded = entity.upstream.includes(up);
  if (change.finding === 'dangling_edge') {
    if (!recorded) return reject('lineage:not-recorded', `${q(up)} is not in the recorded upstream of ${q(entity.id)}`);
    if (ctx.exists(up))
      return reject(
        'lineage:upstream-exists',
        `recorded upstream ${q(up)} exists in the catalog, so the edge is not dangling`,
      );
    return approve('lineage:dangling-confirmed', `recorded upstream ${q(up)} is not an entity in the catalog`);
  }
  if (up === entity.id) return reject('lineage:self', `${q(entity.id)} cannot be its own upstream`);
  if (!ctx.exists(up)) return reject('lineage:unknown-upstream', `${q(up)} is not an entity id in the catalog`);
  if (recorded)
    return reject('lineage:already-recorded', `${q(up)} is already in the recorded upstream of ${q(entity.id)}`);
  if (entity.sql === undefined) return reject('lineage:no-sql', `${q(entity.id)} has no SQL to read ${q(up)} from`);
  const reads = tablesReadBySql(entity.sql);
  const match = reads.find((name) => ctx.resolve(name) === up);
  if (match === undefined) return reject('lineage:not-read', `the SQL of ${q(entity.id)} does not read ${q(up)}`);
  return approve(
    'lineage:unrecorded-read-confirmed',
    `the SQL of ${q(entity.id)} reads ${q(match)} (${q(up)}), which its lineage omits`,
  );
}

// ---------------------------------------------------------------------------------------------
// PII tags: the gate's own evidence (name tokens, type, table context), independent of any classifier.

/** Tables (or column qualifiers) whose rows are people. */
const PERSON = new Set([
  'customer',
  'cust',
  'client',
  'employee',
  'emp',
  'staff',
  'contact',
  'user',
  'person',
  'people',
  'patient',
  'student',
  'member',
  'guest',
  'passenger',
  'driver',
  'author',
  'actor',
  'director',
  'owner',
  'holder',
  'cardholder',
  'applicant',
  'candidate',
  'recipient',
  'sender',
  'buyer',
  'shopper',
  'subscriber',
  'traveler',
  'traveller',
  'rider',
  'tenant',
  'resident',
  'citizen',
  'voter',
  'donor',
  'volunteer',
  'worker',
  'manager',
  'teacher',
  'instructor',
  'doctor',
  'physician',
  'nurse',
  'spouse',
  'parent',
  'beneficiary',
  'policyholder',
  'borrower',
  'billing',
  'shipping',
  'salesperson',
  'rep',
  'insured',
  'learner',
  'consumer',
]);

/** Tables (or column qualifiers) whose rows are businesses: their contact details are not personal data. */
const BUSINESS = new Set([
  'supplier',
  'shipper',
  'vendor',
  'company',
  'store',
  'warehouse',
  'carrier',
  'manufacturer',
  'merchant',
  'partner',
  'organization',
  'organisation',
  'org',
  'branch',
  'office',
  'agency',
  'distributor',
  'wholesaler',
  'bank',
  'firm',
  'business',
  'employer',
  'restaurant',
  'hotel',
  'airline',
  'airport',
]);

/** Tables (or column qualifiers) whose rows are neither people nor parties: places, products, media. */
const NON_PERSON = new Set([
  'region',
  'territory',
  'country',
  'nation',
  'province',
  'county',
  'city',
  'continent',
  'zone',
  'area',
  'district',
  'product',
  'category',
  'subcategory',
  'film',
  'movie',
  'album',
  'track',
  'song',
  'genre',
  'playlist',
  'media',
  'language',
  'currency',
  'part',
  'sku',
  'brand',
  'inventory',
  'department',
  'dept',
  'channel',
  'campaign',
  'calendar',
  'book',
  'course',
  'segment',
  'demographic',
  'item',
]);

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

/** On a ledger, account identifiers are chart-of-accounts entries, not bank accounts of people. */
const LEDGER = new Set(['ledger', 'gl', 'journal', 'coa', 'posting', 'accounting', 'chart']);
const LEDGER_GENERIC = new Set(['account', 'acct', 'number', 'no', 'num', 'nbr', 'id', 'code', 'key', 'name', 'type']);

/** A text column named for a role holds that person's name ("Salesperson", "manager"). */
const ROLE_NOUNS = new Set([
  'salesperson',
  'salesman',
  'saleswoman',
  'manager',
  'composer',
  'author',
  'director',
  'actor',
  'writer',
  'editor',
  'owner',
  'recipient',
  'sender',
  'assignee',
  'reporter',
  'approver',
  'reviewer',
  'requester',
  'representative',
  'rep',
  'agent',
  'driver',
  'passenger',
  'patient',
  'physician',
  'doctor',
  'nurse',
  'teacher',
  'instructor',
  'student',
  'employee',
]);

const CONTACT_CATEGORIES = new Set<PiiCategory>(['email', 'phone', 'address', 'postal_code', 'person_name']);

type TypeFamily =
  | 'text'
  | 'int'
  | 'decimal'
  | 'float'
  | 'date'
  | 'timestamp'
  | 'time'
  | 'bool'
  | 'binary'
  | 'network'
  | 'geo'
  | 'other';

const TEXT: TypeFamily[] = ['text'];
const TEXT_OR_NUMBER: TypeFamily[] = ['text', 'int', 'decimal'];
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
  gender: ['text', 'int', 'bool'],
  compensation: ['decimal', 'float', 'int'],
  precise_location: ['decimal', 'float', 'geo', 'text'],
  credential: ['text', 'binary'],
};

interface NameEvidence {
  /** Column words with a TPC-H style one-letter prefix ("c_", "r_") removed. */
  words: string[];
  has(...w: string[]): boolean;
  /** Words right before `target` (e.g. "first" in first_name). */
  before(target: string): string | undefined;
}

function nameEvidence(columnName: string): NameEvidence {
  let words = nameWords(columnName);
  if (words.length > 1 && words[0]!.length === 1) words = words.slice(1);
  const set = new Set(words.map(singular));
  return {
    words,
    has: (...w) => w.some((x) => set.has(x) || words.includes(x)),
    before: (target) => {
      const i = words.indexOf(target);
      return i > 0 ? words[i - 1] : undefined;
    },
  };
}

/** Name tokens that support each category; true means the column's name states the category. */
const NAME_SUPPORTS: Record<PiiCategory, (n: NameEvidence, type: TypeFamily) => boolean> = {
  person_name: (n) =>
    n.has(
      'firstname',
      'lastname',
      'fullname',
      'givenname',
      'familyname',
      'surname',
      'middlename',
      'forename',
      'maidenname',
      'fname',
      'lname',
    ) ||
    ['first', 'last', 'full', 'given', 'family', 'middle', 'maiden', 'sur', 'fore', 'christian', 'legal'].includes(
      n.before('name') ?? '',
    ),
  email: (n) => n.has('email', 'mail', 'emailaddress', 'emailaddr'),
  phone: (n) =>
    n.has('phone', 'telephone', 'tel', 'mobile', 'cell', 'cellphone', 'fax', 'phonenumber', 'msisdn', 'phoneno'),
  postal_code: (n) =>
    n.has('zip', 'zipcode', 'zip5', 'postal', 'postcode', 'postalcode') || (n.has('post') && n.has('code')),
  address: (n) =>
    !n.has('ip', 'mac', 'email', 'mail', 'web', 'url', 'wallet', 'server', 'host', 'remote') &&
    (n.has('address', 'addr', 'street', 'streetaddress') ||
      n.words.some((w, i) => w === 'line' && /^\d$/.test(n.words[i + 1] ?? ''))),
  birth_date: (n, type) =>
    n.has('dob', 'birthday', 'birthdate', 'dateofbirth') ||
    (n.has('birth', 'born') && (n.has('date', 'day', 'dt', 'year') || type === 'date' || type === 'timestamp')),
  national_id: (n) =>
    n.has(
      'ssn',
      'sin',
      'nin',
      'nino',
      'passport',
      'nationalid',
      'taxid',
      'tin',
      'aadhaar',
      'cpf',
      'nric',
      'bsn',
      'personnummer',
    ) ||
    (n.has('national') && n.has('id', 'number', 'no')) ||
    (n.has('social') && n.has('security')) ||
    (n.has('tax') && n.has('id', 'number', 'no', 'code')) ||
    (n.has('license', 'licence') && n.has('driver', 'driving', 'drivers')),
  payment_card: (n) =>
    n.has('cardnumber', 'creditcard', 'ccnumber', 'cvv', 'cvc', 'cvv2', 'pan') ||
    (n.has('card') && n.has('number', 'no', 'num', 'nbr', 'expiry', 'expiration', 'exp')) ||
    (n.has('credit', 'debit') && n.has('card')) ||
    (n.has('cc') && n.has('number', 'num', 'no')),
  bank_account: (n) =>
    n.has('iban', 'routing', 'bankaccount') ||
    (n.has('bank') && n.has('account', 'acct', 'number', 'no')) ||
    (n.has('sort') && n.has('code')),
  ip_address: (n) =>
    n.has('ip', 'ipv4', 'ipv6', 'ipaddress', 'ipaddr') || (n.has('remote') && n.has('addr', 'address')),
  username: (n) =>
    n.has('username', 'login', 'screenname', 'handle', 'nickname') ||
    (n.has('user', 'screen', 'login', 'nick') && n.has('name')),
  gender: (n) => n.has('gender', 'sex'),
  compensation: (n) =>
    n.has(
      'salary',
      'wage',
      'compensation',
      'payroll',
      'income',
      'earnings',
      'bonus',
      'commission',
      'payrate',
      'remuneration',
      'stipend',
    ) ||
    (n.has('pay') && n.has('rate', 'grade', 'amount')),
  free_text_personal: (n) =>
    n.has(
      'note',
      'notes',
      'comment',
      'comments',
      'remark',
      'remarks',
      'bio',
      'biography',
      'memo',
      'message',
      'feedback',
    ),
  precise_location: (n) =>
    n.has('lat', 'latitude', 'lng', 'lon', 'longitude', 'geolocation', 'geopoint', 'coordinates', 'coords', 'gps'),
  credential: (n) =>
    n.has('password', 'passwd', 'pwd', 'passcode', 'passphrase', 'secret', 'token', 'apikey', 'otp') ||
    (n.has('api', 'private', 'access', 'secret') && n.has('key')),
};

function reviewPiiTag(change: PiiTagChange, entity: CatalogEntity): GateVerdict {
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
  const tableWords = nameWords(entity.name).map(singular);
  const ledger = tableWords.some((w) => LEDGER.has(w));
  if (
    name.words.length > 0 &&
    (name.words.every((w) => GENERIC.has(singular(w))) || (ledger && name.words.every((w) => LEDGER_GENERIC.has(w))))
  ) {
    return reject('pii:generic-column', `${col} is a generic column name on ${table}; it does not identify a person`);
  }

  const qualifiers = name.words.map(singular);
  const personQualifier = qualifiers.some((w) => PERSON.has(w));
  const businessQualifier = qualifiers.some((w) => BUSINESS.has(w));
  const thingQualifier = qualifiers.some((w) => NON_PERSON.has(w));
  const tableKind: 'business' | 'person' | 'thing' | 'neutral' = tableWords.some((w) => BUSINESS.has(w))
    ? 'business'
    : tableWords.some((w) => PERSON.has(w))
      ? 'person'
      : tableWords.some((w) => NON_PERSON.has(w))
        ? 'thing'
        : 'neutral';

  const supports = Object.prototype.hasOwnProperty.call(NAME_SUPPORTS, category) ? NAME_SUPPORTS[category] : undefined;
  if (supports === undefined) return reject('pii:unknown-category', `${q(String(category))} is not a PII category`);
  const type = typeFamily(column.type);
  const stated = supports(name, type);
  const roleName =
    category === 'person_name' &&
    ROLE_NOUNS.has(singular(name.words[name.words.length - 1] ?? '')) &&
    (type === 'text' || type === 'other');
  const bareName = category === 'person_name' && !stated && !roleName && name.words[name.words.length - 1] === 'name';

  // A credential is sensitive whoever it belongs to; every other category is about a person.
  if (category !== 'credential') {
    if (businessQualifier || tableKind === 'business') {
      // A business's contact details are business contacts, but a named contact person (ContactName,
      // first_name on a suppliers table) is still a natural person.
      const namedPerson = category === 'person_name' && (stated || (bareName && personQualifier && !businessQualifier));
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
  } else if (!stated && !roleName) {
    return reject('pii:ungrounded', `cannot ground category ${category} on column ${col}`);
  }

  if (category === 'free_text_personal' && !(personQualifier || tableKind === 'person')) {
    return reject(
      'pii:ungrounded',
      `cannot ground category ${category} on column ${col}: free text on a table that does not hold people`,
    );
  }

  if (type !== 'other' && !ALLOWED_TYPES[category].includes(type)) {
    return reject('pii:type-mismatch', `${col} has type ${q(column.type, 40)}, which cannot hold ${category}`);
  }

  const basis = roleName
    ? `names a person by role`
    : bareName
      ? `is a name on ${personQualifier ? 'a person-like prefix' : `a table of people (${table})`}`
      : `states ${category}`;
  return approve('pii:grounded', `${col} ${basis}; type ${q(column.type, 40)} fits ${category}`);
}

function singular(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(?:ss|us|is)$/.test(word)) return word;
  if (/(?:ches|shes|xes|sses)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

function typeFamily(raw: string): TypeFamily {
  const t = raw
    .toLowerCase()
    .replace(/\(.*?\)/g, ' ')
    .replace(/\[\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (/^(?:array|struct|map|json|jsonb|variant|object|xml|uuid|interval|user-defined)\b/.test(t)) return 'other';
  if (/timestamp|datetime|smalldatetime/.test(t)) return 'timestamp';
  if (/^date\b/.test(t)) return 'date';
  if (/^time\b/.test(t)) return 'time';
  if (/^(?:bool|boolean|bit)\b/.test(t)) return 'bool';
  if (/char|text|string|clob|citext|enum|set\b/.test(t)) return 'text';
  if (/^(?:tiny|small|medium|big)?int|^integer|serial\b|^long\b|^short\b/.test(t)) return 'int';
  if (/^(?:decimal|numeric|number|money|smallmoney|dec)\b/.test(t)) return 'decimal';
  if (/^(?:float|double|real)\b/.test(t)) return 'float';
  if (/binary|blob|bytea|image|bytes/.test(t)) return 'binary';
  if (/^(?:inet|cidr|macaddr)/.test(t)) return 'network';
  if (/geometry|geography|point|geo/.test(t)) return 'geo';
  return 'other';
}
