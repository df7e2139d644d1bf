import type { CatalogColumn, PiiCategory } from '../../domain/catalog';
import { type ColumnShape } from './name-shape';
import { type ContactSibling, type TableContext } from './table-context';
import { TYPE_FITS, typeFamily, type TypeFamily } from './type-fits';
import {
  ADDRESS_ROLES,
  BANK_CONTEXT,
  FUNCTION_WORDS,
  NAME_QUALITIES,
  VALUE_SUFFIXES,
  isOrgWord,
  isPersonWord,
  nounKind,
  type Concept,
} from './vocabulary';
import { singular } from '../words';

/**
 * The classifier's verdict on a value of one concept (a name, an e-mail, a salary, …): personal or not, and
 * why, from whose it is (the nearest qualifying noun of the name or description) and the table it is on.
 */

export type ColumnCategory = PiiCategory | 'business_contact' | 'geo_coarse' | 'identifier' | 'none';

export type Owner = 'person' | 'organisation' | 'thing' | 'geo' | 'machine' | undefined;

/** The nearest qualifying noun to the left of the value word decides whose value it is. */
export function ownerOf(modifiers: readonly string[]): { owner: Owner; word?: string } {
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

export interface Verdict {
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

export const pii = (category: PiiCategory, confidence: number, why: string): Verdict => ({
  category,
  pii: true,
  confidence,
  why,
});
export const notPii = (category: Exclude<ColumnCategory, PiiCategory>, confidence: number, why: string): Verdict => ({
  category,
  pii: false,
  confidence,
  why,
});

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

/** The words that may name a value's owner: "bank" in bank_iban says what kind of account, not whose. */
export function ownerModifiers(concept: Concept, modifiers: readonly string[]): readonly string[] {
  return concept === 'bank' || concept === 'account_number' ? modifiers.filter((m) => !BANK_CONTEXT.has(m)) : modifiers;
}

export function conceptVerdict(
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
