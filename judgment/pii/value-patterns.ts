/**
 * What a few sampled values of a column say about it: e-mail addresses, phone numbers, payment card numbers,
 * IP addresses, US social security numbers, IBANs. Pure, and it never hands a value back: the evidence is a
 * category, two counts and the name of the pattern, so it may go where the values may not (Temporal, the
 * report, logs, a model's prompt). Each pattern errs towards "no": a value that could as well be an id, an
 * amount, a date, a version or a product code does not match.
 */
import type { PiiCategory } from '../../domain/catalog';

/** The patterns, by the short name evidence carries. */
export type ValuePatternName =
  'card number (Luhn)' | 'IBAN (mod 97)' | 'US SSN' | 'IP address' | 'e-mail address' | 'phone number';

/** What the sampled values of one column showed: counts and a pattern name, never a value or part of one. */
export interface ValueEvidence {
  category: PiiCategory;
  /** Sampled values that matched `pattern`. */
  matched: number;
  /** Non-null, non-blank values looked at. */
  sampled: number;
  pattern: ValuePatternName;
}

/** Fewer values than this say nothing: in three or four values a pattern and chance look alike. */
export const MIN_SAMPLED = 5;
/** The share of sampled values one pattern must match (a column with a few stray values still counts). */
export const MIN_SHARE = 0.8;

/** No value ARGUS looks for is longer (an e-mail address is at most 254 characters). */
const MAX_LENGTH = 254;

/**
 * The evidence the values give, or undefined: at least MIN_SAMPLED non-null, non-blank values (trimmed), and at
 * least MIN_SHARE of them matching one pattern. Dotted quads count as IP addresses only when some sampled quad
 * has a part of 100 or more: a column of `1.2.3.4`, `2.0.1.15`, `11.2.0.4` holds versions, not addresses.
 */
export function valueEvidence(values: readonly (string | null)[]): ValueEvidence | undefined {
  let sampled = 0;
  let wideQuad = false;
  const counts = new Map<ValuePatternName, number>();
  for (const raw of values) {
    if (raw === null) continue;
    const value = raw.trim();
    if (value === '') continue;
    sampled++;
    const hit = matchOne(value);
    if (!hit) continue;
    counts.set(hit.pattern, (counts.get(hit.pattern) ?? 0) + 1);
    if (hit.pattern === 'IP address' && !hit.versionLike) wideQuad = true;
  }
  if (sampled < MIN_SAMPLED) return undefined;
  let best: [ValuePatternName, number] | undefined;
  for (const entry of counts) if (!best || entry[1] > best[1]) best = entry;
  if (!best || best[1] < sampled * MIN_SHARE) return undefined;
  const [pattern, matched] = best;
  if (pattern === 'IP address' && !wideQuad) return undefined;
  return { category: CATEGORY[pattern], matched, sampled, pattern };
}

/**
 * The pattern one value matches, if any (leading and trailing white space ignored). Patterns are tried from the
 * most specific (a checksum) to the least, and a value counts for one pattern only. A dotted quad of small
 * parts is an IP address here; only valueEvidence, which sees the whole column, reads such quads as versions.
 */
export function valuePattern(value: string): ValuePatternName | undefined {
  return matchOne(value.trim())?.pattern;
}

const CATEGORY: Record<ValuePatternName, PiiCategory> = {
  'card number (Luhn)': 'payment_card',
  'IBAN (mod 97)': 'bank_account',
  'US SSN': 'national_id',
  'IP address': 'ip_address',
  'e-mail address': 'email',
  'phone number': 'phone',
};

function matchOne(v: string): { pattern: ValuePatternName; versionLike?: boolean } | undefined {
  if (v.length > MAX_LENGTH) return undefined;
  if (isCardNumber(v)) return { pattern: 'card number (Luhn)' };
  if (isIban(v)) return { pattern: 'IBAN (mod 97)' };
  if (isUsSsn(v)) return { pattern: 'US SSN' };
  const quad = ipv4Parts(v);
  if (quad) return { pattern: 'IP address', versionLike: quad.every((p) => p < 100) };
  if (isIpv6(v)) return { pattern: 'IP address' };
  if (isEmail(v)) return { pattern: 'e-mail address' };
  if (isPhone(v)) return { pattern: 'phone number' };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// E-mail: a pragmatic subset of RFC 5322: a dot-atom local part, a host name with a TLD of letters (or an IDN
// `xn--` label). No quoted local parts, no IP literals, no display names, no `user@localhost`.

const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;

function isEmail(v: string): boolean {
  const at = v.lastIndexOf('@');
  return at > 0 && at <= 64 && EMAIL.test(v);
}

// ---------------------------------------------------------------------------------------------------
// Payment cards: 13–19 digits, plain or in groups split by single spaces or dashes (the first group of four),
// a known issuer range with a length it issues, and the Luhn checksum.

/** Issuer ranges: the first `digits` digits between `from` and `to`, and the lengths the issuer uses. */
const ISSUERS: readonly { digits: number; from: number; to: number; lengths: readonly number[] }[] = [
  { digits: 1, from: 4, to: 4, lengths: [13, 16, 19] }, // Visa
  { digits: 2, from: 51, to: 55, lengths: [16] }, // Mastercard
  { digits: 4, from: 2221, to: 2720, lengths: [16] }, // Mastercard 2-series
  { digits: 2, from: 34, to: 34, lengths: [15] }, // American Express
  { digits: 2, from: 37, to: 37, lengths: [15] },
  { digits: 4, from: 6011, to: 6011, lengths: [16, 17, 18, 19] }, // Discover
  { digits: 3, from: 644, to: 649, lengths: [16, 17, 18, 19] },
  { digits: 2, from: 65, to: 65, lengths: [16, 17, 18, 19] },
  { digits: 2, from: 62, to: 62, lengths: [16, 17, 18, 19] }, // UnionPay (and Discover's 622126–622925)
  { digits: 4, from: 3528, to: 3589, lengths: [16, 17, 18, 19] }, // JCB
  { digits: 3, from: 300, to: 305, lengths: [14, 16, 17, 18, 19] }, // Diners Club
  { digits: 4, from: 3095, to: 3095, lengths: [14, 16, 17, 18, 19] },
  { digits: 2, from: 36, to: 36, lengths: [14, 15, 16, 17, 18, 19] },
  { digits: 2, from: 38, to: 39, lengths: [16, 17, 18, 19] },
  { digits: 4, from: 2200, to: 2204, lengths: [16, 17, 18, 19] }, // Mir
  ...[5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763].map((p) => ({
    digits: 4,
    from: p,
    to: p,
    lengths: [13, 14, 15, 16, 17, 18, 19],
  })), // Maestro
];

const CARD_SHAPE = /^\d{13,19}$|^\d{4}(?:[ -]\d{1,7}){1,5}$/;

function isCardNumber(v: string): boolean {
  if (!CARD_SHAPE.test(v)) return false;
  const digits = v.replace(/[ -]/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  if (!ISSUERS.some((i) => inRange(digits, i.digits, i.from, i.to) && i.lengths.includes(digits.length))) return false;
  return luhn(digits);
}

const inRange = (digits: string, n: number, from: number, to: number) => {
  const p = Number(digits.slice(0, n));
  return p >= from && p <= to;
};

/** The Luhn checksum (ISO/IEC 7812-1): every second digit from the right doubled, the sum a multiple of ten. */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

// ---------------------------------------------------------------------------------------------------
// IBAN: country code, two check digits (02–98), the country's length, the ISO 13616 mod-97 check. Compact or
// printed in groups of four.

/** IBAN lengths by country (the SWIFT IBAN registry). A country not listed has no IBAN. */
// prettier-ignore
const IBAN_LENGTH: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21,
  CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18,
  FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26,
  IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24,
  ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29,
  PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23,
  ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};

const IBAN_SHAPE = /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$|^[A-Z]{2}\d{2}(?: [A-Z0-9]{4})* [A-Z0-9]{1,4}$/;

function isIban(v: string): boolean {
  const upper = v.toUpperCase();
  if (!IBAN_SHAPE.test(upper)) return false;
  const iban = upper.replace(/ /g, '');
  if (IBAN_LENGTH[iban.slice(0, 2)] !== iban.length) return false;
  const check = Number(iban.slice(2, 4));
  if (check < 2 || check > 98) return false;
  // Country and check digits moved to the end, letters as 10–35, the number mod 97 is 1; digit by digit, so
  // no number grows past a double's exact range.
  let rest = 0;
  for (const ch of iban.slice(4) + iban.slice(0, 4)) {
    const n = ch >= 'A' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    rest = n >= 10 ? (rest * 100 + n) % 97 : (rest * 10 + n) % 97;
  }
  return rest === 1;
}

// ---------------------------------------------------------------------------------------------------
// US social security numbers: ddd-dd-dddd outside the ranges never issued (area 000, 666, 900–999; group 00;
// serial 0000).

const SSN = /^(\d{3})-(\d{2})-(\d{4})$/;

function isUsSsn(v: string): boolean {
  const m = SSN.exec(v);
  if (!m) return false;
  const area = m[1]!;
  return area !== '000' && area !== '666' && area[0] !== '9' && m[2] !== '00' && m[3] !== '0000';
}

// ---------------------------------------------------------------------------------------------------
// IP addresses: dotted-quad IPv4 (parts 0–255, no leading zeros) and IPv6 (full, `::`-compressed, with an
// embedded IPv4 tail, a zone), each with an optional prefix length; no port.

const QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;

/** The four parts of an IPv4 address, or undefined. */
function ipv4Parts(v: string): number[] | undefined {
  const m = QUAD.exec(v);
  if (!m) return undefined;
  const parts = m.slice(1, 5) as string[];
  if (parts.some((p) => (p.length > 1 && p[0] === '0') || Number(p) > 255)) return undefined;
  if (m[5] !== undefined && Number(m[5]) > 32) return undefined;
  return parts.map(Number);
}

const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

function isIpv6(v: string): boolean {
  let addr = v;
  const slash = addr.indexOf('/');
  if (slash >= 0) {
    const bits = addr.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > 128) return false;
    addr = addr.slice(0, slash);
  }
  const zone = addr.indexOf('%');
  if (zone >= 0) {
    if (!/^[A-Za-z0-9._~-]+$/.test(addr.slice(zone + 1))) return false;
    addr = addr.slice(0, zone);
  }
  if (!addr.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(addr)) return false;
  const halves = addr.split('::');
  if (halves.length > 2) return false;
  const groups = halves.map((h) => (h === '' ? [] : h.split(':')));
  const all = groups.flat();
  let count = all.length;
  const last = all[all.length - 1];
  // An embedded IPv4 address (::ffff:192.0.2.1) is the last two groups.
  if (last !== undefined && last.includes('.')) {
    if (!ipv4Parts(last) || last.includes('/')) return false;
    all.pop();
    count++;
  }
  if (!all.every((g) => HEX_GROUP.test(g))) return false;
  return halves.length === 2 ? count <= 7 : count === 8;
}

// ---------------------------------------------------------------------------------------------------
// Phone numbers: `+` and 8–15 digits (E.164, with or without separators), or a national form of 8–12 digits
// that has separators or parentheses. Plain digit strings are not phones (ids, amounts, timestamps), nor are
// shapes that are something else: dates (2024-01-15, 15.01.2024), dotted quads (IPs, versions), SSN-shaped
// 123-45-6789, decimals (1234567.89), thousands groups (12 345 678, 123.456.789), check-digit ids and ISBNs
// (last group one digit), equal groups of four (1234-5678-9012), date- or year-prefixed order numbers
// (20240115-0042, 2024-000123), a repeated digit.

const PHONE_SHAPE = /^\+?(?:\d{1,4} ?(?=\())?(?:\(\d{1,5}\)[ .-]?)?\d+(?:[ .-]\d+)*$/;
const EXTENSION = /\s*(?:ext\.?|x)\s?\d{1,6}$/i;

function isPhone(v: string): boolean {
  const ext = EXTENSION.exec(v);
  const s = ext ? v.slice(0, ext.index) : v;
  if (s.length > 30 || !PHONE_SHAPE.test(s)) return false;
  // A trunk prefix in parentheses after a country code (+44 (0)20 …) is not dialled from abroad.
  const digits = s.replace(/\(0\)/, s.startsWith('+') ? '' : '0').replace(/\D/g, '');
  if (/^(\d)\1*$/.test(digits)) return false;
  if (s.startsWith('+')) return digits.length >= 8 && digits.length <= 15 && digits[0] !== '0';
  const groups = s.split(/[^\d]+/).filter((g) => g !== '');
  if (groups.length < 2 || digits.length < 8 || digits.length > 12) return false;
  return !notAPhone(s, groups);
}

/** National-form shapes that are something else (see the section comment). */
function notAPhone(s: string, groups: string[]): boolean {
  const len = groups.map((g) => g.length);
  const first = groups[0]!;
  const last = groups[groups.length - 1]!;
  const seps = new Set(s.replace(/[\d()]/g, ''));
  const year = (g: string) => g.length === 4 && /^(?:19|20)\d\d$/.test(g);
  if (last.length < 2) return true;
  if (
    groups.length === 3 &&
    ((len[0] === 4 && len[1]! <= 2 && len[2]! <= 2) || (len[0]! <= 2 && len[1]! <= 2 && len[2] === 4))
  )
    return true; // a date
  if (groups.length === 4 && len.every((n) => n <= 3) && seps.size === 1 && seps.has('.')) return true; // a quad
  if (groups.length === 3 && len[0] === 3 && len[1] === 2 && len[2] === 4) return true; // SSN-shaped
  if (groups.length === 2 && seps.size === 1 && seps.has('.')) return true; // a decimal
  if (
    groups.length >= 3 &&
    !s.includes('(') &&
    first[0] !== '0' &&
    groups.slice(1).every((g) => g.length === 3) &&
    (first.length <= 2 || seps.has('.'))
  )
    return true; // thousands
  if (groups.length >= 3 && len.every((n) => n === 4)) return true; // chunked like a card or a licence key
  if (groups.length === 2 && year(first)) return true; // 2024-000123
  if (
    first.length === 8 &&
    year(first.slice(0, 4)) &&
    /^(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])$/.test(first.slice(4))
  )
    return true; // 20240115-0042
  return false;
}
