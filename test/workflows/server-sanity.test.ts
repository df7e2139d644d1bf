import type { Client, Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { SEARCH_ATTRIBUTES } from '../../domain/ids';
import { TEST_NAMESPACE, connectTestClient, temporalCliPath, testAddress } from '../support/temporal-env';
import { isAbsolute } from 'node:path';

/** 'Bool' -> 'BOOL', 'KeywordList' -> 'KEYWORD_LIST' */
function sdkTypeName(type: string): Parameters<typeof encodeSearchAttributeIndexedValueType>[0] {
  return type.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase() as Parameters<
    typeof encodeSearchAttributeIndexedValueType
  >[0];
}

describe('test Temporal server', () => {
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    ({ connection, client } = await connectTestClient());
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('is exposed to tests through the environment', () => {
    expect(testAddress()).toMatch(/^[\w.-]+:\d+$/);
    expect(isAbsolute(temporalCliPath())).toBe(true);
  });

  it.each(SEARCH_ATTRIBUTES.map((a) => [a.name, a.type]))('has search attribute %s of type %s', async (name, type) => {
    const { customAttributes } = await client.connection.operatorService.listSearchAttributes({
      namespace: TEST_NAMESPACE,
    });
    expect(customAttributes?.[name]).toBe(encodeSearchAttributeIndexedValueType(sdkTypeName(type)));
  });
});
