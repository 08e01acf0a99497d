// pay-v1.mjs: the legacy x402 v1 client as a generic agent uses it —
// x402-fetch 1.2.0's wrapFetchWithPayment with a viem local account and its
// defaults (max 0.1 USDC per payment), no credentials of any other kind:
// every call meets the 402 and answers it with a new X-PAYMENT.
//
// Environment:
//   URL              the gateway's JSON-RPC URL (loopback only)
//   EVM_PRIVATE_KEY  0x… payer key (holds TestUSDC on the chain-8453 dev chain)
//   CALLS            JSON-RPC calls made one after the other (default 1)
//
// It prints one JSON line: {calls, ok, payments, transactions, statuses, payers,
// wire: {requests, status402, paymentAttempts}, error?} and exits 1 unless every
// call ended 200 with a JSON-RPC result. Every request must go to loopback.
import { wrapFetchWithPayment, decodeXPaymentResponse } from "x402-fetch";
import { privateKeyToAccount } from "viem/accounts";

const url = process.env.URL ?? "";
const pk = process.env.EVM_PRIVATE_KEY ?? "";
const calls = Number(process.env.CALLS ?? "1");
const die = (msg) => { process.stderr.write(`pay-v1.mjs: ${msg}\n`); process.exit(2); };
if (!/^0x[0-9a-fA-F]{64}$/.test(pk)) die("EVM_PRIVATE_KEY must be 0x + 64 hex digits");
if (!Number.isInteger(calls) || calls < 1) die("CALLS must be a positive integer");
const loopback = (u) => {
  const h = new URL(u).hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1";
};
if (!loopback(url)) die(`URL ${url} is not a loopback address`);

const wire = { requests: 0, status402: 0, paymentAttempts: 0 };
const observed = async (input, init) => {
  const target = input instanceof Request ? input.url : String(input);
  if (!loopback(target)) throw new Error(`refusing a non-loopback request to ${target}`);
  const res = await fetch(input, init);
  wire.requests++;
  if (res.status === 402) wire.status402++;
  if (init?.headers?.["X-PAYMENT"]) wire.paymentAttempts++;
  return res;
};
const account = privateKeyToAccount(pk);
const fetchWithPay = wrapFetchWithPayment(observed, account);
const out = { calls: 0, ok: 0, payments: 0, transactions: [], statuses: {}, payers: {}, wire, payer: account.address };
let error = null;
for (let i = 0; i < calls && !error; i++) {
  out.calls++;
  let res;
  try {
    res = await fetchWithPay(url, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "eth_blockNumber", params: [] }) });
  } catch (e) {
    error = `call ${i + 1}: ${e instanceof Error ? e.message : String(e)}`;
    break;
  }
  out.statuses[res.status] = (out.statuses[res.status] ?? 0) + 1;
  const payer = res.headers.get("X-Tollgate-Payer");
  if (payer) out.payers[payer] = (out.payers[payer] ?? 0) + 1;
  const pr = res.headers.get("X-PAYMENT-RESPONSE");
  if (pr) {
    out.payments++;
    const s = decodeXPaymentResponse(pr);
    if (s.transaction) out.transactions.push(s.transaction);
  }
  const text = await res.text();
  try {
    const j = JSON.parse(text);
    if (res.status !== 200 || j.error || typeof j.result !== "string") error = `call ${i + 1}: HTTP ${res.status}: ${text.slice(0, 500)}`;
    else out.ok++;
  } catch {
    error = `call ${i + 1}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`;
  }
}
if (error) out.error = error;
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(out.ok === calls && !error ? 0 : 1);
