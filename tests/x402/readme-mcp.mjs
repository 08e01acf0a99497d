import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const url = new URL(process.env.TOLLGATE_MCP ?? "http://127.0.0.1:8080/mcp");
const headers = process.env.TOLLGATE_API_KEY ? { "X-API-Key": process.env.TOLLGATE_API_KEY } : {};
const client = new Client({ name: "my-agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
console.log((await client.listTools()).tools.map((t) => t.name).join(" "));

const call = { name: "get_balance", arguments: { chain: "base", address: process.env.ADDRESS } };
let res = await client.callTool(call);
if (res.isError && res.structuredContent?.x402Version === 2 && process.env.EVM_PRIVATE_KEY) {
  // Payment required: sign an x402 payment for the offer and send the same call again.
  const payer = new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(process.env.EVM_PRIVATE_KEY)));
  // The client pays in Base's real USDC by default; a gateway paid in another token names it (a dev chain's TestUSDC).
  if (process.env.X402_ASSET) payer.setSpendControls({ allowedAssets: [{ network: "eip155:8453", asset: process.env.X402_ASSET, maxAmountPerPayment: "100000" }] });
  const payment = await payer.createPaymentPayload(res.structuredContent);
  res = await client.callTool({ ...call, _meta: { "x402/payment": payment } });
}
console.log(JSON.stringify({ result: res.structuredContent, meta: res._meta }));
await client.close();
