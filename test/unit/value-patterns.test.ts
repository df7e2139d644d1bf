// Value patterns with invented values only: card numbers made Luhn-valid by hand, IBANs with computed check
// digits over made-up account numbers, phone numbers from the fictional 555-01xx and Ofcom drama ranges.
import { MIN_SAMPLED, valueEvidence, valuePattern, type ValuePatternName } from '../../judgment/pii/value-patterns';

describe('valuePattern: one value', () => {
  test.each<[string, ValuePatternName | undefined]>([
    // e-mail
    ['ada.lovelace@example.com', 'e-mail address'],
    ['j.doe+news@mail.example.co.uk', 'e-mail address'],
    ["o'brien@example.ie", 'e-mail address'],
    ['x_y-z@sub-domain.example.org', 'e-mail address'],
    ['USER@EXAMPLE.COM', 'e-mail address'],
    ['  padded@example.com  ', 'e-mail address'],
    ['info@example.xn--p1ai', 'e-mail address'],
    ['user@localhost', undefined],
    ['user@example', undefined],
    ['user@example.c', undefined],
    ['user@@example.com', undefined],
    ['.user@example.com', undefined],
    ['user.@example.com', undefined],
    ['user..name@example.com', undefined],
    ['user@-example.com', undefined],
    ['user@192.168.1.1', undefined],
    ['user name@example.com', undefined],
    ['"quoted"@example.com', undefined],
    ['Ada <ada@example.com>', undefined],
    ['@example.com', undefined],
    [`${'a'.repeat(65)}@example.com`, undefined],

    // payment cards: a known issuer range, a length it issues, Luhn
    ['4539 1488 0343 6780', 'card number (Luhn)'], // Visa 16
    ['4000001234567899', 'card number (Luhn)'],
    ['4929-1234-5678-9015', 'card number (Luhn)'],
    ['4111111111119', 'card number (Luhn)'], // Visa 13
    ['5425233430109101', 'card number (Luhn)'], // Mastercard 51–55
    ['2223 0031 2200 3313', 'card number (Luhn)'], // Mastercard 2221–2720
    ['2720991234567803', 'card number (Luhn)'],
    ['3714 496353 98431', 'card number (Luhn)'], // Amex 15, 4-6-5
    ['6011000990139424', 'card number (Luhn)'], // Discover
    ['6500123456789017', 'card number (Luhn)'],
    ['3530111333300000', 'card number (Luhn)'], // JCB
    ['30569309025904', 'card number (Luhn)'], // Diners 14
    ['6212345678901234569', 'card number (Luhn)'], // UnionPay 19
    ['2200123456789019', 'card number (Luhn)'], // Mir
    ['50181234567896', 'card number (Luhn)'], // Maestro 14
    ['4539148803436781', undefined], // Luhn fails
    ['5425 2334 3010 9102', undefined], // Luhn fails
    ['1234567812345670', undefined], // Luhn-valid, no issuer starts with 1
    ['2721123456789019', undefined], // Luhn-valid, just past Mastercard's 2720
    ['453914880343672', undefined], // Luhn-valid Visa prefix, but Visa issues no 15-digit numbers
    ['60110009901392', undefined], // Discover prefix, 14 digits
    ['400000000002', undefined], // 12 digits
    ['4539.1488.0343.6780', undefined], // dots are not card separators
    ['4539  1488 0343 6780', undefined], // double space
    ['45391 48803 43678 0', undefined], // a first group of five

    // IBAN: country length, check digits 02–98, mod 97
    ['DE87123456781234567890', 'IBAN (mod 97)'],
    ['DE87 1234 5678 1234 5678 90', 'IBAN (mod 97)'],
    ['GB42ABCD12345612345678', 'IBAN (mod 97)'],
    ['fr4812345678901234567890123', 'IBAN (mod 97)'],
    ['NL20 INGB 0001 2345 67', 'IBAN (mod 97)'],
    ['CH9300762011623852957', 'IBAN (mod 97)'],
    ['DE87123456781234567891', undefined], // one digit off: mod 97 fails
    ['DE1212345678123456789', undefined], // mod 97 holds, but a German IBAN has 22 characters
    ['XX44123456781234567890', undefined], // no such country
    ['DE00123456781234567890', undefined],
    ['DE87 12345678 1234567890', undefined], // not in groups of four

    // US SSN
    ['123-45-6789', 'US SSN'],
    ['512-34-0001', 'US SSN'],
    ['000-12-3456', undefined],
    ['666-12-3456', undefined],
    ['912-34-5678', undefined],
    ['123-00-4567', undefined],
    ['123-45-0000', undefined],
    ['123456789', undefined],
    ['123 45 6789', undefined], // not the SSN form, and SSN-shaped, so not a phone either

    // IP addresses (a quad of small parts too: only a column tells a version from an address)
    ['192.168.1.10', 'IP address'],
    ['10.0.0.1', 'IP address'],
    ['203.0.113.7/24', 'IP address'],
    ['0.0.0.0', 'IP address'],
    ['1.2.3.4', 'IP address'],
    ['2001:db8::8a2e:370:7334', 'IP address'],
    ['2001:0db8:0000:0000:0000:ff00:0042:8329', 'IP address'],
    ['::1', 'IP address'],
    ['fe80::1%eth0', 'IP address'],
    ['::ffff:192.0.2.1', 'IP address'],
    ['2001:db8::/32', 'IP address'],
    ['256.1.1.1', undefined],
    ['192.168.01.1', undefined], // a leading zero: octal to some parsers, an address to none we trust
    ['300.168.100.200', undefined], // and not a phone either
    ['1.2.3', undefined],
    ['1.2.3.4.5', undefined],
    ['192.168.1.1/33', undefined],
    ['192.168.1.1:8080', undefined],
    ['10:30:00', undefined],
    ['00:1A:2B:3C:4D:5E', undefined], // a MAC address
    ['2001:db8:::1', undefined],
    ['1:2:3:4:5:6:7:8:9', undefined],
    ['2001:db8::g', undefined],

    // phone numbers: international
    ['+1 202 555 0143', 'phone number'],
    ['+1 (202) 555-0143', 'phone number'],
    ['+1(202)555-0143', 'phone number'],
    ['+12025550143', 'phone number'],
    ['+44 20 7946 0958', 'phone number'],
    ['+44 (0)20 7946 0958', 'phone number'],
    ['+49 30 12345678', 'phone number'],
    ['+33 1 23 45 67 89', 'phone number'],
    ['+81-3-1234-5678', 'phone number'],
    ['+1234567', undefined], // 7 digits
    ['+1234567890123456', undefined], // 16 digits
    ['+0123456789', undefined], // no country code starts with 0
    ['+1 202 555 0143 0000 1', undefined],
    // phone numbers: national forms
    ['(202) 555-0143', 'phone number'],
    ['202-555-0143', 'phone number'],
    ['202.555.0143', 'phone number'],
    ['202-555-0143 x123', 'phone number'],
    ['202-555-0143 ext. 9', 'phone number'],
    ['020 7946 0958', 'phone number'],
    ['030 12345678', 'phone number'],
    ['(030) 1234567', 'phone number'],
    ['01 23 45 67 89', 'phone number'],
    ['0171-1234567', 'phone number'],
    ['612 345 678', 'phone number'],
    ['079 123 45 67', 'phone number'],
    // phone numbers: near-misses
    ['2025550143', undefined], // plain digits: an id, an amount
    ['1700000000', undefined], // an epoch timestamp
    ['20240115103000', undefined],
    ['2024-01-15', undefined],
    ['15.01.2024', undefined],
    ['01-15-2024', undefined],
    ['2024-01-15 10:30:00', undefined],
    ['2024-01-15T10:30:00Z', undefined],
    ['1234567.89', undefined], // a decimal
    ['1700000000.123', undefined],
    ['-12345678', undefined],
    ['12 345 678', undefined], // thousands
    ['123.456.789', undefined],
    ['1 234 567 890', undefined],
    ['12345678-9', undefined], // a check digit
    ['0-306-40615-2', undefined], // ISBN-10
    ['978-3-16-148410-0', undefined], // ISBN-13
    ['9783161484100', undefined], // EAN-13
    ['4006381333931', undefined],
    ['1234-5678-9012', undefined], // chunked id
    ['ABCD-1234-5678', undefined],
    ['20240115-0042', undefined], // date-prefixed order number
    ['2024-000123', undefined], // year-prefixed order number
    ['ORD-2024-000123', undefined],
    ['000-000-0000', undefined],
    ['(12345678)', undefined],
    ['555--0143-12', undefined],
    ['1.2.3.4.5.6', undefined], // a version, not an address, not a phone

    // nothing
    ['', undefined],
    ['hello world', undefined],
    ['42', undefined],
    ['true', undefined],
  ])('%j → %s', (value, pattern) => {
    expect(valuePattern(value)).toBe(pattern);
  });
});

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const EMAILS = times(10, (i) => `person${i}@example.com`);
const JUNK = times(10, (i) => `note number ${i}`);
const CARDS = ['4539 1488 0343 6780', '5425233430109101', '3714 496353 98431', '6011000990139424', '3530111333300000'];
/** The same numbers with the last digit changed: Luhn fails for every one. */
const NOT_CARDS = CARDS.map((c) => c.slice(0, -1) + String((Number(c.slice(-1)) + 1) % 10));

describe('valueEvidence: a column', () => {
  test.each<[string, (string | null)[], ValuePatternName, string]>([
    ['e-mail addresses', EMAILS, 'e-mail address', 'email'],
    [
      'phone numbers in mixed national and international forms',
      ['(202) 555-0143', '+1 202 555 0199', '202.555.0101', '+44 20 7946 0958', '020 7946 0000', '+12025550123'],
      'phone number',
      'phone',
    ],
    ['card numbers of several issuers', CARDS, 'card number (Luhn)', 'payment_card'],
    [
      'IPv4 and IPv6 addresses',
      ['192.168.1.10', '10.0.0.1', '2001:db8::1', '::1', '203.0.113.7'],
      'IP address',
      'ip_address',
    ],
    [
      'a small network, one part of 100 or more',
      ['10.0.0.2', '10.0.0.3', '10.0.0.17', '10.0.1.5', '10.0.0.120'],
      'IP address',
      'ip_address',
    ],
    [
      'IPv6 only',
      ['2001:db8::1', '2001:db8::2', 'fe80::1%eth0', '::1', '2001:db8:0:0:1:0:0:1'],
      'IP address',
      'ip_address',
    ],
    [
      'social security numbers',
      ['123-45-6789', '512-34-0001', '234-56-7890', '345-67-8901', '456-78-9012'],
      'US SSN',
      'national_id',
    ],
    [
      'IBANs',
      [
        'DE87123456781234567890',
        'GB42ABCD12345612345678',
        'FR4812345678901234567890123',
        'NL20INGB0001234567',
        'CH9300762011623852957',
      ],
      'IBAN (mod 97)',
      'bank_account',
    ],
  ])('%s', (_what, values, pattern, category) => {
    expect(valueEvidence(values)).toEqual({ category, pattern, matched: values.length, sampled: values.length });
  });

  test('nulls and blank values are not sampled; padding is ignored', () => {
    const values = [null, ...EMAILS.slice(0, 5).map((e) => ` ${e}\n`), '', '   ', null];
    expect(valueEvidence(values)).toEqual({ category: 'email', pattern: 'e-mail address', matched: 5, sampled: 5 });
  });

  test(`fewer than ${MIN_SAMPLED} sampled values say nothing, however many nulls`, () => {
    expect(valueEvidence([...EMAILS.slice(0, 4), null, null, null, ''])).toBeUndefined();
    expect(valueEvidence([])).toBeUndefined();
    expect(valueEvidence(EMAILS.slice(0, 5))).toMatchObject({ matched: 5, sampled: 5 });
  });

  test('80 % of one pattern is enough, 70 % is not', () => {
    expect(valueEvidence([...EMAILS.slice(0, 8), ...JUNK.slice(0, 2)])).toEqual({
      category: 'email',
      pattern: 'e-mail address',
      matched: 8,
      sampled: 10,
    });
    expect(valueEvidence([...EMAILS.slice(0, 4), 'not an address'])).toMatchObject({ matched: 4, sampled: 5 });
    expect(valueEvidence([...EMAILS.slice(0, 7), ...JUNK.slice(0, 3)])).toBeUndefined();
  });

  test('two patterns never add up: half e-mail addresses and half phone numbers is nothing', () => {
    const phones = times(5, (i) => `(202) 555-01${10 + i}`);
    expect(valueEvidence([...EMAILS.slice(0, 5), ...phones])).toBeUndefined();
  });

  test('version strings that look like IPv4 addresses are versions: no part reaches 100', () => {
    expect(valueEvidence(['1.2.3.4', '2.0.1.15', '11.2.0.4', '3.10.4.0', '1.0.0.1', '12.1.0.2'])).toBeUndefined();
  });

  test.each<[string, string[]]>([
    // About one in ten 16-digit numbers passes Luhn by chance: far from 80 %.
    ['Luhn-failing card numbers', NOT_CARDS],
    ['a run of 16-digit order numbers', times(20, (i) => String(4000000000000001 + i))],
    ['order numbers', ['ORD-2024-000123', '2024-000124', '20240115-0042', '20240116-0043', '1234-5678-9012']],
    ['plain integer ids', times(10, (i) => String(2025550100 + i))],
    ['phone-like ids', ['1234-5678-9012', '2345-6789-0123', '3456-7890-1234', '4567-8901-2345', '5678-9012-3456']],
    ['timestamps', times(6, (i) => `2024-01-${10 + i} 10:30:0${i}`)],
    ['dates', times(6, (i) => `2024-01-${10 + i}`)],
    ['amounts', ['1234567.89', '12 345 678', '123.456.789', '9876543.21', '1 234 567 890']],
    ['ISBNs and EANs', ['0-306-40615-2', '978-3-16-148410-0', '9783161484100', '4006381333931', '0-19-853453-1']],
    ['invalid SSNs', ['000-12-3456', '666-12-3456', '912-34-5678', '123-00-4567', '123-45-0000']],
    ['MAC addresses and times', ['00:1A:2B:3C:4D:5E', '10:30:00', '00:1a:2b:3c:4d:5f', '23:59:59', '12:00:00']],
    ['free text', JUNK],
    ['70 % card numbers', [...times(7, () => '4539 1488 0343 6780'), 'n/a', 'unknown', 'pending']],
  ])('%s: no evidence', (_what, values) => {
    expect(valueEvidence(values)).toBeUndefined();
  });

  test('the evidence holds counts and a pattern name, never a value or part of one', () => {
    const values = CARDS;
    const ev = valueEvidence(values);
    expect(Object.keys(ev ?? {}).sort()).toEqual(['category', 'matched', 'pattern', 'sampled']);
    const text = JSON.stringify(ev);
    for (const v of values) for (const piece of v.split(/[ -]/)) expect(text).not.toContain(piece);
  });
});
