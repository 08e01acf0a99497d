// Browser test of the web console, run by settlementd/e2e_console_test.go
// against the running stack (gateway + settlementd + dev chain):
//
//   1. a node operator (wallet operator-1) signs in and registers a node;
//   2. a developer (wallet developer-1) creates a wallet-bound API key with
//      one signature and deposits USDT (approve + deposit) until credited;
//   3. the developer's key pays for calls that the operator's node serves;
//   4. once the epoch is settled the operator withdraws the earnings with
//      claim() through the wallet.
//
// Each wallet is an injected EIP-1193 provider (window.ethereum) whose
// signing runs here in Node with viem's local account (page.exposeFunction);
// everything else is forwarded to the dev chain's JSON-RPC.
//
// Input (environment): TOLLGATE_CHROMIUM, CONSOLE_URL (the gateway's
// /console), CHAIN_RPC, DEVELOPER_KEY, OPERATOR_KEY, NODE_URL, SHOTS (the
// screenshot directory), DEPOSIT_USDT, PAID_CALLS. Output: one JSON line on
// stdout with the ids and amounts (never a secret); progress on stderr.
import { chromium } from 'playwright-core';
import { createWalletClient, defineChain, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const consoleURL = env('CONSOLE_URL');
const base = new URL(consoleURL).origin;
const rpc = env('CHAIN_RPC');
const shots = env('SHOTS');
const depositUSDT = process.env.DEPOSIT_USDT ?? '10';
const paidCalls = Number(process.env.PAID_CALLS ?? '20');
const began = Date.now();
const log = (...a) => console.error(`[console ${((Date.now() - began) / 1000).toFixed(1)}s]`, ...a);
mkdirSync(shots, { recursive: true });

const chain = defineChain({
  id: 137,
  name: 'Tollgate dev chain (137)',
  nativeCurrency: { name: 'POL', symbol: 'POL', decimals: 18 },
  rpcUrls: { default: { http: [rpc] } },
});

async function forward(method, params) {
  const r = await fetch(rpc, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = await r.json();
  if (j.error) return { error: { code: j.error.code ?? -32603, message: j.error.message ?? 'rpc error', data: j.error.data } };
  return { result: j.result };
}

// A wallet: what an extension does for the page, backed by a local key.
function makeWallet(privateKey) {
  const account = privateKeyToAccount(privateKey);
  const client = createWalletClient({ account, chain, transport: http(rpc) });
  const handle = async (method, params) => {
    try {
      switch (method) {
        case 'eth_requestAccounts':
        case 'eth_accounts':
          return { result: [account.address] };
        case 'eth_chainId':
          return { result: '0x89' };
        case 'net_version':
          return { result: '137' };
        case 'wallet_switchEthereumChain':
          return params?.[0]?.chainId === '0x89' ? { result: null } : { error: { code: 4902, message: 'unknown chain' } };
        case 'personal_sign': {
          const [msg, addr] = params;
          if (addr.toLowerCase() !== account.address.toLowerCase()) return { error: { code: 4100, message: 'not this wallet' } };
          return { result: await account.signMessage({ message: { raw: msg } }) };
        }
        case 'eth_signTypedData_v4': {
          const td = typeof params[1] === 'string' ? JSON.parse(params[1]) : params[1];
          const { EIP712Domain, ...types } = td.types;
          return { result: await account.signTypedData({ domain: td.domain, types, primaryType: td.primaryType, message: td.message }) };
        }
        case 'eth_sendTransaction': {
          const tx = params[0];
          if (tx.from && tx.from.toLowerCase() !== account.address.toLowerCase()) return { error: { code: 4100, message: 'not this wallet' } };
          const hash = await client.sendTransaction({
            to: tx.to,
            data: tx.data,
            value: tx.value ? BigInt(tx.value) : undefined,
            gas: tx.gas ? BigInt(tx.gas) : undefined,
          });
          return { result: hash };
        }
        default:
          if (method.startsWith('eth_')) return forward(method, params ?? []);
          return { error: { code: 4200, message: `unsupported method ${method}` } };
      }
    } catch (e) {
      return { error: { code: -32603, message: e?.shortMessage ?? e?.message ?? String(e) } };
    }
  };
  return { account, handle };
}

const injected = () => {
  const listeners = {};
  window.ethereum = {
    isTollgateTestWallet: true,
    request: async ({ method, params }) => {
      const r = await window.__tollgateWallet(method, params ?? []);
      if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code, data: r.error.data });
      return r.result;
    },
    on: (ev, fn) => ((listeners[ev] ??= []).push(fn), window.ethereum),
    removeListener: () => window.ethereum,
  };
};

async function openConsole(browser, privateKey, viewport = { width: 1280, height: 900 }) {
  const ctx = await browser.newContext({ viewport, reducedMotion: 'reduce' });
  const wallet = makeWallet(privateKey);
  await ctx.exposeFunction('__tollgateWallet', wallet.handle);
  await ctx.addInitScript(injected);
  // Nothing may leave for another origin (no CDN, no web fonts).
  const foreign = [];
  await ctx.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.origin !== base) {
      foreign.push(u.href);
      return route.abort();
    }
    return route.continue();
  });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => log('page error:', e.message));
  await page.goto(consoleURL);
  await page.getByRole('button', { name: 'Connect wallet' }).click();
  await page.locator('#wallet-status').filter({ hasText: 'Connected: ' + wallet.account.address }).waitFor();
  return { ctx, page, wallet, foreign };
}

const text = async (page, sel) => (await page.locator(sel).textContent())?.trim();

async function until(what, ms, fn) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const out = {};
const browser = await chromium.launch({
  executablePath: env('TOLLGATE_CHROMIUM'),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  // --- 1. The operator signs in and registers a node.
  const op = await openConsole(browser, env('OPERATOR_KEY'));
  out.operator = op.wallet.account.address;
  await op.page.getByRole('button', { name: 'Sign in with wallet' }).click();
  await op.page.locator('#login-status[data-kind="ok"]').waitFor();
  await op.page.getByLabel('Region').fill('eu-west');
  await op.page.getByLabel('RPC URL').fill(env('NODE_URL'));
  await op.page.getByLabel('Label (optional)').fill('browser test node');
  await op.page.getByRole('button', { name: 'Register node' }).click();
  await op.page.locator('#register-status[data-kind="ok"]').waitFor({ timeout: 20_000 });
  out.node_id = await op.page.locator('#node-id').inputValue();
  if (!/^NODE-EU-WEST-[A-Z2-7]{8}$/.test(out.node_id)) throw new Error('node id ' + out.node_id);
  log('node registered', out.node_id);

  // --- 2. The developer creates a wallet-bound key with one signature.
  const dev = await openConsole(browser, env('DEVELOPER_KEY'));
  out.developer = dev.wallet.account.address;
  await dev.page.getByRole('button', { name: 'Create API key' }).click();
  await dev.page.locator('#key-status[data-kind="ok"]').waitFor();
  const apiKey = await dev.page.getByLabel('Your API key — shown once, store it now').inputValue();
  if (!/^tg_[0-9A-Za-z]{43}$/.test(apiKey)) throw new Error('the page shows no API key');
  out.key_id = await text(dev.page, '#key-id');
  if ((await text(dev.page, '#u-key')) !== out.key_id || (await text(dev.page, '#u-balance')) !== '0') throw new Error('usage of the new key not shown');
  // A new key has no credits: the page says when calls turn into 402 and what to do.
  await dev.page.locator('#key-state[data-kind="paused"], #key-state[data-kind="error"]').waitFor({ timeout: 10_000 });
  out.key_state_new = await text(dev.page, '#key-state');
  if (!/402/.test(out.key_state_new) || !/[Dd]eposit/.test(out.key_state_new)) throw new Error('key state of a new key: ' + out.key_state_new);
  await dev.page.screenshot({ path: join(shots, 'console-key.png'), fullPage: true, mask: [dev.page.locator('#new-key')], maskColor: '#c8ccd2' });
  log('wallet key created', out.key_id, '-', out.key_state_new);

  // --- The deposit: approve + deposit through the wallet, until credited.
  await dev.page.getByLabel('Amount in USDT').fill(depositUSDT);
  await dev.page.getByRole('button', { name: 'Deposit' }).click();
  await dev.page.locator('#step-approve[data-state="confirmed"]').waitFor({ timeout: 30_000 });
  await dev.page.locator('#step-deposit[data-state="confirmed"]').waitFor({ timeout: 30_000 });
  out.deposit_tx = await dev.page.locator('#step-deposit .tx a').textContent();
  await dev.page.locator('#deposit-status[data-kind="ok"]').waitFor({ timeout: 60_000 });
  const shown = await text(dev.page, '#u-balance');
  if (shown !== depositUSDT) throw new Error(`balance shown ${shown}, want ${depositUSDT}`);
  const usage = await (await fetch(base + '/api/keys/usage', { headers: { 'X-API-Key': apiKey } })).json();
  if (String(usage.credits_remaining_usdt) !== depositUSDT || usage.key_id !== out.key_id) throw new Error('usage API: ' + JSON.stringify(usage));
  out.balance_after_deposit = String(usage.credits_remaining_usdt);
  await dev.page.screenshot({ path: join(shots, 'console-deposit.png'), fullPage: true, mask: [dev.page.locator('#new-key')], maskColor: '#c8ccd2' });
  log('deposit credited', out.deposit_tx);

  // The same wallet again: a clear answer naming the key, no second key.
  await dev.page.getByRole('button', { name: 'Create API key' }).click();
  await dev.page.locator('#key-exists:not([hidden])').waitFor();
  if ((await text(dev.page, '#existing-key-id')) !== out.key_id) throw new Error('409 does not name the existing key');

  // Phone width: nothing scrolls sideways.
  await dev.page.setViewportSize({ width: 375, height: 800 });
  const overflow = await dev.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) throw new Error(`the page is ${overflow}px wider than a phone screen`);
  await dev.page.evaluate(() => window.scrollTo(0, 0));
  await dev.page.screenshot({ path: join(shots, 'console-phone.png'), fullPage: false, mask: [dev.page.locator('#new-key')], maskColor: '#c8ccd2' });
  // Every form control has a label, every button a name, status lines are live regions.
  const a11y = await dev.page.evaluate(() => {
    const bad = [];
    for (const el of document.querySelectorAll('input, select, textarea')) if (!el.labels?.length && !el.getAttribute('aria-label')) bad.push('unlabelled #' + el.id);
    for (const b of document.querySelectorAll('button')) if (!b.textContent.trim() && !b.getAttribute('aria-label')) bad.push('nameless button #' + b.id);
    for (const s of document.querySelectorAll('.status')) if (s.getAttribute('role') !== 'status' || s.getAttribute('aria-live') !== 'polite') bad.push('status #' + s.id + ' is not live');
    if (!document.documentElement.lang) bad.push('no lang');
    return bad;
  });
  if (a11y.length) throw new Error('accessibility: ' + a11y.join(', '));

  // --- 3. The developer's key pays for calls the operator's node serves.
  const call = () =>
    fetch(base + '/rpc', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
  let served = 0;
  await until('paid calls served by the node', 30_000, async () => {
    const r = await call();
    await r.text();
    if (r.status === 200 && r.headers.get('x-tollgate-upstream') === out.node_id) served++;
    return served >= paidCalls;
  });
  out.paid_calls = served;
  log('paid calls served by the node', served);

  // --- The usage history: what the key paid for, per hour, method and
  // chain, from settlementd (through the gateway), once ingested; the
  // charts draw it, on a phone and on a desktop.
  const history = async () =>
    (await fetch(base + '/api/keys/history?granularity=hour&hours=48', { headers: { 'X-API-Key': apiKey } })).json();
  const h = await until('the paid calls in the usage history', 30_000, async () => {
    const v = await history();
    const row = v.rows?.find((r) => r.method === 'eth_blockNumber' && r.chain_id === 137 && r.payer === 'credits');
    return row && row.calls >= served ? v : null;
  });
  out.history_calls = h.totals.calls;
  out.history_spend_units = h.totals.spend_units;
  const chartReady = (page, id) =>
    until(`chart ${id}`, 15_000, async () => Number(await page.locator('#' + id).getAttribute('data-points')) > 0 && (await page.locator(`#${id} canvas`).count()) > 0);
  const fits = async (page, what) => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 0) throw new Error(`${what}: the page is ${overflow}px wider than the screen`);
  };
  const chartsFit = (page, ids) =>
    until('charts resized to the screen', 10_000, () =>
      page.evaluate(
        (ids) => ids.every((id) => {
          const box = document.getElementById(id);
          const plot = box?.querySelector('.uplot');
          return plot && plot.getBoundingClientRect().width <= box.getBoundingClientRect().width + 1;
        }),
        ids,
      ),
    );
  await dev.page.locator('#history-granularity').selectOption('hour');
  await dev.page.getByRole('button', { name: 'Show usage history' }).click();
  await dev.page.locator('#history-status[data-kind="ok"]').waitFor({ timeout: 20_000 });
  await chartReady(dev.page, 'chart-calls');
  await chartReady(dev.page, 'chart-spend');
  if (!(await text(dev.page, '#history-methods tbody')).includes('eth_blockNumber')) throw new Error('the method table does not list eth_blockNumber');
  if ((await dev.page.locator('#history-credits tbody a').count()) < 1) throw new Error('the deposit is not listed with its transaction');
  if (!(await dev.page.locator('#key-state').isVisible())) throw new Error('the key state is not shown');
  out.key_state = await text(dev.page, '#key-state');
  await chartsFit(dev.page, ['chart-calls', 'chart-spend']);
  await fits(dev.page, 'usage on a phone');
  await dev.page.locator('#history-card').screenshot({ path: join(shots, 'console-usage-phone.png') });
  await dev.page.setViewportSize({ width: 1280, height: 900 });
  await chartsFit(dev.page, ['chart-calls', 'chart-spend']);
  await dev.page.locator('#history-card').screenshot({ path: join(shots, 'console-usage.png') });
  out.usage_chart_points = Number(await dev.page.locator('#chart-calls').getAttribute('data-points'));
  log('usage history charted:', out.history_calls, 'calls,', out.key_state);

  // --- 4. Earnings settle; the operator withdraws them.
  await until('claimable earnings', 100_000, async () => {
    await op.page.getByRole('button', { name: 'Show earnings' }).click();
    const v = await text(op.page, '#e-claimable');
    return v && v !== '—' && v !== '0';
  });
  out.claimable_usdt = await text(op.page, '#e-claimable');
  log('claimable', out.claimable_usdt);
  // Claims paused by the operator's admin: a clear paused state, nothing sent.
  if (process.env.ADMIN_URL) {
    const admin = (action) =>
      fetch(`${process.env.ADMIN_URL}/admin/claims/${action}`, {
        method: 'POST',
        headers: { 'X-Admin-Token': env('ADMIN_TOKEN'), 'Content-Type': 'application/json' },
        body: JSON.stringify({ reason: 'browser test' }),
      }).then((r) => {
        if (!r.ok) throw new Error(`${action}: HTTP ${r.status}`);
      });
    await admin('pause');
    await op.page.getByRole('button', { name: 'Withdraw earnings' }).click();
    await op.page.locator('#claim-status[data-kind="paused"]').waitFor({ timeout: 10_000 });
    if ((await op.page.locator('#claim-tx a').count()) !== 0) throw new Error('a transaction was sent while claims were paused');
    out.paused_message = await text(op.page, '#claim-status');
    await admin('unpause');
    log('claims paused shown:', out.paused_message);
  }
  await op.page.getByRole('button', { name: 'Withdraw earnings' }).click();
  await op.page.locator('#claim-status[data-kind="ok"]').waitFor({ timeout: 30_000 });
  out.claim_tx = await op.page.locator('#claim-tx a').textContent();
  out.withdrawn_usdt = /Withdrawal confirmed: ([0-9.]+) USDT/.exec(await text(op.page, '#claim-status'))?.[1];
  const href = await op.page.locator('#claim-tx a').getAttribute('href');
  if (href !== 'https://polygonscan.com/tx/' + out.claim_tx) throw new Error('explorer link ' + href);
  await until('the claim in the earnings', 20_000, async () => {
    await op.page.getByRole('button', { name: 'Show earnings' }).click();
    // A later epoch may have settled meanwhile: the claimed total is what counts.
    return (await text(op.page, '#e-last')) !== 'never' && (await text(op.page, '#e-claimed')) === out.withdrawn_usdt;
  });
  out.claimed_usdt = await text(op.page, '#e-claimed');
  await op.page.screenshot({ path: join(shots, 'console-withdrawal.png'), fullPage: true });
  log('withdrawn', out.claimed_usdt, out.claim_tx);

  // --- The operator's nodes: traffic, earnings per day and epoch splits.
  await op.page.getByRole('button', { name: 'Show my nodes' }).click();
  await op.page.locator('#nodes-status[data-kind="ok"]').waitFor({ timeout: 20_000 });
  for (const id of ['chart-traffic', 'chart-earned', 'chart-epochs']) await chartReady(op.page, id);
  if (!(await text(op.page, '#nodes-table tbody')).includes(out.node_id)) throw new Error('the node is not in the nodes table');
  // The wallet's standing as the gateways share it: phase, share and check rate per chain.
  out.standing = await text(op.page, '#nodes-table tbody td[data-label="Standing"]');
  if (!/chain \d+: (probation|ladder|trusted|unknown)/.test(out.standing)) throw new Error('no standing in the nodes table: ' + out.standing);
  out.earnings_chart_points = Number(await op.page.locator('#chart-earned').getAttribute('data-points'));
  out.epoch_chart_points = Number(await op.page.locator('#chart-epochs').getAttribute('data-points'));
  await chartsFit(op.page, ['chart-traffic', 'chart-earned', 'chart-epochs']);
  await op.page.locator('#nodes-card').screenshot({ path: join(shots, 'console-earnings.png') });
  await op.page.setViewportSize({ width: 375, height: 800 });
  await chartsFit(op.page, ['chart-traffic', 'chart-earned', 'chart-epochs']);
  await fits(op.page, 'nodes on a phone');
  await op.page.locator('#nodes-card').screenshot({ path: join(shots, 'console-earnings-phone.png') });
  log('nodes charted: earnings points', out.earnings_chart_points, 'epoch points', out.epoch_chart_points);

  out.foreign_requests = [...op.foreign, ...dev.foreign];
  if (out.foreign_requests.length) throw new Error('requests to other origins: ' + out.foreign_requests.join(', '));
  console.log(JSON.stringify(out));
} finally {
  await browser.close();
}
