// batchfixture.mjs: writes a batch-settlement fixture made by the official client library
// (@x402/evm 2.27.0 BatchSettlementEvmScheme with a viem local account of a fixed test key): a deposit payload and a voucher payload for a fixed 402 requirement, with the channel id the
// library computes. caddymodule/paycheck's tests check that the gateway reads and verifies them as
// the library built them. Usage: node batchfixture.mjs > ../../caddymodule/paycheck/testdata/batch_fixture.json
import { BatchSettlementEvmScheme, computeChannelId } from "@x402/evm/batch-settlement/client";
import { privateKeyToAccount } from "viem/accounts";

const account = privateKeyToAccount("0x" + "4b".repeat(32)); // a fixed test key, never funded
const requirements = {
  scheme: "batch-settlement",
  network: "eip155:8453",
  amount: "100",
  asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  maxTimeoutSeconds: 300,
  extra: {
    receiverAuthorizer: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    withdrawDelay: 900,
    name: "USD Coin",
    version: "2",
    minDeposit: "100000",
  },
};
const scheme = new BatchSettlementEvmScheme(account);
const deposit = await scheme.createPaymentPayload(2, requirements);
const config = scheme.buildChannelConfig(requirements);
const channelId = computeChannelId(config, requirements.network);
// After the deposit response the client signs vouchers only.
await scheme.schemeHooks.onPaymentResponse({
  paymentPayload: { ...deposit, accepted: requirements },
  requirements,
  settleResponse: { success: true, transaction: "0x" + "11".repeat(32), network: "eip155:8453", extra: { chargedAmount: "100" } },
});
const voucher = await scheme.createPaymentPayload(2, requirements);
process.stdout.write(JSON.stringify({
  payer: account.address,
  channel_id: channelId,
  requirements,
  deposit: { ...deposit, accepted: requirements },
  voucher: { ...voucher, accepted: requirements },
}, null, 2) + "\n");
