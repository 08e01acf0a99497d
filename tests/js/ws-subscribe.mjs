// viem's webSocket transport and ethers v6's WebSocketProvider, with their
// defaults, against the gateway's socket: watchBlockNumber / on("block") and
// a TestUSDT Transfer watch (watchContractEvent / contract.on). Run by
// caddymodule's TestSocketSubscriptionsViemEthers with WS_URL (the key in
// ?key=), TOKEN and TRANSFERS. Protocol on stdout, one JSON object a line:
// {"ready":true} once every subscription is open (the Go test then sends
// TRANSFERS transfers), then the result once each client saw every
// transfer and MIN_BLOCKS blocks and has unsubscribed. Every frame both
// libraries send and receive is counted on the ws package they share, so
// the test can check the key's bill against what crossed the wire.
import { WebSocket as WS } from 'ws';
import { createPublicClient, webSocket, parseAbiItem } from 'viem';
import { polygon } from 'viem/chains';
import { WebSocketProvider, Contract } from 'ethers';

const url = process.env.WS_URL;
const token = process.env.TOKEN;
const transfers = Number(process.env.TRANSFERS);
const minBlocks = Number(process.env.MIN_BLOCKS || '10');

// Methods the gateway answers without charging (as over HTTP), and
// eth_unsubscribe (free on the socket).
const FREE = new Set(['eth_chainId', 'net_version', 'eth_accounts', 'eth_unsubscribe']);
const wire = { paidCalls: 0, freeCalls: 0, notifications: 0, other: 0, methods: {}, unsubSent: 0, unsubAnswered: 0 };
const unsubIds = new WeakMap();
const origSend = WS.prototype.send;
WS.prototype.send = function (data, ...rest) {
  const msg = JSON.parse(data.toString());
  for (const it of [].concat(msg)) {
    wire.methods[it.method] = (wire.methods[it.method] || 0) + 1;
    if (FREE.has(it.method)) wire.freeCalls++;
    else wire.paidCalls++;
    if (it.method === 'eth_unsubscribe') {
      wire.unsubSent++;
      if (!unsubIds.has(this)) unsubIds.set(this, new Set());
      unsubIds.get(this).add(it.id);
    }
  }
  return origSend.call(this, data, ...rest);
};
const origEmit = WS.prototype.emit;
WS.prototype.emit = function (ev, ...args) {
  if (ev === 'message') {
    const msg = JSON.parse(args[0].toString());
    for (const it of [].concat(msg)) {
      if (it.method === 'eth_subscription') wire.notifications++;
      else if (it.method) wire.other++;
      else if (unsubIds.get(this)?.has(it.id)) wire.unsubAnswered++;
    }
  }
  return origEmit.call(this, ev, ...args);
};

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const until = async (cond, what, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what + ': ' + JSON.stringify(wire));
    await new Promise((r) => setTimeout(r, 20)); // polling the clients' observable state
  }
};

const seen = { viemBlocks: [], ethersBlocks: [], viemLogs: [], ethersLogs: [] };

const client = createPublicClient({ chain: polygon, transport: webSocket(url) });
const unwatchBlocks = client.watchBlockNumber({ onBlockNumber: (n) => seen.viemBlocks.push(Number(n)), onError: (e) => out({ error: 'viem blocks: ' + e.message }) });
const unwatchLogs = client.watchContractEvent({
  address: token,
  abi: [parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')],
  eventName: 'Transfer',
  onLogs: (logs) => { for (const l of logs) seen.viemLogs.push(l.transactionHash); },
  onError: (e) => out({ error: 'viem logs: ' + e.message }),
});

const provider = new WebSocketProvider(url);
await provider.on('block', (n) => seen.ethersBlocks.push(Number(n)));
const usdt = new Contract(token, ['event Transfer(address indexed from, address indexed to, uint256 value)'], provider);
await usdt.on('Transfer', (from, to, value, ev) => seen.ethersLogs.push(ev.log.transactionHash));

// Every subscription is open once the gateway has answered four eth_subscribe.
await until(() => seen.viemBlocks.length > 0 && seen.ethersBlocks.length > 0 && (wire.methods.eth_subscribe || 0) >= 4, 'the subscriptions');
out({ ready: true });
await until(() => seen.viemLogs.length >= transfers && seen.ethersLogs.length >= transfers &&
  seen.viemBlocks.length >= minBlocks && seen.ethersBlocks.length >= minBlocks, 'the transfers and blocks');

unwatchBlocks();
unwatchLogs();
await usdt.removeAllListeners();
await provider.removeAllListeners();
// The gateway's answer to eth_unsubscribe is the subscription's last message.
await until(() => wire.unsubSent >= 4 && wire.unsubAnswered === wire.unsubSent, 'the unsubscribe answers');
out({ result: { ...seen, wire } });
await provider.destroy();
process.exit(0);
