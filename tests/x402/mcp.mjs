// mcp.mjs: an MCP client for Tollgate's /mcp built only from the official
// TypeScript SDK (@modelcontextprotocol/sdk: Client + StreamableHTTPClientTransport,
// defaults) and, for payments, @x402/core's client with @x402/evm's
// ExactEvmScheme on a viem local account — the x402 tool-result binding:
// a paid tool answers isError with the x402 v2 PaymentRequired object, the
// client retries the same tools/call with the PaymentPayload in
// params._meta["x402/payment"].
//
// Environment:
//   URL              the gateway's MCP URL (loopback only), e.g. http://127.0.0.1:8080/mcp
//   API_KEY          optional: sent as the X-API-Key header of every MCP request
//   EVM_PRIVATE_KEY  optional 0x… payer key; without it a PaymentRequired result is
//                    reported and not paid
//   CALLS            JSON list of tool calls made one after the other:
//                    [{"name": "rpc", "arguments": {...}, "_meta": {...}}, ...]
//                    (_meta, when given, is sent as is, e.g. a replayed "x402/payment")
//   MAX_UNITS        the most this client pays per payment, in atomic units (default 100000)
//
// It prints one JSON line:
//   {client_latest_protocol, protocol_version, server, tools, resources, calls: [{name, isError, structuredContent,
//    _meta, text, required, paid, error}], payments: [{call, payload}], error}
// where a paid call's `required` is the PaymentRequired it was first answered
// with and the rest is the retried call's answer. It exits 1 when a call
// threw (2 on a usage error). Every request is checked to go to a loopback address.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const NETWORK = "eip155:8453";

function usage(msg) {
  process.stderr.write(`mcp.mjs: ${msg}\n`);
  process.exit(2);
}

const url = process.env.URL;
if (!url) usage("URL is required (the gateway's /mcp URL)");
const apiKey = process.env.API_KEY ?? "";
const pk = process.env.EVM_PRIVATE_KEY ?? "";
if (pk && !/^0x[0-9a-fA-F]{64}$/.test(pk)) usage("EVM_PRIVATE_KEY must be 0x + 64 hex digits");
const maxUnits = process.env.MAX_UNITS ?? "100000";
if (!/^\d+$/.test(maxUnits)) usage("MAX_UNITS must be an integer");
let calls;
try {
  calls = JSON.parse(process.env.CALLS ?? "[]");
} catch (e) {
  usage(`CALLS is not JSON: ${e.message}`);
}
if (!Array.isArray(calls) || calls.some(c => typeof c?.name !== "string")) usage("CALLS must be a JSON list of {name, arguments?, _meta?}");

// --- No call leaves the machine: every fetch (ours and the libraries') must
// target a loopback host.
function isLoopback(u) {
  const h = new URL(u).hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1";
}
if (!isLoopback(url)) usage(`URL ${url} is not a loopback address`);
const realFetch = globalThis.fetch;
const wire = { requests: 0, statuses: {} };
globalThis.fetch = async (input, init) => {
  const target = input instanceof Request ? input.url : String(input);
  if (!isLoopback(target)) throw new Error(`mcp.mjs refuses a non-loopback request to ${target}`);
  const res = await realFetch(input, init);
  wire.requests++;
  wire.statuses[res.status] = (wire.statuses[res.status] ?? 0) + 1;
  return res;
};

// --- x402: @x402/core's client with the exact EVM scheme.
let payer = null;
if (pk) {
  const account = privateKeyToAccount(pk);
  payer = new x402Client();
  payer.register(NETWORK, new ExactEvmScheme(account));
  // Our dev TestUSDC is not one of @x402/evm's default assets: allow any
  // asset on eip155:8453, but never pay more than MAX_UNITS for one payment.
  payer.setSpendControls({ allowedAssets: true });
  payer.onBeforePaymentCreation(async ({ selectedRequirements: r }) => {
    const amount = r.amount ?? r.maxAmountRequired;
    if (!/^\d+$/.test(String(amount)) || BigInt(amount) > BigInt(maxUnits)) {
      return { abort: true, reason: `asked for ${amount} units, more than MAX_UNITS=${maxUnits}` };
    }
  });
}

// paymentRequired is the x402 v2 PaymentRequired of a tool result, or null:
// structuredContent first, then content[0].text (the binding's fallback).
function paymentRequired(res) {
  if (!res?.isError) return null;
  const ok = o => o && o.x402Version === 2 && Array.isArray(o.accepts) && o.accepts.length > 0;
  if (ok(res.structuredContent)) return res.structuredContent;
  const text = res.content?.[0]?.type === "text" ? res.content[0].text : null;
  try {
    const o = JSON.parse(text);
    if (ok(o)) return o;
  } catch {}
  return null;
}

const transportOpts = apiKey ? { requestInit: { headers: { "X-API-Key": apiKey } } } : undefined;
const transport = new StreamableHTTPClientTransport(new URL(url), transportOpts);
const client = new Client({ name: "tollgate-mcp-test", version: "1.0.0" });

const out = { client_latest_protocol: LATEST_PROTOCOL_VERSION, protocol_version: null, server: null, session_id: null, tools: [], resources: [], calls: [], payments: [], wire };
let failed = false;
try {
  await client.connect(transport);
  out.protocol_version = transport.protocolVersion ?? null;
  out.session_id = transport.sessionId ?? null;
  out.server = client.getServerVersion() ?? null;
  out.tools = (await client.listTools()).tools.map(t => t.name);
  if (client.getServerCapabilities()?.resources) out.resources = (await client.listResources()).resources.map(r => r.uri);

  for (const [i, c] of calls.entries()) {
    const params = { name: c.name, arguments: c.arguments ?? {} };
    if (c._meta) params._meta = c._meta;
    const rec = { name: c.name };
    try {
      let res = await client.callTool(params);
      const req = paymentRequired(res);
      if (req && payer && !c._meta) {
        rec.required = req;
        const payload = await payer.createPaymentPayload(req);
        out.payments.push({ call: i, payload });
        res = await client.callTool({ ...params, _meta: { "x402/payment": payload } });
        rec.paid = true;
      }
      rec.isError = res.isError ?? false;
      rec.structuredContent = res.structuredContent ?? null;
      rec._meta = res._meta ?? null;
      rec.text = res.content?.[0]?.type === "text" ? res.content[0].text : null;
    } catch (e) {
      rec.error = e instanceof Error ? e.message : String(e);
      failed = true;
    }
    out.calls.push(rec);
  }
} catch (e) {
  out.error = e instanceof Error ? e.message : String(e);
  failed = true;
} finally {
  try {
    await client.close();
  } catch {}
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(failed ? 1 : 0);
