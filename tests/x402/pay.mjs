// pay.mjs: an independent x402 client for Tollgate's /rpc, built only from
// the published npm packages pinned in package-lock.json (@x402/fetch,
// @x402/evm, @x402/extensions' sign-in-with-x, a viem local account).
//
// Environment:
//   URL              the gateway's JSON-RPC URL (loopback only), e.g. http://127.0.0.1:8080/rpc
//   EVM_PRIVATE_KEY  0x… payer key (holds TestUSDC on the chain-8453 dev chain)
//   CALLS            JSON-RPC calls made one after the other (default 1)
//   MODE             siwx (default): every call goes through wrapFetchWithPayment with the
//                    SIWX client extension registered, so a 402 is first answered with a
//                    SIGN-IN-WITH-X proof (served from the wallet's bundle) and paid only
//                    when that is refused;
//                    key: pay once with wrapFetchWithPayment, then send the returned
//                    X-Tollgate-Bundle-Key as X-API-Key with plain fetch (a 402 on the key,
//                    i.e. the bundle is used up, is paid again the same way);
//                    plain: wrapFetchWithPayment with ExactEvmScheme and nothing else, as a
//                    generic x402 client uses it — every call without a credential, every
//                    402 answered with a new payment;
//                    batch: wrapFetchWithPayment with the official batch-settlement client
//                    (BatchSettlementEvmScheme, defaults) only: the first call deposits into a
//                    channel, every later one signs a cumulative voucher. After the calls it
//                    replays the last voucher and sends one over the deposit, with plain fetch,
//                    and reports the answers (replay, over_deposit)
//   PAUSE_AFTER      n (0 < n < CALLS): after n calls, print one JSON line {"paused": {calls, ok,
//                    wire, last_paid, channel_id}} and wait for a line on stdin, then make the
//                    other calls with the same client, scheme and channel state (a test breaks
//                    something in between, e.g. wipes Redis); "resumed" in the report is the
//                    answer to the first payment sent after the pause
//   METHOD           JSON-RPC method (default eth_blockNumber); PARAMS: its JSON params (default [])
//   MAX_UNITS        the most this client pays per payment, in atomic units (default 100000)
//
// It prints one JSON line at the end:
//   {calls, ok, payments, transactions, bundle_key_present, last_result, statuses, ...}
// and exits 1 when any call's final status is not 200 (2 on a usage error or a
// thrown client error). Every request is checked to go to a loopback address.
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { BatchSettlementEvmScheme, signVoucher } from "@x402/evm/batch-settlement/client";
import { createSIWxClientExtension, createSIWxPayload, SIGN_IN_WITH_X } from "@x402/extensions/sign-in-with-x";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { privateKeyToAccount } from "viem/accounts";

const NETWORK = "eip155:8453";

function usage(msg) {
  process.stderr.write(`pay.mjs: ${msg}\n`);
  process.exit(2);
}

const url = process.env.URL;
if (!url) usage("URL is required (the gateway's /rpc URL)");
const pk = process.env.EVM_PRIVATE_KEY;
if (!/^0x[0-9a-fA-F]{64}$/.test(pk ?? "")) usage("EVM_PRIVATE_KEY must be 0x + 64 hex digits");
const calls = Number(process.env.CALLS ?? "1");
if (!Number.isInteger(calls) || calls < 1) usage(`CALLS must be a positive integer, got ${process.env.CALLS}`);
const mode = process.env.MODE ?? "siwx";
if (!["siwx", "key", "plain", "batch"].includes(mode)) usage(`MODE must be siwx, key, plain or batch, got ${mode}`);
const maxUnits = process.env.MAX_UNITS ?? "100000";
if (!/^\d+$/.test(maxUnits)) usage("MAX_UNITS must be an integer");
const pauseAfter = Number(process.env.PAUSE_AFTER ?? "0");
if (!Number.isInteger(pauseAfter) || pauseAfter < 0 || (pauseAfter > 0 && pauseAfter >= calls)) {
  usage(`PAUSE_AFTER must be an integer in [0, CALLS), got ${process.env.PAUSE_AFTER}`);
}
const method = process.env.METHOD ?? "eth_blockNumber";
const params = JSON.parse(process.env.PARAMS ?? "[]");

// --- No call leaves the machine: every fetch (ours and the libraries') must
// target a loopback host.
function isLoopback(u) {
  const h = new URL(u).hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1";
}
if (!isLoopback(url)) usage(`URL ${url} is not a loopback address`);
const realFetch = globalThis.fetch;
const guardedFetch = async (input, init) => {
  const target = input instanceof Request ? input.url : String(input);
  if (!isLoopback(target)) throw new Error(`pay.mjs refuses a non-loopback request to ${target}`);
  return realFetch(input, init);
};
globalThis.fetch = guardedFetch;

// --- What went over the wire (the wrappers hide their intermediate answers).
// paymentRefused: requests carrying a payment made by the CALLS calls (not the
// batch probes after them) answered other than 200 (the wrappers may recover
// from a refusal by themselves, e.g. the batch client's corrective 402, so the
// final answers alone do not show one).
const wire = { requests: 0, status402: 0, siwxAttempts: 0, siwxOk: 0, paymentAttempts: 0, paymentRefused: 0 };
let resumed = null; // PAUSE_AFTER: {} until the first payment after the pause is answered
let inCalls = true;
let lastRequired = null; // the last PAYMENT-REQUIRED seen, for the SIWX diagnostic
let lastPaid = null; // the last PAYMENT-SIGNATURE that was served (batch mode replays it)
const observedFetch = async (input, init) => {
  const req = new Request(input, init);
  const res = await guardedFetch(req);
  wire.requests++;
  if (res.status === 402) {
    wire.status402++;
    const h = res.headers.get("PAYMENT-REQUIRED");
    if (h) lastRequired = h;
  }
  if (req.headers.has(SIGN_IN_WITH_X)) {
    wire.siwxAttempts++;
    if (res.status === 200) wire.siwxOk++;
  }
  if (req.headers.has("PAYMENT-SIGNATURE") || req.headers.has("X-PAYMENT")) {
    wire.paymentAttempts++;
    if (res.status !== 200 && inCalls) wire.paymentRefused++;
    if (resumed && resumed.status === undefined) {
      const h = res.headers.get("PAYMENT-REQUIRED");
      resumed.status = res.status;
      try {
        resumed.error = h ? decodePaymentRequiredHeader(h).error ?? null : null;
      } catch (e) {
        resumed.error = `undecodable PAYMENT-REQUIRED: ${e}`;
      }
    }
  }
  if (req.headers.has("PAYMENT-SIGNATURE") && res.status === 200) lastPaid = req.headers.get("PAYMENT-SIGNATURE");
  return res;
};

const account = privateKeyToAccount(pk);
const client = new x402Client();
const batchScheme = mode === "batch" ? new BatchSettlementEvmScheme(account) : null;
client.register(NETWORK, batchScheme ?? new ExactEvmScheme(account));
// Our dev TestUSDC is not one of @x402/evm's default assets: allow any asset
// on eip155:8453, but never pay more than MAX_UNITS for one payment.
client.setSpendControls({ allowedAssets: true });
client.onBeforePaymentCreation(async ({ selectedRequirements: r }) => {
  const amount = r.amount ?? r.maxAmountRequired;
  if (!/^\d+$/.test(String(amount)) || BigInt(amount) > BigInt(maxUnits)) {
    return { abort: true, reason: `asked for ${amount} units, more than MAX_UNITS=${maxUnits}` };
  }
});
if (mode === "siwx") client.registerExtension(createSIWxClientExtension({ signers: [account] }));
const fetchWithPay = wrapFetchWithPayment(observedFetch, client);

const out = {
  calls: 0,
  ok: 0,
  payments: 0,
  transactions: [],
  bundle_key_present: false,
  last_result: null,
  statuses: {},
  mode,
  payer: account.address,
  payers: {}, // X-Tollgate-Payer of the final answers
  remaining: null, // X-Tollgate-Bundle-Remaining of the last answer that had one
  settlements: [], // decoded PAYMENT-RESPONSE / X-PAYMENT-RESPONSE
  wire,
};

let bundleKey = null;
let lastError = null;

async function rpcCall(i) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: i + 1, method, params });
  const init = { method: "POST", headers: { "content-type": "application/json" }, body };
  if (mode === "key" && bundleKey) {
    const res = await observedFetch(url, { ...init, headers: { ...init.headers, "X-API-Key": bundleKey } });
    if (res.status !== 402) return res;
    await res.arrayBuffer(); // the bundle is used up: pay again below, without the key
  }
  return fetchWithPay(url, init);
}

// waitForLine resolves with the next line on stdin.
function waitForLine() {
  return new Promise((resolve, reject) => {
    let buf = "";
    const onData = (chunk) => {
      buf += chunk;
      if (buf.includes("\n")) done(null);
    };
    const onEnd = () => done(new Error("stdin closed before the line to resume"));
    const done = (err) => {
      process.stdin.off("data", onData);
      process.stdin.off("end", onEnd);
      process.stdin.pause();
      err ? reject(err) : resolve(buf);
    };
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", onData);
    process.stdin.on("end", onEnd);
    process.stdin.resume();
  });
}

function channelOf(header) {
  if (!header) return null;
  try {
    return JSON.parse(Buffer.from(header, "base64").toString()).payload?.voucher?.channelId ?? null;
  } catch {
    return null;
  }
}

for (let i = 0; i < calls; i++) {
  if (pauseAfter > 0 && i === pauseAfter) {
    const paused = { calls: out.calls, ok: out.ok, wire: { ...wire }, last_paid: lastPaid, channel_id: channelOf(lastPaid) };
    process.stdout.write(JSON.stringify({ paused }) + "\n");
    try {
      await waitForLine();
    } catch (e) {
      lastError = `pause: ${e.message}`;
      break;
    }
    resumed = {};
    out.resumed = resumed;
  }
  let res;
  try {
    res = await rpcCall(i);
  } catch (e) {
    lastError = `call ${i + 1}: ${e instanceof Error ? e.message : String(e)}`;
    out.statuses.error = (out.statuses.error ?? 0) + 1;
    out.calls++;
    break;
  }
  out.calls++;
  out.statuses[res.status] = (out.statuses[res.status] ?? 0) + 1;
  const payerHdr = res.headers.get("X-Tollgate-Payer");
  if (payerHdr) out.payers[payerHdr] = (out.payers[payerHdr] ?? 0) + 1;
  const rem = res.headers.get("X-Tollgate-Bundle-Remaining");
  if (rem !== null) out.remaining = Number(rem);
  const pr = res.headers.get("PAYMENT-RESPONSE") ?? res.headers.get("X-PAYMENT-RESPONSE");
  if (pr) {
    out.payments++;
    try {
      const s = decodePaymentResponseHeader(pr);
      // batch: a thousand voucher answers would flood the report; keep the
      // ones that moved money (the deposits) and count the rest.
      if (mode === "batch" && !s.transaction) out.vouchers = (out.vouchers ?? 0) + 1;
      else out.settlements.push(s);
      if (s.transaction) out.transactions.push(s.transaction);
    } catch (e) {
      out.settlements.push({ undecodable: pr, error: String(e) });
    }
  }
  const key = res.headers.get("X-Tollgate-Bundle-Key");
  if (key && /^tg_[0-9A-Za-z]+$/.test(key)) {
    out.bundle_key_present = true;
    bundleKey = key;
  }
  const text = await res.text();
  if (res.status !== 200) {
    lastError = `call ${i + 1}: HTTP ${res.status}: ${text.slice(0, 2000)}`;
    break;
  }
  try {
    const j = JSON.parse(text);
    if (j.error) {
      lastError = `call ${i + 1}: JSON-RPC error ${JSON.stringify(j.error)}`;
      break;
    }
    out.last_result = j.result;
    out.ok++;
  } catch {
    lastError = `call ${i + 1}: not JSON: ${text.slice(0, 200)}`;
    break;
  }
}

inCalls = false;

// batch: a voucher used once is refused when replayed, and so is one for
// more than the channel holds (the client itself would top up instead).
// (Not with REFUND=1: below the deposit the "over" voucher is simply the next
// one, drawn behind the client's back, and its refund voucher would be stale.)
if (mode === "batch" && lastPaid && process.env.REFUND !== "1") {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  const send = async (header) => {
    const res = await observedFetch(url, { method: "POST", headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": header }, body });
    const req = res.headers.get("PAYMENT-REQUIRED");
    await res.arrayBuffer();
    return { status: res.status, error: req ? decodePaymentRequiredHeader(req).error : null };
  };
  out.replay = await send(lastPaid);
  const p = JSON.parse(Buffer.from(lastPaid, "base64").toString());
  const over = BigInt(p.payload.voucher.maxClaimableAmount) + BigInt(p.accepted.amount); // the next voucher in order
  p.payload.type = "voucher";
  delete p.payload.deposit;
  p.payload.voucher = await signVoucher(account, p.payload.voucher.channelId, over.toString(), NETWORK);
  out.over_deposit = await send(Buffer.from(JSON.stringify(p)).toString("base64"));
  out.channel_id = p.payload.voucher.channelId;
}

// The SIWX client hook swallows its own errors; when no SIWX proof was ever
// sent in siwx mode, say why.
// REFUND=1 (MODE=batch): the official client's cooperative refund of the
// channel (BatchSettlementEvmScheme.refund: a GET probe, then a GET with its
// zero-charge refund voucher), then the next voucher on the refunded channel,
// which the gateway must refuse.
if (mode === "batch" && process.env.REFUND === "1" && lastPaid) {
  try {
    out.refund = await batchScheme.refund(url);
  } catch (e) {
    out.refund_error = e instanceof Error ? e.message : String(e);
  }
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  const p = JSON.parse(Buffer.from(lastPaid, "base64").toString());
  const next = BigInt(p.payload.voucher.maxClaimableAmount) + BigInt(p.accepted.amount);
  out.channel_id = p.payload.voucher.channelId;
  p.payload.type = "voucher";
  delete p.payload.deposit;
  p.payload.voucher = await signVoucher(account, p.payload.voucher.channelId, next.toString(), NETWORK);
  const res = await observedFetch(url, { method: "POST", headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(p)).toString("base64") }, body });
  const req = res.headers.get("PAYMENT-REQUIRED");
  await res.arrayBuffer();
  out.after_refund = { status: res.status, error: req ? decodePaymentRequiredHeader(req).error : null };
}

if (mode === "siwx" && wire.siwxAttempts === 0 && lastRequired) {
  try {
    const pr = decodePaymentRequiredHeader(lastRequired);
    const ext = pr.extensions?.[SIGN_IN_WITH_X];
    if (!ext?.supportedChains) out.siwx_error = "the 402 carries no sign-in-with-x extension with supportedChains";
    else {
      const chain = ext.supportedChains.find(c => c.type === "eip191");
      if (!chain) out.siwx_error = "no eip191 chain in supportedChains";
      else await createSIWxPayload({ ...ext.info, chainId: chain.chainId, type: chain.type }, account, url);
    }
  } catch (e) {
    out.siwx_error = e instanceof Error ? e.message : String(e);
  }
}
if (lastError) out.error = lastError;
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(out.ok === calls && !lastError ? 0 : 1);
