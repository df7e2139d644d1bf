import type { PiiCategory } from '../../domain/catalog';
import { CUSTOM_SUFFIX, splitIdentifier } from '../pii/identifier';
import { ABBREVIATIONS } from '../pii/vocabulary';
import type { TypeFamily } from '../sql/types';
import { namePath, nameWords, singular } from '../words';

/**
 * What a column's name states, as the gate reads it: the name's words (a nested path by its leaf, long glued
 * words split), and per category the words and pairs that state it (first_name states person_name).
 */

/**
 * The vocabulary's abbreviations, read as their words (preferred_nm, ni_number, gndr), but "long": the gate asks
 * whether a word stands anywhere in a name, and long_name or "Long description" hold no longitude.
 */
function expanded(word: string): readonly string[] {
  return word === 'long' ? [word] : (ABBREVIATIONS.get(word) ?? [word]);
}

export interface NameEvidence {
  /** Column words with a TPC-H style one-letter prefix ("c_", "r_") removed. */
  words: string[];
  /**
   * For a nested path, the evidence of what the path holds: its last segment, with the segment before it when
   * the last is only a number or line (card.number). undefined for a plain name.
   */
  leaf?: NameEvidence;
  has(...w: string[]): boolean;
  /** Words right before `target` (e.g. "first" in first_name). */
  before(target: string): string | undefined;
}

/** A last path segment of these alone says how a value is written, not what it is (card.number, address.line_1). */
const BARE_LEAF = new Set(['number', 'no', 'num', 'nbr', 'code', 'line', 'digits', 'last', 'first', 'full']);

/** Glued words shorter than this are read as written (dob, ipaddr): only long ones are split. */
const GLUED_MIN = 7;

/**
 * The words of a name, with long glued words split into the shared vocabulary's pieces (nationalidnumber →
 * national id number, addressline1 → address line 1), as a PostgreSQL schema of lower-case names writes them.
 */
export function gateWords(name: string): string[] {
  return nameWords(name.replace(CUSTOM_SUFFIX, '')).flatMap((w) => {
    if (w.length < GLUED_MIN) return [w];
    const pieces = splitIdentifier(w);
    return pieces.length > 1 && pieces.join('') === w ? pieces : [w];
  });
}

export function nameEvidence(columnName: string): NameEvidence {
  const path = namePath(columnName);
  if (path.segments.length <= 1) {
    let words = gateWords(columnName);
    if (words.length > 1 && words[0]!.length === 1) words = words.slice(1);
    return evidenceOf(words);
  }
  // payload.customer.email: wrapper segments (payload, properties) are gone; the leaf says what is held.
  const prev = path.segments[path.segments.length - 2] ?? [];
  const bare = path.leaf.every((w) => BARE_LEAF.has(w) || /^[0-9]+$/.test(w));
  return { ...evidenceOf(path.segments.flat()), leaf: evidenceOf(bare ? [...prev, ...path.leaf] : path.leaf) };
}

export function evidenceOf(raw: string[]): NameEvidence {
  const words = raw.flatMap(expanded);
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
export const NAME_SUPPORTS: Record<PiiCategory, (n: NameEvidence, type: TypeFamily) => boolean> = {
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
  email: (n) => n.has('email', 'mail', 'emailaddress', 'emailaddr', 'eml'),
  phone: (n) =>
    n.has(
      'phone',
      'telephone',
      'tel',
      'mobile',
      'cell',
      'cellphone',
      'fax',
      'phonenumber',
      'msisdn',
      'phoneno',
      'ph',
      'phn',
      'mob',
      'landline',
    ) ||
    // whatsapp_number, Customer_Callback_Number__c, sms_number: a number one calls or texts the person on.
    (n.has('whatsapp', 'callback', 'sms') && n.has('number', 'no', 'num', 'nbr')) ||
    (n.has('call') && n.has('back') && n.has('number')),
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
    (n.has('license', 'licence') && n.has('driver', 'driving', 'drivers')) ||
    (n.has('id', 'identity', 'travel') && n.has('doc', 'document')) ||
    (n.has('national') && n.has('insurance')),
  payment_card: (n) =>
    n.has('cardnumber', 'creditcard', 'ccnumber', 'cvv', 'cvc', 'cvv2', 'pan') ||
    (n.has('card') && n.has('number', 'no', 'num', 'nbr', 'expiry', 'expiration', 'exp')) ||
    (n.has('credit', 'debit') && n.has('card')) ||
    (n.has('cc') && n.has('number', 'num', 'no')) ||
    (n.has('card', 'cc') && n.has('last', 'digits', 'last4')),
  bank_account: (n) =>
    n.has('iban', 'routing', 'bankaccount') ||
    (n.has('bank') && n.has('account', 'acct', 'number', 'no')) ||
    (n.has('sort') && n.has('code')),
  ip_address: (n) =>
    n.has('ip', 'ipv4', 'ipv6', 'ipaddress', 'ipaddr') || (n.has('remote') && n.has('addr', 'address')),
  username: (n) =>
    n.has('username', 'login', 'logon', 'logonname', 'loginname', 'screenname', 'handle', 'nickname') ||
    (n.has('user', 'screen', 'login', 'logon', 'nick') && n.has('name')),
  gender: (n) => n.has('gender', 'sex', 'pronoun', 'pronouns'),
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
    (n.has('pay') && n.has('rate', 'grade', 'amount', 'gross', 'net', 'base')),
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
      'resume',
      // Semi-structured records about a person: contact_info, demographics, skills, profile json.
      'profile',
      'demographics',
      'skills',
      'allergies',
      'allergy',
      'medications',
      'diagnosis',
      'diagnoses',
      'symptoms',
      'ethnicity',
      'religion',
      'hobbies',
      'traits',
      'kin',
      // A person's needs: dietary_requirements, accessibility_needs, disability_status.
      'dietary',
      'diet',
      'accessibility',
      'disability',
      'disabilities',
      'impairment',
      'impairments',
    ) ||
    (n.has('contact', 'personal') && n.has('info', 'information', 'details', 'data')) ||
    (n.has('emergency') && ['contact', 'contacts'].includes(n.words[n.words.length - 1] ?? '')) ||
    (n.has('extra', 'custom') && n.has('attributes', 'fields')) ||
    (n.has('about') && n.has('me')) ||
    (n.has('free') && n.has('text')) ||
    (n.has('medical') && n.has('history', 'record')),
  precise_location: (n) =>
    n.has('lat', 'latitude', 'lng', 'lon', 'longitude', 'geolocation', 'geopoint', 'coordinates', 'coords', 'gps') ||
    (n.has('location') && n.has('spatial', 'geo', 'gps')),
  credential: (n) =>
    n.has('password', 'passwd', 'pwd', 'passcode', 'passphrase', 'secret', 'token', 'apikey', 'otp') ||
    (n.has('api', 'private', 'access', 'secret') && n.has('key')),
};
