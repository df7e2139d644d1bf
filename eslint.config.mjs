// ESLint flat config: typescript-eslint's recommended rules (no type information needed) plus the
// architectural rules: workflow code stays deterministic, each folder imports only what it may, and no import
// circles anywhere.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const nodeGlobals = Object.fromEntries(
  ['require', 'module', 'exports', '__dirname', '__filename', 'process', 'console', 'Buffer', 'URL']
    .concat(['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'globalThis'])
    .map((name) => [name, name === 'module' || name === 'exports' ? 'writable' : 'readonly']),
);

// The fakes (users' trials, tests, benchmarks) and the evaluation harnesses are edges: the CLI, tests and bench use
// them; the code that runs a real sweep never reaches them.
const noFakesOrEval = {
  regex: '^(\\./)?(\\.\\./)+(fakes|eval)(/.*)?$',
  message:
    'fakes/ and eval/ are edges (trials, tests, evaluation): code that runs a sweep never imports them (not even a type).',
};

// Workflow code is replayed and must be deterministic: no I/O, no Node built-ins, and only *types*
// from the layers that touch the world (activities are called through proxyActivities).
const nodeBuiltins = [...new Set(builtinModules.map((m) => m.replace(/^node:/, '')))];
// `depth`: how deep below the root the file is (1 for workflows/x.ts, 2 for workflows/sweep/x.ts).
const workflowImportRules = (depth) => ({
  'no-restricted-imports': 'off',
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      paths: nodeBuiltins.map((name) => ({
        name,
        message: 'Workflow code is deterministic: no Node built-ins. Do the work in an activity.',
      })),
      patterns: [
        {
          group: ['node:*'],
          message: 'Workflow code is deterministic: no Node built-ins. Do the work in an activity.',
        },
        {
          // `../activities`, `../../llm/client`, ...: the top-level folders, reached by climbing to the root.
          // workflows/activities.ts (`./activities`, or `../activities` from workflows/sweep/) is the
          // workflow-side proxy file and stays allowed.
          regex: `^(\\./)?(\\.\\./){${depth},}(llm|catalog|activities)(/.*)?$`,
          allowTypeImports: true,
          message:
            'Workflows may import only types from llm/, catalog/ and activities/ (use `import type`); call activities through proxyActivities.',
        },
        noFakesOrEval,
      ],
    },
  ],
});

export default defineConfig([
  globalIgnores(['dist/', 'node_modules/', '.argus/', '.tools/', 'coverage/', 'test-artifacts/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: nodeGlobals },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: nodeGlobals },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // No import circles anywhere (STYLE.md): a module never reaches itself through the files it imports, however
    // long the path. Sources are resolved as Node resolves the compiled code, with .ts beside .js. `import type`
    // edges are not followed (import-x never does): they are erased from the compiled code, and the boundary rules
    // here let workflows/, domain/ and judgment/ import types against the flow on purpose.
    files: ['**/*.ts', '**/*.js', '**/*.cjs', '**/*.mjs'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.cjs', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.cjs', '.mjs', '.json', '.node'] })],
    },
    rules: {
      'import-x/no-cycle': ['error', { maxDepth: '∞', ignoreExternal: true }],
    },
  },
  {
    files: ['workflows/*.ts'],
    rules: workflowImportRules(1),
  },
  {
    files: ['workflows/*/**/*.ts'],
    rules: workflowImportRules(2),
  },
  {
    // state/ sits below activities/: activities, the worker, the CLI, tests and bench use the stores, never the
    // other way round (not even for a type: the contracts live in state/store.ts).
    files: ['state/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\./)?(\\.\\./)+(activities|workflows|client|worker)(/.*)?$',
              message:
                'state/ imports no activities/, workflows/, client/ or worker/ (not even types): they use state/.',
            },
            noFakesOrEval,
          ],
        },
      ],
    },
  },
  {
    // judgment/ is pure: the same rules run in activities, eval and bench, and could run in a workflow.
    files: ['judgment/**/*.ts', 'domain/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'judgment/ and domain/ are pure: no Node built-ins.' })),
          patterns: [
            { group: ['node:*'], message: 'judgment/ and domain/ are pure: no Node built-ins.' },
            {
              regex: '^(\\./)?(\\.\\./)+(llm|catalog|activities|workflows|client|worker|state)(/.*)?$',
              allowTypeImports: true,
              message: 'judgment/ and domain/ import only domain/, judgment/ and zod (types from elsewhere).',
            },
            noFakesOrEval,
          ],
        },
      ],
    },
  },
  {
    // The rest of what runs a sweep: the activities, the catalogs, the model client, the worker.
    files: ['activities/**/*.ts', 'catalog/**/*.ts', 'llm/**/*.ts', 'worker/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [noFakesOrEval] }],
    },
  },
  {
    // A fake provider knows only the wire format (domain/): were it to answer with ARGUS's own rules, the tests
    // it serves would check the rules against themselves.
    files: ['fakes/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\./)?(\\.\\./)+(?!domain/|fakes/)[^./][^/]*(/.*)?$',
              message: 'fakes/ imports only domain/ (the wire format) and itself.',
            },
          ],
        },
      ],
    },
  },
]);
