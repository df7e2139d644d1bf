/**
 * The SQL words more than one reader knows: what starts a query, the clauses of a select, joins, set
 * operations, the aggregates ARGUS describes, the words that are never an alias.
 */

/** What starts a query: a parenthesis followed by one of these opens a derived table, not a join list. */
export const QUERY_START = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE']);

/** The aggregates a derivation names (judgment/sql/derivation.ts). */
export const AGGREGATES = new Set<string>(['SUM', 'COUNT', 'AVG', 'MIN', 'MAX']);
/** Clauses of a select after its select list. */
export const CLAUSES = new Set([
  'FROM',
  'WHERE',
  'GROUP',
  'HAVING',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'FETCH',
  'QUALIFY',
  'WINDOW',
]);
export const SET_OPS = new Set(['UNION', 'INTERSECT', 'EXCEPT', 'MINUS']);
export const JOIN_WORDS = new Set(['JOIN', 'LEFT', 'RIGHT', 'FULL', 'INNER', 'OUTER', 'CROSS', 'NATURAL', 'LATERAL']);
/** Words that look like a column reference but are values: never a pass-through of a column. */
export const PSEUDO_COLUMNS = new Set([
  ...['NULL', 'TRUE', 'FALSE', 'DEFAULT', 'CURRENT_DATE', 'CURRENT_TIME', 'CURRENT_TIMESTAMP', 'LOCALTIME'],
  ...['LOCALTIMESTAMP', 'CURRENT_USER', 'SESSION_USER', 'USER', 'CURRENT_ROLE', 'CURRENT_SCHEMA'],
  ...['CURRENT_CATALOG', 'SYSDATE', 'SYSTIMESTAMP', 'ROWNUM'],
]);
/** Words inside or after an expression that are never an alias: `x IS NULL`, `y::double precision`. */
export const NOT_ALIAS = new Set([
  ...CLAUSES,
  ...JOIN_WORDS,
  ...SET_OPS,
  ...PSEUDO_COLUMNS,
  ...['ON', 'USING', 'AS', 'END', 'AND', 'OR', 'NOT', 'IS', 'IN', 'LIKE', 'ILIKE', 'BETWEEN', 'WHEN'],
  ...['THEN', 'ELSE', 'CASE', 'OVER', 'FILTER', 'COLLATE', 'ASC', 'DESC', 'APPLY', 'WITH', 'TABLESAMPLE'],
  ...['PRECISION', 'VARYING', 'ZONE', 'SELECT', 'DISTINCT', 'ALL', 'ESCAPE'],
]);
/** Words after which the next word is an operand, not an alias: `NOT flag`, `INTERVAL x`. */
export const TAKES_OPERAND = new Set([
  ...['NOT', 'AND', 'OR', 'IS', 'IN', 'LIKE', 'ILIKE', 'BETWEEN', 'THEN', 'ELSE', 'WHEN', 'CASE', 'DISTINCT'],
  ...['INTERVAL', 'EXISTS', 'ON', 'SELECT', 'AT', 'ESCAPE', 'SIMILAR', 'TO', 'ANY', 'SOME'],
]);
/** Words a type name never contains: their presence means `x::type` is followed by more expression. */
export const NOT_IN_TYPE = new Set([...NOT_ALIAS].filter((w) => !['PRECISION', 'VARYING', 'ZONE', 'WITH'].includes(w)));
/** Characters of operators: a word after one is an operand, not an alias. */
export const OPERATOR_CHARS = '+-*/|:=<>,!%^&~';
