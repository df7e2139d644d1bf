import { PiiCategory, type CatalogEntity } from '../domain/catalog';
import type { PiiTagChange } from '../domain/proposal';
import { nameWords } from './catalog-context';
import { approve, findColumn, q, reject, type GateVerdict } from './gate-verdict';

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
