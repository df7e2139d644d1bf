import { CatalogEntity, type PiiCategory } from '../../domain/catalog';
import { reviewPiiTag } from '../../judgment/gate/pii-review';
import { classifyColumn } from '../../judgment/pii/classifier';

/**
 * One vocabulary for the classifier and the gate (judgment/pii/vocabulary.ts, markers.ts): the gate once kept
 * its own, shorter copies of the statistic, flag and key words, the verbs of "<verb>_by", the pay-record words,
 * the abbreviations and the nouns of people, businesses and machines. Each row is a word only the classifier's
 * copy knew: the gate now reads it too, and each still decides on its own evidence.
 */

function table(name: string, column: string, type: string): CatalogEntity {
  return CatalogEntity.parse({
    id: `shop.${name}`,
    database: 'shop',
    name,
    kind: 'table',
    columns: [
      { name: 'row_id', type: 'bigint', primary_key: true },
      { name: column, type },
    ],
  });
}

describe('the classifier and the gate read a name with the same words', () => {
  test.each<[string, string, string, string, PiiCategory, boolean, string]>([
    // [what, table, column, type, category, personal?, the gate's rule]
    ['"number of" counts', 'customers', 'number_of_emails', 'varchar(100)', 'email', false, 'pii:not-personal'],
    ['"ind" flags', 'customers', 'email_ind', 'varchar(10)', 'email', false, 'pii:not-personal'],
    ['"available" flags', 'customers', 'phone_available', 'varchar(10)', 'phone', false, 'pii:not-personal'],
    ['"oid" keys', 'customers', 'address_oid', 'varchar(20)', 'address', false, 'pii:identifier'],
    ['"cancelled by" names who did it', 'orders', 'cancelled_by', 'varchar(100)', 'person_name', true, 'pii:grounded'],
    ['a bonus table is a pay record', 'bonus_history', 'rate', 'numeric(10,2)', 'compensation', true, 'pii:grounded'],
    ['"ni" is national insurance', 'employees', 'ni_number', 'varchar(20)', 'national_id', true, 'pii:grounded'],
    ['"gndr" is gender', 'employees', 'gndr', 'varchar(2)', 'gender', true, 'pii:grounded'],
    ["a clinician's notes", 'appointments', 'clinician_notes', 'text', 'free_text_personal', true, 'pii:grounded'],
  ])('%s', (_what, name, column, type, category, personal, rule) => {
    const e = table(name, column, type);
    const classified = classifyColumn(e.columns[1]!, e);
    expect(classified.pii).toBe(personal);
    if (personal) expect(classified.category).toBe(category);
    const verdict = reviewPiiTag({ kind: 'pii_tag', column, category, confidence: 0.9, explanation: 'x' }, e);
    expect(verdict).toMatchObject({ decision: personal ? 'approved' : 'rejected', rule });
  });
});
