import { describedPhrase, type DescribedPhrase } from '../words';
import { expandWords } from './identifier';
import { statisticMarker } from './markers';
import { words } from './vocabulary';

/**
 * A column's own description read as vocabulary, the one reading the classifier and the gate share: its opening
 * phrase and the subject it is of (judgment/words.ts), and what it says against the value being a person's —
 * hashed, a statistic, a yes/no flag, "not personal", a business's shared line. Each side weighs these on its
 * own. A description that gives orders is no evidence at all, for or against.
 */
export interface DescriptionReading {
  /** The opening noun phrase, the subject it is of, the first clause and every word. */
  phrase: DescribedPhrase;
  /** The subject came after "by" or "from" ("written by the agent"): who wrote it, not whose value it is. */
  authored: boolean;
  /** A word saying the value was hashed or anonymised. */
  hashed?: string;
  /** What makes it a description of a statistic ("count", "number of", "how"). */
  statistic?: string;
  /** The opener of a description of a yes/no flag ("whether", "indicates"). */
  flag?: string;
  /** The word it denies ("personal" in "not personal data", "pii" in "no PII"). */
  denied?: string;
  /** A business's shared line or mailbox it names ("switchboard", "shared mailbox"). */
  businessLine?: string;
}

/** Words that say a value was hashed or anonymised: no longer the person's value itself. */
const HASH_WORDS = words(
  'hash hashed hashes sha sha1 sha256 md5 digest salted anonymised anonymized anonymous irreversible',
);
/**
 * First words of a description of a statistic ("Aggregated number of...", "How many..."), beyond what makes a
 * name one (judgment/pii/markers.ts), which the first clause is read for too.
 */
const STATISTIC_OPENERS = words(`
  count counts total sum average avg mean median percentage percent share ratio proportion aggregated aggregate
  aggregation summed how
`);
/** First words of a description of a yes/no flag ("Whether the customer...", "True when..."). */
const FLAG_OPENERS = words('whether true false boolean yes flag flags');
/** Verbs that open a flag's description before "whether" or "if" ("Indicates whether..."). */
const FLAG_VERBS = words('indicates indicating shows tells says marks');
/** What a description says a value is not ("not a personal line", "non-personal", "no PII")... */
const DENIED = words('personal pii personally identifying identifiable sensitive');
/** ...when one of these stands at most three words before it. */
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
export const FREE_TEXT_HEADS = words('text message messages narrative prose writeup transcript');

/** Reads a column's own description; undefined when there is none or when it gives orders. */
export function readDescription(text: string | undefined): DescriptionReading | undefined {
  const d = describedPhrase(text);
  if (!d || d.instruction) return undefined;
  const first = d.clause[0] ?? '';
  const hashed = d.words.find((w) => HASH_WORDS.has(w));
  const statistic =
    statisticMarker(expandWords(d.clause)) ??
    (STATISTIC_OPENERS.has(first) ? first : first === 'number' && d.clause[1] === 'of' ? 'number of' : undefined);
  const flag =
    FLAG_OPENERS.has(first) || (FLAG_VERBS.has(first) && ['whether', 'if'].includes(d.clause[1] ?? ''))
      ? first
      : undefined;
  const deniedAt = d.words.findIndex(
    (w, i) => DENIED.has(w) && d.words.slice(Math.max(0, i - 3), i).some((n) => NEGATIONS.has(n)),
  );
  const businessLine =
    d.words.find((w) => BUSINESS_LINES.has(w)) ??
    d.words.map((w, i) => `${w} ${d.words[i + 1] ?? ''}`).find((p) => BUSINESS_LINE_PAIRS.has(p));
  return {
    phrase: d,
    authored: d.subjectIntro === 'by' || d.subjectIntro === 'from',
    ...(hashed !== undefined ? { hashed } : {}),
    ...(statistic !== undefined ? { statistic } : {}),
    ...(flag !== undefined ? { flag } : {}),
    ...(deniedAt >= 0 ? { denied: d.words[deniedAt]! } : {}),
    ...(businessLine !== undefined ? { businessLine } : {}),
  };
}
