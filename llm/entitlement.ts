/**
 * Reads whether a provider's answer refuses the request because the account lacks something only
 * money or an account change gives it: a plan, tier, subscription, payment, paid usage, a feature
 * or verification. Such a refusal is spent for the sweep whatever type label it arrives under
 * (`rate_limit_error` included): no wait and no retry gives this key what it lacks.
 *
 * The reading is by meaning, one sentence at a time: a requirement ("X is required for", "requires
 * X", "must add X"), an availability restriction ("not available on your plan", "only available to
 * paid accounts") or an upgrade named as the way to use the thing at all. It is not a refusal when
 * the thing required is a credential or a request field ("a valid API key is required", "max_tokens
 * is required"), when the sentence sells more throughput ("a paid plan is required for higher
 * limits") or when the answer calls the refusal temporary ("due to high demand").
 */

/** How sure the reading is: a stated requirement or restriction, or an upgrade offered as the way on. */
export type EntitlementStrength = 'requirement' | 'upgrade';

export interface EntitlementRefusal {
  strength: EntitlementStrength;
  /** The words that carry the refusal, bounded. */
  evidence: string;
  /** True when what is lacking is money (payment, billing, credits, paid usage), not a plan's feature. */
  payment: boolean;
}

const EVIDENCE_MAX = 100;

/** What an account can lack and buy or obtain: the object of a requirement that makes it a refusal. */
const LACKED = new RegExp(
  [
    String.raw`\b(?:plans?|tiers?|subscriptions?|subscribers?|subscribed|paid|paying|payments?|billing|credits?)\b`,
    String.raw`\b(?:purchase[ds]?|upgraded?|upgrades|licen[cs]es?|licen[cs]ed|seats?|add-?ons?|entitle(?:d|ments?))\b`,
    String.raw`\b(?:extra|additional|paid|metered)[\s-]usage\b|\busage[\s-]based\b|\bpay[\s-]as[\s-]you[\s-]go\b`,
    String.raw`\b(?:pre-?paid|top[\s-]?ups?|deposits?|funds?|verif(?:y|ied|ication))\b`,
    String.raw`\b(?:allow-?list(?:ed|ing)?|white-?list(?:ed|ing)?|early access|beta access|special access|approval|approved)\b`,
    String.raw`\b(?:enterprise|premium)\b`,
    String.raw`\b(?:pro|plus|max|team|business|scale|paid|upgraded)\s+(?:\w+\s+)?(?:users|customers|accounts|members|organi[sz]ations|orgs|keys)\b`,
  ].join('|'),
  'i',
);

/** A requirement of these is a malformed request or a credential problem, not an entitlement. */
const NOT_LACKED =
  /\b(?:field|parameter|param|argument|property|header|keys?|access[\s_-]*tokens?|scopes?|auth\w*|credentials?|password|log(?:ged)?[\s-]*in|sign(?:ed)?[\s-]*in|content[\s-]*type)\b/i;

/** A credential's own name, whatever money word it holds ("subscription key", Azure's header). */
const CREDENTIAL_NAME = /\b(?:subscription|secret|api|access|bearer|session)[\s_-]*(?:keys?|tokens?)\b/i;

/** Money words strong enough to outrank a credential word in the same phrase ("a paid API key is required"). */
const MONEY = /\b(?:paid|paying|payments?|billing|credits?|subscriptions?)\b/i;

/** A phrase that counts requests or tokens states a rate ("restricted to 10 requests per minute on the free tier"). */
const RATE_FIGURE = /\b\d[\d,.]*\s*k?\s+(?:\w+\s+)?(?:requests?|tokens?|calls?|queries|messages|rpm|tpm|rps)\b/i;

/**
 * A sentence that sells more throughput is not the refusal itself, whatever it requires ("a paid
 * plan is required for higher limits", "need more credits?", "upgrade to continue without waiting").
 */
const PITCH =
  /\b(?:higher|more|increased?|larger|bigger|raise[ds]?|boost(?:ed)?)\s+(?:\w+\s+){0,2}(?:limits?|quotas?|throughput|capacity|rpm|tpm|rate)\b|\b(?:increase|raise|lift)\s+(?:\w+\s+){0,2}(?:limits?|quotas?)\b|\bunlock\s+(?:\d|more|higher)|\bwithout (?:waiting|limits|interruption)|\?\s*$/i;

/** A refusal that calls itself passing is capacity, which a wait does fix. */
const TRANSIENT =
  /temporar(?:y|ily)|right now|at the moment|at this time|currently (?:unavailable|overloaded)|high demand|overload|capacity/i;

// The phrase a requirement names: a few words of the same clause, before or after the verb.
const BEFORE = String.raw`((?:[\w'&+-]+[^\S\n]+){0,6}?[\w'&+-]+)`;
const AFTER = String.raw`((?:[\w'&+-]+[^\S\n]*){1,7})`;

/** "X is required for …", "X required", "X needed to …". */
const REQUIRED = new RegExp(
  String.raw`${BEFORE}[^\S\n]+(?:(?:is|are|was|will be|would be)[^\S\n]+)?(?:required|needed|necessary|mandatory)\b`,
  'gi',
);
/** "requires X", "you need X", "must add X", "must be on X". */
const REQUIRES = new RegExp(
  String.raw`\b(?:requires?|requiring|needs?|must (?:have|be(?: on)?|add|enable|purchase|buy|upgrade(?: to)?|subscribe(?: to)?|verify|activate|set up|link)|have to (?:add|purchase|buy|upgrade|subscribe)|only with)[^\S\n]+${AFTER}`,
  'gi',
);

/** "not available on your plan", "not included in the free tier", "not enabled for free keys". */
const NOT_AVAILABLE = new RegExp(
  String.raw`\bnot[^\S\n]+(?:be[^\S\n]+)?(?:available|included|enabled|supported|offered|allowed|permitted|accessible|usable)[^\S\n]+(?:on|in|for|with|under|to|at)[^\S\n]+${AFTER}`,
  'gi',
);
/** "only available to paid accounts", "available only on Enterprise", "reserved for Pro subscribers". */
const ONLY_FOR = new RegExp(
  String.raw`\b(?:(?:only|exclusively)[^\S\n]+(?:available|included|enabled|offered|accessible|usable|supported)|(?:available|enabled|offered|accessible)[^\S\n]+(?:only|exclusively)|exclusive|reserved|restricted)[^\S\n]+(?:on|in|for|with|under|to|at)[^\S\n]+${AFTER}`,
  'gi',
);
// A free tier named as the place something is not available is a plan the account is on.
const FREE = /\bfree(?:[\s-]+(?:\w+[\s-]+)?(?:tier|plan|users|accounts|keys|trial|version|edition)\b|\s*$)/i;

/** Other words of a stated refusal, kept from the earlier rules: access the plan does not give. */
const PLAN = String.raw`(?:plan|tier|subscription|package|account type|pricing tier)`;
const STATED = [
  new RegExp(String.raw`\bnot (?:in|part of|included in)(?: (?:your|the|this|current))* ${PLAN}`, 'i'),
  new RegExp(
    String.raw`${PLAN}[^.\n]{0,40}(?:does not|doesn't|do not|don't|cannot|can't) (?:include|cover|allow|support|permit|grant|access|use)`,
    'i',
  ),
  /(?:does not|doesn't|do not|don't|no longer|not) (?:have|has|granted) access to\b[^.\n]{0,40}\b(?:model|endpoint|feature|tier|resource|deployment)/i,
  /(?:no|without) access to (?:this|the|that|these)\b[^.\n]{0,30}\b(?:model|tier|endpoint|feature)/i,
  /not[\s_-]*(?:entitled|eligible)|(?:no|missing)[\s_-]*entitlement|entitlement[\s_-]*(?:required|missing|denied|not)/i,
];

/** An upgrade or a purchase named as the way to use the thing at all: "upgrade to a paid plan to use this model". */
const UPGRADE_TO_USE =
  /\b(?:upgrade|subscribe|purchase|buy|add (?:a )?payment(?: method)?|enable billing|add (?:\d+ )?credits?)\b[^.;!?\n]{0,50}?\bto (?:use|access|call|continue|keep using|enable|run|try|unlock (?:this|the|access))\b/i;

const PAYMENT =
  /\b(?:paid|paying|payments?|billing|credits?|funds?|balance|pre-?paid|top[\s-]?ups?|deposits?|pay[\s-]as[\s-]you[\s-]go|(?:extra|additional|metered)[\s-]usage)\b/i;

function refusal(strength: EntitlementStrength, words: string): EntitlementRefusal {
  return { strength, evidence: bounded(words), payment: PAYMENT.test(words) };
}

function bounded(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > EVIDENCE_MAX ? `${s.slice(0, EVIDENCE_MAX)}…` : s;
}

/** The words a requirement names are something an account lacks, not a credential or a field. */
function lacked(phrase: string): boolean {
  if (!LACKED.test(phrase)) return false;
  if (RATE_FIGURE.test(phrase) || CREDENTIAL_NAME.test(phrase)) return false;
  return !NOT_LACKED.test(phrase) || MONEY.test(phrase);
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function requirementIn(sentence: string): string | null {
  for (const re of [REQUIRED, REQUIRES]) {
    for (const m of sentence.matchAll(re)) if (lacked(m[1] ?? '')) return m[0];
  }
  for (const m of sentence.matchAll(NOT_AVAILABLE)) {
    const where = m[1] ?? '';
    if (lacked(where) || (FREE.test(where) && !RATE_FIGURE.test(where))) return m[0];
  }
  for (const m of sentence.matchAll(ONLY_FOR)) if (lacked(m[1] ?? '')) return m[0];
  for (const re of STATED) {
    const m = re.exec(sentence);
    if (m) return m[0];
  }
  return null;
}

/**
 * The entitlement refusal `text` states, if any: `requirement` when it says what the account lacks,
 * `upgrade` when it only offers an upgrade as the way to use the thing (a named short window then
 * outranks it). Null when the answer calls itself temporary.
 */
export function entitlementRefusal(text: string): EntitlementRefusal | null {
  if (TRANSIENT.test(text)) return null;
  let upgrade: string | null = null;
  for (const sentence of sentences(text)) {
    if (PITCH.test(sentence)) continue;
    const hit = requirementIn(sentence);
    if (hit) return refusal('requirement', hit);
    upgrade ??= UPGRADE_TO_USE.exec(sentence)?.[0] ?? null;
  }
  return upgrade ? refusal('upgrade', upgrade) : null;
}
