import { singular } from '../words';

/**
 * The PII vocabulary shared by the classifier, the table reading and the identifier splitter: what name words and
 * phrases can mean, the nouns that name people, organisations, machines, places and things, and the words that
 * qualify a value without changing it. Data only, and the lookups that read it.
 */

export function words(list: string): Set<string> {
  return new Set(list.split(/\s+/).filter((w) => w.length > 0));
}

export function wordMap(groups: Partial<Record<Concept, string>>): Map<string, Concept> {
  const map = new Map<string, Concept>();
  for (const [concept, list] of Object.entries(groups) as Array<[Concept, string]>) {
    for (const w of words(list)) map.set(w, concept);
  }
  return map;
}

export function phraseMap(groups: Partial<Record<Concept, string>>): Map<string, Concept> {
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
export const ABBREVIATIONS: ReadonlyMap<string, readonly string[]> = new Map(
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
export type Concept =
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
export const PHRASES: ReadonlyMap<string, Concept> = phraseMap({
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
  phone: `
    phone number, callback number, call back number, contact number, whatsapp number, sms number, landline number
  `,
  card: 'card number, credit card, debit card, card cvv',
  bank: 'bank account, routing number, sort code',
  account_number: 'account number',
  username: 'user name, login name, logon name, screen name, user login, user logon',
  credential: `
    pass word, api key, access token, refresh token, auth token, session token, reset token, private key,
    client secret,
    security answer, otp secret, mfa secret
  `,
  gender: 'gender identity',
  address: 'street address, address line, house number, street number, street name',
  location: 'geo location, geo point, spatial location',
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
export const WORDS: ReadonlyMap<string, Concept> = wordMap({
  name_part: 'surname forename initials',
  name: 'name',
  birth: 'birthday birthdate born',
  postal: 'zip zipcode postcode postalcode pincode',
  ip: 'ip',
  email: 'email mail',
  phone: 'phone mobile cell fax msisdn landline',
  extension: 'extension ext',
  national: 'ssn sin nin tin itin tfn passport aadhaar nric pesel cpf',
  card: 'pan cvv cvc',
  bank: 'iban',
  username: 'username login logon handle nickname gamertag screenname',
  credential: 'password pin secret token',
  gender: 'gender sex pronouns',
  compensation: 'salary salaries wage wages pay compensation remuneration bonus commission earnings income stipend',
  address: 'address addresses street apartment',
  location: 'latitude longitude geolocation coordinates gps',
  geo: 'city town country region state province county territory nation continent district suburb locality municipality timezone',
  free_text: 'notes note comments comment remarks remark bio biography memo resume cv',
  personal_record: `
    profile demographics demographic skills skillset allergies allergy medications diagnoses diagnosis symptoms
    ethnicity religion hobbies traits attributes dietary diet accessibility disability disabilities impairment
    impairments
  `,
  kin: 'kin',
  photo: 'photo photograph picture image avatar portrait headshot selfie',
  org_name: 'company employer organisation organization',
  web: 'homepage website url',
  title: 'title',
  salutation: 'salutation honorific courtesy',
});

/** Nouns naming a natural person. As a table head they make the table person-like; as a column head, a name. */
export const PERSON_NOUNS = words(`
  person customer client employee staff user member contact patient individual student pupil teacher instructor
  tutor doctor physician nurse clinician dentist therapist practitioner author composer subscriber applicant
  candidate guest visitor passenger driver rider traveler traveller donor volunteer worker contractor freelancer
  owner landlord borrower beneficiary dependent dependant spouse guardian parent child citizen resident voter
  participant attendee learner player athlete holder cardholder payee recipient manager supervisor salesperson
  salesman representative agent clerk assignee reviewer approver requester reporter buyer profile prospect lead
  hire emergency kin husband wife sibling mother father director actor cashier technician engineer consultant
  intern trainee officer caller sender shopper consumer insured policyholder enrollee caregiver carer respondent
  saleswoman writer editor champion signer signatory cosigner stakeholder influencer
`);

/** Person nouns for people who are paid: evidence that a pay column is an individual's pay. */
export const WORKER_NOUNS = words(`
  employee staff worker contractor freelancer salesperson salesman representative agent clerk teacher instructor
  tutor doctor physician nurse clinician manager supervisor driver technician engineer consultant intern trainee
  officer cashier hire
`);

/** Nouns naming an organisation or one of its sites: its contact details are business contact, not PII. */
export const ORG_NOUNS = words(`
  supplier shipper vendor company business store shop office branch merchant carrier manufacturer publisher agency
  organisation organization org institution bank warehouse factory hospital clinic pharmacy school university
  college hotel restaurant venue airline retailer distributor dealer dealership firm employer insurer laboratory
  lab franchise outlet depot headquarters hq subsidiary corporation corporate enterprise brand practice library
  museum theater theatre cinema gym studio wholesaler airport
`);

/** Places: an organisation's site, unless the table name also names a person (user_locations). */
export const SITE_NOUNS = new Set(['location', 'site', 'premises', 'building', 'facility', 'campus']);

/** Things and catalogue items: none of their columns describe a person by default. */
export const THING_NOUNS = words(`
  product item part sku film movie album track song genre category book playlist media catalog catalogue inventory
  asset tag course lesson menu dish recipe animal pet dog cat horse livestock document file report project plan
  tier feature language currency department team room equipment vehicle model show episode game artwork material
  ingredient component
`);

export const GEO_NOUNS = words(`
  region territory country nation city state province district zone continent county area municipality locale
  timezone
`);

export const LEDGER_NOUNS = words(`
  ledger gl journal chart coa posting budget fiscal cost center accounting
`);

/** Machines, installations and their networks: an address or IP they qualify is a machine's, not a person's. */
export const INFRA_NOUNS = words(`
  server host hostname node machine instance installation install cluster router gateway subnet network vm container
  pod endpoint datacenter firewall switch database db replica shard proxy daemon deployment runner tower mast antenna
  sensor analyser analyzer instrument meter printer scanner kiosk appliance balancer relay loopback
`);

/** Equipment that may be a person's (a user's device): infrastructure as a table's row, not as a qualifier. */
export const EQUIPMENT_NOUNS = words('device handset terminal');

/**
 * Statistics about people are not personal data: a count, total, average or share of users says nothing about
 * one of them. STAT_PREFIXES open such a name (count_registered_users, avg_user_age, pct_users_with_email),
 * STAT_SUFFIXES close it (users_count, signup_rate). "number" and "n" count only before "of" or a plural
 * (number_of_leads, num_customers, n_signups), so phone_number and TPC-H's n_name keep their meaning.
 */
export const STAT_PREFIXES = words(`
  count counts cnt total totals sum avg average mean median pct percent percentage ratio proportion fraction share
  distinct nb dau wau mau
`);
export const STAT_SUFFIXES = words(`
  count counts cnt total totals sum avg average mean median pct percent percentage ratio rate proportion fraction
  share dau wau mau
`);
/** "<period> active": daily_active_users, weekly_active_members, l28_active_accounts. */
export const STAT_PERIODS = words('daily weekly monthly yearly quarterly annual hourly');

/**
 * A yes/no flag about an attribute (is_valid_email, has_phone, email_verified, has_opted_out_of_fax) does not
 * carry the attribute: ARGUS tags the column that holds the e-mail, not the one that says whether it exists.
 */
export const FLAG_PREFIXES = words(`
  is has have had was were can could should did does do will allow allows needs enable enables disable disables
  isdefault isnotempty isempty require requires enforce
`);
/** Verb-like words that make a flag wherever they stand (email_is_verified). */
export const FLAG_INNER = words('is has was');
export const FLAG_SUFFIXES = words(`
  flag flags flg ind indicator verified unverified validated valid invalid confirmed exists present missing
  available enabled disabled bounced unsubscribed subscribed optout optin opted consented
`);
export const FLAG_PAIRS = new Set(['opted out', 'opted in', 'opt out', 'opt in']);

/**
 * Business functions: an e-mail, phone or address qualified by one (billing_email, billing_contact_email,
 * support_phone) on an organisation's or a company account's row is the business's mailbox, not a person's.
 */
export const FUNCTION_WORDS = words(`
  billing invoice invoicing payable receivable support helpdesk finance accounting sales admin technical tech abuse
  info noreply notification notifications ops operations security legal compliance procurement purchasing
`);
/** Table heads that, without a person on the row, are usually a company's account (CRM, SaaS tenants). */
export const ACCOUNT_NOUNS = words('account tenant workspace');

/** Table names that are themselves an HR compensation record. */
export const PAY_TABLE_NOUNS = words(`
  salary payroll payslip paycheck wage compensation bonus commission
`);

/** A word of a table name that makes the table a pay record (salaries, payroll, employee_pay_history). */
export function isPayTableWord(word: string): boolean {
  return PAY_TABLE_NOUNS.has(singular(word)) || word === 'pay';
}

/** Words in view and table names that say nothing about what a row is. */
export const NAME_NOISE = words(`
  v vw view qry query list of and the for summary current full alphabetical extended dim fact stg staging raw tbl
  t latest date all active detail details info data history log new old tmp temp master mart src snapshot x map
  link xref
`);

/** Tokens that may follow a value word without changing what the column holds (phone_number, email_2, ...). */
export const VALUE_SUFFIXES = words(`
  number line primary secondary alt alternate other main e164 formatted normalized normalised raw value text full
  masked encrypted enc hash hashed digest lower clean cleaned str string plain txt home work personal private
  office business international local national current last digits
`);

export const EXTRA_SUFFIXES: Partial<Record<Concept, ReadonlySet<string>>> = {
  compensation: words(
    'amount amt usd eur gbp rate pct percent percentage annual monthly yearly hourly weekly gross net base total value paid',
  ),
  gender: new Set(['code', 'cd', 'flag']),
  geo: new Set(['code', 'cd', 'name', 'description', 'iso', 'abbr', 'abbreviation']),
  birth: new Set(['date', 'year', 'day', 'month']),
  free_text: new Set(['body', 'content', 'details']),
  // dietary_requirements, accessibility_needs: what the person needs is still the person's record.
  personal_record: words('needs requirements requirement restrictions restriction preferences preference'),
  photo: new Set(['path', 'url', 'uri', 'file', 'blob', 'data', 'link']),
};

/** Figures on a pay record that are the pay itself (employee_pay_history.rate, salaries.amount). */
export const PAY_AMOUNT_WORDS = words('rate amount amt gross net base total value sum');

/** Address roles that, on a company's record, are the company's addresses (billing_street, shipping_latitude). */
export const ADDRESS_ROLES = words('billing shipping mailing delivery');

/** Verbs of what a person does to a record: confirmed_by, received_by name who did it. */
export const ACT_VERBS = words(`
  created updated modified changed edited deleted entered recorded received confirmed approved rejected reviewed
  verified checked signed submitted requested assigned completed closed opened resolved cancelled canceled
  authorized authorised prepared processed handled inspected packed picked accepted acknowledged witnessed
  performed reported raised logged booked invited referred released counted
`);

/** Words around an account number that make it a payout or bank account rather than a record number. */
export const BANK_CONTEXT = words(`
  bank banking payee payout deposit direct beneficiary refund ach wire sepa remittance disbursement
`);

/** Last words of a name that make it a key (customer_id, order_ref), not the value it names. */
export const ID_SUFFIXES = new Set(['id', 'key', 'uuid', 'guid', 'pk', 'fk', 'sk', 'ref', 'oid', 'uid', 'nk']);
export const CODE_SUFFIXES = new Set(['number', 'code', 'cd']);

/**
 * Prepositions that open a tail qualifying the value before them (ip_address_at_signup, phone_for_alerts,
 * email_on_file): the value word stays what the column holds. "of" is not one: phrases span it (date of birth).
 */
export const TAIL_PREPOSITIONS = words('at on upon during when via for from');

/** Qualities of a name that defer to the table ("legal_name" on a person table is a person's name). */
export const NAME_QUALITIES = words(`
  legal preferred official real primary current display short long nick common formal informal known previous
  former alias alternate alt other english local
`);

export const DP_VOCAB = new Set<string>([
  ...[...WORDS.keys()].filter((w) => w.length >= 3 && !['sin', 'nin', 'tin', 'pan', 'pin', 'ext', 'cpf'].includes(w)),
  ...[...PHRASES.keys()].flatMap((p) => p.split(' ')).filter((w) => w.length >= 3),
  ...[...PERSON_NOUNS, ...ORG_NOUNS, ...THING_NOUNS, ...GEO_NOUNS].filter((w) => w.length >= 3 && !w.includes('_')),
  ...[...VALUE_SUFFIXES].filter((w) => w.length >= 3),
  ...words(`
  ip id no emp cust dob ssn addr zip fax sex tax pay ship shipping billing mailing delivery home work code rate pct
  additional spatial annual revenue of employees industry website kind
  date time type status count last first middle given family login user email sales person page web key hire
  order invoice unit price quantity amount total created updated deleted eml tel phn
  `),
]);

/** What a noun names, when it names a kind of row. */
export type NounKind = 'person' | 'organisation' | 'thing' | 'geo' | 'ledger' | 'infra' | 'neutral';

export function nounKind(word: string): NounKind | undefined {
  const w = singular(word);
  if (PAY_TABLE_NOUNS.has(w) || PERSON_NOUNS.has(w)) return 'person';
  if (ORG_NOUNS.has(w)) return 'organisation';
  if (GEO_NOUNS.has(w)) return 'geo';
  if (THING_NOUNS.has(w)) return 'thing';
  if (LEDGER_NOUNS.has(w)) return 'ledger';
  if (INFRA_NOUNS.has(w)) return 'infra';
  return undefined;
}

export function isPersonWord(word: string): boolean {
  return PERSON_NOUNS.has(singular(word));
}

export function isOrgWord(word: string): boolean {
  return ORG_NOUNS.has(singular(word));
}
