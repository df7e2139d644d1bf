/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // The production topology's tests run on a cluster of their own (jest.cluster.config.js, npm run test:cluster).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/'],
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
  testTimeout: 120000,
  maxWorkers: 2,
};
