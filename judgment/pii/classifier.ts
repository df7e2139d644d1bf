import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';
import { PiiCategory as PiiCategorySchema } from '../../domain/catalog';
import type { PiiTagChange, TableReading } from '../../domain/proposal';
import { singular } from '../words';
import {
  conceptVerdict,
  notPii,
  ownerModifiers,
  ownerOf,
  pii,
  type ColumnCategory,
  type Owner,
  type Verdict,
} from './concept-verdict';
import { FREE_TEXT_HEADS, readDescription } from './description-reader';
import { CUSTOM_SUFFIX, expandWords } from './identifier';
import { actorVerb, flagMarker, isPlural, statisticMarker } from './markers';
import { shapeOf, toItems, type ColumnShape } from './name-shape';
import { keyTypeOf, tableContext, type TableContext } from './table-context';
import { NUMERIC, TEXTUAL, typeFamily, type TypeFamily } from './type-fits';
import {
  CODE_SUFFIXES,
  ID_SUFFIXES,
  PAY_AMOUNT_WORDS,
  isOrgWord,
  isPersonWord,
  nounKind,
  words,
  type Concept,
} from './vocabulary';

export type { ColumnCategory };

/**
 * The no-model PII classifier: decides from column-name tokens (a nested path read by its last segment and
 * the segments that qualify it), the column type, the table context (table name tokens and sibling columns)
 * and the column's own description, read as vocabulary only. Pure: no I/O, deterministic, safe to call from
 * any activity.
 */

export interface ColumnClassification {
  pii: boolean;
  category: ColumnCategory;
  confidence: number;
  /** One line, at most 200 characters: the evidence that decided. */
  explanation: string;
  /** Whose record the table's rows were read as (judgment/pii/table-reading.ts). */
  reading: TableReading;
}

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
    reading: tableContext(entity).reading.reading,
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
  const described = descriptionVerdict(column, byName, family, table);
  return described ? weighDescription(byName, described) : byName;
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
    // confirmed_by, received_by: who did it to the row.
    const act = actorVerb(nameWords);
    if (act) {
      if (family === 'int' || family === 'uuid')
        return notPii('identifier', 0.75, `${tokensText} with type ${column.type}: a key of who ${act} it`);
      if (table.kind === 'infra')
        return notPii('none', 0.6, `${tokensText}; ${table.reason}: a machine's record, not a person's`);
      if (TEXTUAL.has(family))
        return pii('person_name', 0.6, `${tokensText} name who ${act} the row: a person's name or login`);
      return notPii('none', 0.7, `${tokensText} with type ${column.type}: not who ${act} it`);
    }
    if (CODE_SUFFIXES.has(last) && nameWords.length > 1) {
      return notPii('identifier', 0.8, `${tokensText} name a code or number of a record, not of a person`);
    }
    if (column.foreign_key !== undefined) return notPii('identifier', 0.85, `foreign key with ${tokensText}`);
    // A column named after a person's role (manager, salesperson, contact_person) holds that person.
    if (isPersonWord(last) && !isOrgWord(last)) {
      // Referred_Contact__c, Onboarding_Manager__c: a CRM custom field named for a role alone is a lookup, which
      // holds the related record's id; one that holds the person's name says so (Referring_Rep_Name__c).
      if (CUSTOM_SUFFIX.test(column.name) && !isPlural(last) && TEXTUAL.has(family))
        return notPii(
          'identifier',
          0.6,
          `${tokensText} on a custom field named for a role alone: a lookup to the ${singular(last)}'s record, not a name`,
        );
      // invoice.customer, subscription.customer: the processor's key for the customer (cus_...), not a name.
      // account_manager typed varchar(18) like the row's own key: a lookup to the manager's record.
      if (
        !isPlural(last) &&
        TEXTUAL.has(family) &&
        !column.primary_key &&
        table.keyType !== undefined &&
        table.keyType === keyTypeOf(column)
      )
        return notPii(
          'identifier',
          0.6,
          `${tokensText} typed ${column.type} like the key of "${table.name}": a reference to the ${singular(last)}'s record`,
        );
      if (PARTY_REFERENCES.has(last) && TEXTUAL.has(family) && !table.reading.headIsPerson)
        return notPii(
          'identifier',
          0.6,
          `${tokensText} on ${table.reading.reading} rows of "${table.name}": a reference to the ${singular(last)}'s record, not a name`,
        );
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
    if (
      table.payTable &&
      (NUMERIC.includes(family) || family === 'unknown') &&
      nameWords.some((w) => PAY_AMOUNT_WORDS.has(w))
    ) {
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

/** Bare party nouns that, on another party's row, reference that party's record in its own system. */
const PARTY_REFERENCES = words('customer client subscriber payer');

// ---------------------------------------------------------------------------------------------------
// Descriptions: the column's own text, read for its vocabulary only

interface DescriptionVerdict {
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
 * The column's own description (judgment/pii/description-reader.ts) judged like a name: the concept its opening
 * noun phrase names, whose value it says it is, and what it says against the value being personal (a statistic,
 * a flag, hashed, not personal, a business's line), weighed as the classifier weighs them.
 */
function descriptionVerdict(
  column: CatalogColumn,
  byName: Verdict,
  family: TypeFamily,
  table: TableContext,
): DescriptionVerdict | undefined {
  const reading = readDescription(column.description);
  if (!reading || reading.phrase.clause.length === 0) return undefined;
  const d = reading.phrase;
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
  const subjectNearestFirst = reading.authored && concept !== 'free_text' ? [] : [...subject].reverse();
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

  const against = ((): DescriptionVerdict['against'] => {
    const { hashed, statistic, flag, denied, businessLine } = reading;
    if (hashed && nameConcept !== 'credential' && concept !== 'credential')
      return { category: 'none', why: `${quote} says "${hashed}": not the person's value itself` };
    const stat = nameConcept === 'compensation' || concept === 'compensation' ? undefined : statistic;
    if (stat) return { category: 'none', why: `${quote} opens with "${stat}": a statistic, not a person's data` };
    if (flag) return { category: 'none', why: `${quote} opens with "${flag}": a yes/no flag, not the value` };
    if (denied) return { category: 'none', why: `${quote} says it is not ${denied}` };
    if (businessLine) return { category: 'business_contact', why: `${quote} names a business's "${businessLine}"` };
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
function weighDescription(byName: Verdict, reading: DescriptionVerdict): Verdict {
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
      explanation: withReading(result.explanation, result.reading),
      reading: result.reading,
    });
  }
  return changes;
}

/** A proposal's explanation: the classifier's line and, beside its tokens, the table reading it used. */
export function withReading(explanation: string, reading: TableReading): string {
  return `${explanation} [table read as ${reading}]`.slice(0, 300);
}
