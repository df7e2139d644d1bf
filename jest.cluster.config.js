// `npm run test:cluster`: the tests of the docker-compose.yml topology run from binaries (scripts/cluster.ts). One
// cluster for the whole run, brought up and down by the global setup and teardown; the files run one at a time,
// since one of them kills the cluster's Temporal server on purpose.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
  globalSetup: '<rootDir>/test/cluster/global-setup.js',
  globalTeardown: '<rootDir>/test/cluster/global-teardown.js',
  testTimeout: 300000,
  maxWorkers: 1,
};
