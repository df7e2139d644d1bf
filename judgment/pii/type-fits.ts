import { typeFamily as sqlTypeFamily } from '../sql/types';
import type { Concept } from './vocabulary';

/** Which declared column types a value of each concept can plausibly be stored in, as the classifier reads types. */

/** judgment/sql/types.ts' families, with the ones no rule here tells apart (arrays, interval, domains) read as unknown. */
export type TypeFamily = Exclude<ReturnType<typeof sqlTypeFamily>, 'array' | 'other'>;

export function typeFamily(type: string): TypeFamily {
  const family = sqlTypeFamily(type);
  return family === 'array' || family === 'other' ? 'unknown' : family;
}

export const TEXTUAL: ReadonlySet<TypeFamily> = new Set(['text', 'unknown', 'enum']);

export const NUMERIC: readonly TypeFamily[] = ['int', 'decimal', 'float'];
const DATED: readonly TypeFamily[] = ['date', 'timestamp', 'time'];
const fits = (...families: Array<TypeFamily | readonly TypeFamily[]>): ReadonlySet<TypeFamily> =>
  new Set(families.flat());

/** Types a value of each kind can plausibly be stored in. */
export const TYPE_FITS: Record<Concept, ReadonlySet<TypeFamily>> = {
  name_part: TEXTUAL,
  name: TEXTUAL,
  birth: fits(DATED, 'text', 'int', 'unknown'),
  postal: fits('text', 'int', 'unknown'),
  ip: fits('text', 'network', 'int', 'binary', 'unknown'),
  email: TEXTUAL,
  phone: fits('text', NUMERIC, 'unknown'),
  extension: fits('text', 'int', 'unknown'),
  national: fits('text', NUMERIC, 'binary', 'unknown'),
  card: fits('text', NUMERIC, 'binary', 'unknown'),
  bank: fits('text', NUMERIC, 'binary', 'unknown'),
  account_number: fits('text', NUMERIC, 'binary', 'unknown'),
  username: TEXTUAL,
  credential: fits('text', 'binary', 'uuid', 'unknown'),
  gender: fits('text', 'enum', 'int', 'bool', 'unknown'),
  compensation: fits(NUMERIC, 'text', 'unknown'),
  address: fits([...TEXTUAL], 'json'),
  location: fits('decimal', 'float', 'spatial', 'text', 'json', 'unknown'),
  geo: fits('text', 'enum', 'int', 'unknown', 'decimal', 'float'),
  free_text: fits('text', 'unknown', 'json'),
  personal_record: fits('text', 'unknown', 'json'),
  kin: fits('text', 'unknown', 'json'),
  photo: fits('binary', 'text', 'unknown'),
  org_name: TEXTUAL,
  web: TEXTUAL,
  title: TEXTUAL,
  salutation: TEXTUAL,
  device: TEXTUAL,
};
