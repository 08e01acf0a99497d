// ethers' JsonRpcProvider with its default settings against a gateway whose
// free tier is used up for this IP: the network is detected (eth_chainId is
// answered by the gateway, free) and the first call that costs fails with
// the gateway's 402, which ethers surfaces as the HTTP status — not as
// "failed to detect network". Run by caddymodule's TestEthersReports402.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonRpcProvider } from 'ethers';

const url = process.env.GATEWAY_URL;

test('ethers detects the network and reports the 402', async () => {
  assert.ok(url, 'GATEWAY_URL is set');
  const provider = new JsonRpcProvider(url);
  const net = await provider.getNetwork();
  assert.equal(net.chainId, 137n);
  let err;
  try {
    await provider.getBlockNumber();
  } catch (e) {
    err = e;
  }
  provider.destroy();
  assert.ok(err, 'eth_blockNumber without payment must fail');
  assert.doesNotMatch(String(err.message), /failed to detect network/);
  assert.equal(err.code, 'SERVER_ERROR', `error code ${err.code}: ${err.message}`);
  assert.equal(err.response?.statusCode, 402, `status ${err.response?.statusCode}: ${err.message}`);
  const body = JSON.parse(err.response.bodyText);
  assert.ok(Array.isArray(body.accepts) && body.accepts.length > 0, 'the 402 body lists how to pay');
});
