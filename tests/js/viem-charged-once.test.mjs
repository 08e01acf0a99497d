// viem's http transport with its defaults (retryCount 3, its own
// shouldRetry) against answers the gateway charges although they are
// errors: an answer over max_response_bytes, and a provider's "ask for
// less" (-32005 about the query's size) and "execution timeout" (-32603),
// which viem would retry if relayed as they are. Each must reach the
// gateway exactly once: one HTTP request per call, so one charge. Run by
// caddymodule's TestViemChargedAnswerOnce with GATEWAY_URL and API_KEY.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http } from 'viem';

const url = process.env.GATEWAY_URL;
const key = process.env.API_KEY;

// client counts the HTTP requests viem sends (its retries included) and
// keeps each answer's status and body.
function client() {
  const sent = [];
  const fetchFn = async (input, init) => {
    const res = await fetch(input, init);
    const text = await res.clone().text();
    sent.push({ status: res.status, body: text });
    return res;
  };
  const c = createPublicClient({ transport: http(url, { fetchFn, fetchOptions: { headers: { 'X-API-Key': key } } }) });
  return { c, sent };
}

test('an answer over max_response_bytes is sent once, not retried', async () => {
  assert.ok(url && key, 'GATEWAY_URL and API_KEY are set');
  const { c, sent } = client();
  const err = await c.getBlock({ blockNumber: 1n, includeTransactions: true }).then(() => null, (e) => e);
  assert.equal(sent.length, 1, `viem sent ${sent.length} requests`);
  assert.ok(err, 'the oversized block is an error');
  assert.equal(err.walk((e) => typeof e.code === 'number').code, -32040, String(err));
  assert.equal(sent[0].status, 200);
  const data = JSON.parse(sent[0].body).error.data;
  assert.equal(data.max_response_bytes, 200);
  assert.ok(data.response_bytes > 200);
});

test("a provider's charged -32005 and -32603 are re-coded and sent once", async () => {
  const { c, sent } = client();
  const logsErr = await c.getLogs({ fromBlock: 1n, toBlock: 2n }).then(() => null, (e) => e);
  assert.equal(sent.length, 1, `viem sent ${sent.length} eth_getLogs requests`);
  const callErr = await c.call({ to: '0x0000000000000000000000000000000000000001', data: '0x' }).then(() => null, (e) => e);
  assert.equal(sent.length, 2, `viem sent ${sent.length - 1} eth_call requests`);
  assert.equal(logsErr?.walk((e) => typeof e.code === 'number').code, -32040, String(logsErr));
  assert.equal(callErr?.walk((e) => typeof e.code === 'number' && e.code !== 3).code, -32042, String(callErr));
  const codes = sent.map((s) => JSON.parse(s.body).error.data.upstream_code);
  assert.deepEqual(codes, [-32005, -32603]);
});
