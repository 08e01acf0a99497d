// viem's http transport with batch: true and its defaults (up to 1,000 calls
// per request, no wait) against the gateway: 1,000 concurrent reads go out
// as one JSON-RPC batch and all succeed. Run by caddymodule's
// TestViemBatchOfAThousand with GATEWAY_URL and API_KEY.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http } from 'viem';

const url = process.env.GATEWAY_URL;
const key = process.env.API_KEY;

test('viem batches 1,000 reads and every one succeeds', async () => {
  assert.ok(url && key, 'GATEWAY_URL and API_KEY are set');
  const sizes = [];
  const statuses = [];
  const fetchFn = async (input, init) => {
    const body = JSON.parse(init.body);
    sizes.push(Array.isArray(body) ? body.length : 1);
    const res = await fetch(input, init);
    statuses.push(res.status);
    return res;
  };
  const client = createPublicClient({
    transport: http(url, { batch: true, fetchFn, fetchOptions: { headers: { 'X-API-Key': key } } }),
  });
  const addresses = Array.from({ length: 1000 }, (_, i) => '0x' + (i + 1).toString(16).padStart(40, '0'));
  const balances = await Promise.all(addresses.map((address) => client.getBalance({ address })));
  assert.equal(balances.length, 1000);
  for (const b of balances) assert.equal(typeof b, 'bigint');
  assert.deepEqual(sizes, [1000], `viem sent batches of ${JSON.stringify(sizes)}`);
  assert.deepEqual(statuses, [200]);
});
