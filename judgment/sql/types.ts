import { UNKNOWN_COLUMN_TYPE } from '../../domain/catalog';

/**
 * The one reader of SQL column types: what kind of value a declared type can hold, across dialects
 * (PostgreSQL, MySQL, SQL Server, Oracle, Snowflake, BigQuery, Spark, DuckDB). Types are read as catalogs give them,
 * in either case (`VARCHAR`, `text`, `STRING`): no catalog needs to rewrite its types first. Pure.
 */
export type TypeFamily =
  | 'bool'
  | 'int'
  | 'decimal'
  | 'float'
  | 'date'
  | 'timestamp'
  | 'time'
  | 'text'
  | 'enum'
  | 'binary'
  | 'uuid'
  | 'network'
  | 'spatial'
  /** Semi-structured: json, jsonb, variant, object, struct, map, xml, hstore, super. */
  | 'json'
  /** ARRAY / ARRAY<...> without a readable element type (text[] reads as its element, text). */
  | 'array'
  /** The catalog does not know the type (UNKNOWN_COLUMN_TYPE) or it is empty. */
  | 'unknown'
  /** A declared type none of the above covers (interval, USER-DEFINED, a domain name). */
  | 'other';

const TEXT_WORDS = new Set([
  'char',
  'varchar',
  'nchar',
  'nvarchar',
  'text',
  'ntext',
  'string',
  'clob',
  'nclob',
  'citext',
  'character',
  'tinytext',
  'mediumtext',
  'longtext',
  'varchar2',
  'nvarchar2',
  'bpchar',
  'str',
  'varying',
]);
const DECIMAL_WORDS = new Set(['numeric', 'decimal', 'dec', 'money', 'smallmoney', 'bignumeric', 'bigdecimal']);
const FLOAT_WORDS = new Set(['float', 'float4', 'float8', 'float64', 'double', 'real']);
const DATE_WORDS = new Set(['date', 'year']);
const TIMESTAMP_WORDS = new Set([
  'datetime',
  'datetime2',
  'smalldatetime',
  'timestamp',
  'timestamptz',
  'timestamp_tz',
  'timestamp_ltz',
  'timestamp_ntz',
  'datetimeoffset',
  // DuckDB's timestamps of second, millisecond and nanosecond precision.
  'timestamp_s',
  'timestamp_ms',
  'timestamp_ns',
]);
const TIME_WORDS = new Set(['time', 'timetz']);
const BINARY_WORDS = new Set([
  'image',
  'blob',
  'bytea',
  'binary',
  'varbinary',
  'longblob',
  'mediumblob',
  'tinyblob',
  'raw',
  'bytes',
]);
const JSON_WORDS = new Set(['json', 'jsonb', 'variant', 'object', 'struct', 'map', 'xml', 'hstore', 'super']);

/** The family of a declared column type; `unknown` for UNKNOWN_COLUMN_TYPE. */
export function typeFamily(type: string): TypeFamily {
  const t = type.trim().toLowerCase();
  if (t === '' || t === UNKNOWN_COLUMN_TYPE) return 'unknown';
  const word = /^[a-z_]+[0-9]*/.exec(t)?.[0] ?? '';
  if (word === 'array') return 'array';
  if (word === 'enum' || word === 'set') return 'enum';
  if (['bool', 'boolean', 'bit'].includes(word)) return 'bool';
  if (
    // `u`: unsigned (DuckDB UBIGINT, ClickHouse UInt64); huge: DuckDB's 128-bit HUGEINT; DuckDB's BIGNUM (VARINT in
    // older releases) has no bound at all.
    /^u?(?:tiny|small|medium|big|huge)?int(?:eger)?[0-9]*$/.test(word) ||
    /^(?:big|small)?serial[0-9]*$/.test(word) ||
    ['long', 'short', 'unsigned', 'signed', 'bignum', 'varint'].includes(word)
  )
    return 'int';
  // Oracle NUMBER: an integer unless a scale is given.
  if (word === 'number') return /\(\s*\d+\s*,\s*[1-9]/.test(t) ? 'decimal' : 'int';
  if (DECIMAL_WORDS.has(word)) return 'decimal';
  if (FLOAT_WORDS.has(word)) return 'float';
  if (TIMESTAMP_WORDS.has(word)) return 'timestamp';
  if (DATE_WORDS.has(word)) return 'date';
  if (TIME_WORDS.has(word)) return 'time';
  if (TEXT_WORDS.has(word)) return 'text';
  if (BINARY_WORDS.has(word)) return 'binary';
  if (['uuid', 'uniqueidentifier', 'guid'].includes(word)) return 'uuid';
  if (['inet', 'cidr', 'macaddr', 'macaddr8'].includes(word)) return 'network';
  if (['point', 'geography', 'geometry', 'geopoint', 'polygon'].includes(word)) return 'spatial';
  if (JSON_WORDS.has(word)) return 'json';
  return 'other';
}
