// An independent client against the gateway: ethers' JsonRpcProvider, pointed
// at our /rpc, reads chain id, block number and a balance from the dev chain,
// and does so in one JSON-RPC batch. Run by caddymodule's Go integration test
// with GATEWAY_URL and ACCOUNT (a funded dev address) set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonRpcProvider, FetchRequest } from 'ethers';

const url = process.env.GATEWAY_URL;
const account = process.env.ACCOUNT;

test('ethers JsonRpcProvider reads through the gateway', async () => {
  assert.ok(url, 'GATEWAY_URL is set');
  const provider = new JsonRpcProvider(url, undefined, { batchMaxCount: 1 });
  const net = await provider.getNetwork();
  assert.equal(net.chainId, 137n);
  const head = await provider.getBlockNumber();
  assert.ok(head > 0, `block number ${head}`);
  const bal = await provider.getBalance(account);
  assert.ok(bal > 0n, `balance of ${account} is ${bal}`);
  provider.destroy();
});

test('ethers batches calls and the gateway answers them in one response', async () => {
  // Count the HTTP exchanges ethers makes, and check the batch came back whole.
  const req = new FetchRequest(url);
  let exchanges = 0;
  let sawBatch = false;
  req.preflightFunc = async (r) => {
    exchanges++;
    const body = JSON.parse(new TextDecoder().decode(r.body));
    if (Array.isArray(body) && body.length >= 3) sawBatch = true;
    return r;
  };
  const provider = new JsonRpcProvider(req, 137, { staticNetwork: true, batchMaxCount: 10, batchStallTime: 20 });
  const [head, bal, code] = await Promise.all([
    provider.getBlockNumber(),
    provider.getBalance(account),
    provider.getCode(account),
  ]);
  assert.ok(head > 0);
  assert.ok(bal > 0n);
  assert.equal(code, '0x'); // an EOA
  assert.equal(exchanges, 1, `ethers made ${exchanges} HTTP requests`);
  assert.ok(sawBatch, 'the three calls went out as one batch');
  provider.destroy();
});
