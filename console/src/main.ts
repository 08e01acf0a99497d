// Tollgate web console: an injected EIP-1193 wallet (window.ethereum) through
// viem; developers create a wallet-bound API key with one signature, see
// usage and balance and deposit USDT; node operators sign in, register a
// node, see earnings and withdraw them with claim(). Charts (uPlot, bundled:
// nothing is fetched from another origin) show a key's usage and spend over
// time per method and chain, and an operator's traffic, earnings and epoch
// splits. Every request goes to the page's own origin (the gateway, which
// passes settlementd's routes on).
import {
  createPublicClient,
  createWalletClient,
  custom,
  encodeFunctionData,
  parseAbi,
  type Address,
  type EIP1193Provider,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { polygon } from 'viem/chains';
import uPlot from 'uplot';

const CHAIN_ID = 137;
const PRICE_PER_CALL_UNITS = 30n; // 0.00003 USDT
const LOW_CREDIT_CALLS = 1000;
// Chain names for the charts: the built-in chains', and those the gateway serves by configuration,
// read from its chain table as service.json lists it (loadChainNames).
const CHAIN_NAMES: Record<number, string> = { 137: 'Polygon', 1: 'Ethereum', 42161: 'Arbitrum', 8453: 'Base', 80002: 'Amoy' };
const EXPLORER = 'https://polygonscan.com';
const claimAbi = parseAbi(['function claim(bytes signature, uint256 amount, uint256 deadline)']);

declare global {
  interface Window {
    ethereum?: EIP1193Provider;
  }
}

// ---- page helpers

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error('missing #' + id);
  return el as T;
};

type Kind = 'pending' | 'ok' | 'error' | 'paused' | '';

function say(id: string, text: string, kind: Kind = '') {
  const el = $(id);
  el.textContent = text;
  if (kind) el.dataset.kind = kind;
  else delete el.dataset.kind;
}

function txLink(hash: string): HTMLAnchorElement {
  const a = document.createElement('a');
  a.href = `${EXPLORER}/tx/${hash}`;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  a.textContent = hash;
  a.setAttribute('aria-label', 'transaction ' + hash + ' on the block explorer');
  return a;
}

function step(id: string, state: 'idle' | 'pending' | 'confirmed' | 'failed', text: string, hash?: string) {
  const li = $(id);
  li.dataset.state = state;
  (li.querySelector('.state') as HTMLElement).textContent = text;
  const tx = li.querySelector('.tx') as HTMLElement | null;
  if (tx && hash !== undefined) {
    tx.replaceChildren();
    if (hash) tx.append(txLink(hash));
  }
}

class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public body: any,
  ) {
    super(message);
  }
}

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const init: RequestInit = { method, headers: { Accept: 'application/json', ...headers }, cache: 'no-store' };
  if (body !== undefined) {
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp: Response;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'network_error', 'the server could not be reached', null);
  }
  const text = await resp.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!resp.ok) {
    const err = data?.error;
    throw new ApiError(resp.status, err?.code ?? 'http_' + resp.status, err?.message ?? (typeof err === 'string' ? err : 'HTTP ' + resp.status), data);
  }
  return data;
}

function errText(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  const any = e as any;
  if (any?.code === 4001 || /rejected|denied/i.test(any?.shortMessage ?? any?.message ?? '')) return 'you rejected the request in your wallet';
  return any?.shortMessage ?? any?.message ?? String(e);
}

// Decimal USDT (6 decimals) to base units, exactly.
function toUnits(v: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(v.trim());
  if (!m) throw new Error('enter an amount such as 10 or 2.5 (at most 6 decimals)');
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
}

function fromUnits(u: bigint): string {
  const s = u.toString().padStart(7, '0');
  const whole = s.slice(0, -6);
  const frac = s.slice(-6).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

// ---- state

const state: {
  provider?: EIP1193Provider;
  wallet?: WalletClient;
  chain?: PublicClient;
  account?: Address;
  apiKey?: string; // in memory only: never stored
  keyId?: string;
  balanceUnits?: bigint;
  jwt?: string; // in memory only
} = {};

function nodesKey(): string {
  return 'tollgate.console.nodes.' + (state.account ?? '').toLowerCase();
}

function knownNodes(): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(nodesKey()) ?? '[]');
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function rememberNode(id: string) {
  const list = knownNodes().filter((x) => x !== id);
  list.unshift(id);
  try {
    localStorage.setItem(nodesKey(), JSON.stringify(list.slice(0, 20)));
  } catch {
    /* private mode: the list is a convenience */
  }
  showNodes();
}

function showNodes() {
  const dl = $('node-ids');
  dl.replaceChildren(
    ...knownNodes().map((id) => {
      const o = document.createElement('option');
      o.value = id;
      return o;
    }),
  );
  const input = $<HTMLInputElement>('node-id');
  if (!input.value && knownNodes()[0]) input.value = knownNodes()[0];
}

function refreshButtons() {
  const connected = !!state.account;
  $<HTMLButtonElement>('create-key').disabled = !connected;
  $<HTMLButtonElement>('login').disabled = !connected;
  $<HTMLButtonElement>('refresh-usage').disabled = !state.apiKey;
  $<HTMLButtonElement>('load-history').disabled = !state.apiKey;
  $<HTMLButtonElement>('load-nodes').disabled = !(connected && state.jwt);
  $<HTMLButtonElement>('deposit').disabled = !(connected && state.apiKey);
  $<HTMLButtonElement>('register').disabled = !(connected && state.jwt);
  $<HTMLButtonElement>('load-earnings').disabled = !(connected && state.jwt);
  $<HTMLButtonElement>('claim').disabled = !(connected && state.jwt && $<HTMLInputElement>('node-id').value);
}

// ---- wallet

async function ensureChain() {
  const id = Number(await state.provider!.request({ method: 'eth_chainId' }));
  if (id === CHAIN_ID) return;
  try {
    await state.provider!.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x89' }] });
  } catch {
    throw new Error(`switch your wallet to Polygon (chain ${CHAIN_ID}); it is on chain ${id}`);
  }
}

async function connect() {
  const eth = window.ethereum;
  if (!eth) {
    say('wallet-status', 'No wallet found: install a browser wallet (such as MetaMask) and reload.', 'error');
    return;
  }
  say('wallet-status', 'Waiting for the wallet…', 'pending');
  try {
    const accounts = (await eth.request({ method: 'eth_requestAccounts' })) as Address[];
    if (!accounts?.length) throw new Error('the wallet shared no account');
    state.provider = eth;
    state.account = accounts[0];
    state.wallet = createWalletClient({ account: accounts[0], chain: polygon, transport: custom(eth) });
    state.chain = createPublicClient({ chain: polygon, transport: custom(eth), pollingInterval: 500 }) as PublicClient;
    await ensureChain();
    say('wallet-status', 'Connected: ' + accounts[0], 'ok');
    $('connect').textContent = 'Reconnect';
    showNodes();
  } catch (e) {
    say('wallet-status', 'Could not connect: ' + errText(e), 'error');
  }
  refreshButtons();
}

async function personalSign(message: string): Promise<Hex> {
  return state.wallet!.signMessage({ account: state.account!, message });
}

async function sendTx(to: Address, data: Hex): Promise<Hex> {
  await ensureChain();
  return state.wallet!.sendTransaction({ account: state.account!, chain: polygon, to, data });
}

async function waitMined(hash: Hex) {
  const r = await state.chain!.waitForTransactionReceipt({ hash, pollingInterval: 500, timeout: 180_000 });
  if (r.status !== 'success') throw new Error('the transaction reverted on chain');
  return r;
}

// ---- developer: wallet-bound key

async function createKey(rotate: boolean) {
  say('key-status', rotate ? 'Sign the replacement message in your wallet…' : 'Sign the message in your wallet…', 'pending');
  $('key-exists').hidden = true;
  try {
    const ch = await api('POST', '/api/keys/wallet/challenge', { wallet: state.account, rotate });
    const signature = await personalSign(ch.message);
    say('key-status', 'Creating the key…', 'pending');
    const k = await api('POST', '/api/keys/wallet', { message: ch.message, signature, rotate });
    state.apiKey = k.api_key;
    state.keyId = k.key_id;
    $<HTMLInputElement>('new-key').value = k.api_key;
    $('key-id').textContent = k.key_id;
    $('key-result').hidden = false;
    let msg = 'Key created. Copy it now: it is not shown again.';
    if (k.replaced_key_id) msg += ` The old key ${k.replaced_key_id} is revoked; ${k.carried_over_usdt} USDT moved to the new one.`;
    say('key-status', msg, 'ok');
    await loadUsage();
  } catch (e) {
    if (e instanceof ApiError && e.code === 'wallet_key_exists') {
      const id = e.body?.error?.key_id ?? '';
      $('existing-key-id').textContent = id;
      $('key-exists').hidden = false;
      say('key-status', id && id === state.keyId ? 'This wallet already has a key: the one above. Replace it only if its secret was lost.'
        : 'This wallet already has a key. Use it below, or replace it.', 'error');
    } else {
      say('key-status', 'No key created: ' + errText(e), 'error');
    }
  }
  refreshButtons();
}

async function copyKey() {
  const v = $<HTMLInputElement>('new-key').value;
  try {
    await navigator.clipboard.writeText(v);
    say('key-status', 'Key copied to the clipboard.', 'ok');
  } catch {
    $<HTMLInputElement>('new-key').select();
    say('key-status', 'Copy blocked by the browser: the key is selected, press Ctrl+C (⌘C).', 'error');
  }
}

async function useKey(ev: Event) {
  ev.preventDefault();
  const v = $<HTMLInputElement>('use-key').value.trim();
  if (!/^tg_[0-9A-Za-z]{43}$/.test(v)) {
    say('usage-status', 'That is not an API key (tg_ followed by 43 letters and digits).', 'error');
    return;
  }
  state.apiKey = v;
  $<HTMLInputElement>('use-key').value = '';
  await loadUsage();
  refreshButtons();
}

async function loadUsage(): Promise<bigint | undefined> {
  if (!state.apiKey) return;
  try {
    const u = await api('GET', '/api/keys/usage', undefined, { 'X-API-Key': state.apiKey });
    state.keyId = u.key_id;
    const bal = toUnits(String(u.credits_remaining_usdt));
    state.balanceUnits = bal;
    $('u-key').textContent = u.key_id;
    $('u-balance').textContent = fromUnits(bal);
    $('u-calls').textContent = String(u.credits_remaining_calls);
    $('u-today').textContent = String(u.requests_today);
    $('u-spent').textContent = String(u.total_spend_usdt);
    say('usage-status', 'Updated ' + new Date().toLocaleTimeString(), 'ok');
    showKeyState(Number(u.credits_remaining_calls), Number(u.daily_limit), Number(u.requests_today));
    return bal;
  } catch (e) {
    say('usage-status', 'Usage unavailable: ' + errText(e), 'error');
  }
}

// showKeyState says when calls will be (or are) answered 402 Payment
// Required, and what to do about it.
function showKeyState(calls: number, dailyLimit: number, today: number) {
  const el = $('key-state');
  const freeLeft = dailyLimit > 0 ? Math.max(0, dailyLimit - today) : 0;
  const price = fromUnits(PRICE_PER_CALL_UNITS);
  let text: string;
  let kind: Kind;
  if (calls <= 0 && freeLeft <= 0) {
    text = `Free tier used up for today and no credits: calls are answered 402 Payment Required. Deposit USDT below (${price} USDT a call) to continue now, or wait for the free tier to reset at 00:00 UTC.`;
    kind = 'error';
  } else if (calls <= 0) {
    text = `No credits: ${freeLeft} free calls left today, then calls are answered 402 Payment Required. Deposit USDT below to keep calling (${price} USDT a call).`;
    kind = 'paused';
  } else if (calls < LOW_CREDIT_CALLS) {
    text = `Credits low: about ${calls} calls left. Deposit USDT below before they run out; after that calls are answered 402 Payment Required.`;
    kind = 'paused';
  } else {
    text = `Credits for about ${calls} calls.`;
    kind = 'ok';
  }
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
}

// ---- charts

const PALETTE = ['#1f5fd1', '#d1495b', '#17743a', '#b26a00', '#6c3fb5', '#00838f', '#5a6270', '#c2185b'];
const charts = new Map<string, uPlot>();

type Series = { label: string; values: number[]; dash?: boolean };

function chartHeight(width: number): number {
  return width < 520 ? 190 : 240;
}

// drawChart draws series over xs (unix seconds, UTC) into #id, replacing
// what was there; data-points says how many non-zero points it shows.
function drawChart(id: string, xs: number[], series: Series[], opts: { money?: boolean; bars?: boolean } = {}) {
  const el = $(id);
  charts.get(id)?.destroy();
  charts.delete(id);
  el.replaceChildren();
  const points = series.reduce((n, s) => n + s.values.filter((v) => v > 0).length, 0);
  el.dataset.points = String(points);
  el.dataset.series = String(series.length);
  if (!xs.length || !series.length) {
    el.dataset.empty = '1';
    return;
  }
  delete el.dataset.empty;
  const width = Math.max(200, Math.floor(el.getBoundingClientRect().width));
  // Half a step of room either side, so the first and last bars are whole
  // and a single point is not stretched over years.
  const half = (xs.length > 1 ? xs[1] - xs[0] : 60) / 2;
  const fmt = (v: number) => (opts.money ? (v === 0 ? '0' : v < 0.01 ? v.toFixed(6) : v.toFixed(2)) : Number.isInteger(v) ? String(v) : '');
  const u = new uPlot(
    {
      width,
      height: chartHeight(width),
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true, range: [xs[0] - half, xs[xs.length - 1] + half] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { stroke: '#5a6270', grid: { stroke: '#e6e9ee' } },
        { stroke: '#5a6270', grid: { stroke: '#e6e9ee' }, size: opts.money ? 72 : 48, values: (_u, vals) => vals.map(fmt) },
      ],
      legend: { show: true, live: false },
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          dash: s.dash ? [6, 4] : undefined,
          fill: opts.bars ? PALETTE[i % PALETTE.length] + '55' : undefined,
          points: { show: true, size: 5 },
          paths: opts.bars ? uPlot.paths.bars!({ size: [0.7, 48] }) : undefined,
          value: (_u: uPlot, v: number | null) => (v == null ? '—' : fmt(v)),
        })),
      ],
    },
    [xs, ...series.map((s) => s.values)] as uPlot.AlignedData,
    el,
  );
  charts.set(id, u);
}

function resizeCharts() {
  for (const [id, u] of charts) {
    const w = Math.max(200, Math.floor($(id).getBoundingClientRect().width));
    if (Math.abs(w - u.width) > 2) u.setSize({ width: w, height: chartHeight(w) });
  }
}

const unitsToUSDT = (u: string | number | bigint) => Number(BigInt(u)) / 1e6;

function cell(text: string, num = false): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  if (num) td.className = 'num';
  return td;
}

// fillTable fills a table's body; each cell carries its column's name
// (data-label), which a phone shows beside the value instead of a header.
function fillTable(id: string, rows: HTMLTableCellElement[][], empty: string, cols: number) {
  const body = $(id).querySelector('tbody')!;
  const heads = [...$(id).querySelectorAll('thead th')].map((th) => th.textContent ?? '');
  for (const r of rows) r.forEach((td, i) => (td.dataset.label = heads[i] ?? ''));
  if (!rows.length) {
    const td = cell(empty);
    td.colSpan = cols;
    const tr = document.createElement('tr');
    tr.append(td);
    body.replaceChildren(tr);
    return;
  }
  body.replaceChildren(
    ...rows.map((r) => {
      const tr = document.createElement('tr');
      tr.append(...r);
      return tr;
    }),
  );
}

// ---- developer: usage history

async function loadHistory(ev?: Event) {
  ev?.preventDefault();
  if (!state.apiKey) return;
  const hour = $<HTMLSelectElement>('history-granularity').value === 'hour';
  const key = { 'X-API-Key': state.apiKey };
  say('history-status', 'Loading the usage history…', 'pending');
  try {
    const q = hour ? 'granularity=hour&hours=48' : 'granularity=day&days=14';
    let h = await api('GET', '/api/keys/history?' + q + '&limit=1000', undefined, key);
    const rows: any[] = [...h.rows];
    for (let page = 0; h.next_cursor && page < 4; page++) {
      h = await api('GET', '/api/keys/history?' + q + '&limit=1000&cursor=' + encodeURIComponent(h.next_cursor), undefined, key);
      rows.push(...h.rows);
    }
    // Every bucket of the window on the x axis, empty ones as zero.
    const step = hour ? 3600 : 86400;
    const xs: number[] = [];
    for (let t = Date.parse(h.from) / 1000; t < Date.parse(h.to) / 1000; t += step) xs.push(t);
    const at = new Map(xs.map((x, i) => [x, i]));
    // The busiest methods get their own line; the rest are summed.
    const byCalls = [...h.by_method].sort((a: any, b: any) => b.calls - a.calls).map((m: any) => m.method || 'unlabelled');
    const shown = byCalls.slice(0, 5);
    const calls = new Map<string, number[]>();
    const spend = new Map<number, number[]>();
    for (const r of rows) {
      const i = at.get(Date.parse(r.start) / 1000);
      if (i === undefined) continue;
      const m = shown.includes(r.method || 'unlabelled') ? r.method || 'unlabelled' : 'other methods';
      if (!calls.has(m)) calls.set(m, xs.map(() => 0));
      calls.get(m)![i] += r.calls;
      if (!spend.has(r.chain_id)) spend.set(r.chain_id, xs.map(() => 0));
      spend.get(r.chain_id)![i] += unitsToUSDT(r.spend_units);
    }
    drawChart('chart-calls', xs, [...calls].map(([label, values]) => ({ label, values })), { bars: !hour });
    drawChart(
      'chart-spend',
      xs,
      [...spend].sort((a, b) => a[0] - b[0]).map(([chain, values]) => ({ label: `${CHAIN_NAMES[chain] ?? 'chain'} (${chain})`, values })),
      { money: true, bars: !hour },
    );
    fillTable(
      'history-methods',
      h.by_method
        .slice()
        .sort((a: any, b: any) => b.calls - a.calls)
        .map((m: any) => [cell(m.method || 'unlabelled'), cell(String(m.calls), true), cell(String(m.spend_usdt), true)]),
      'No calls in this period.',
      3,
    );
    const c = await api('GET', '/api/keys/credits?limit=20', undefined, key);
    fillTable(
      'history-credits',
      c.credits.map((x: any) => {
        const tx = cell('');
        if (x.tx_hash && x.kind === 'deposit') {
          const a = txLink(x.tx_hash);
          a.textContent = x.tx_hash.slice(0, 10) + '…' + x.tx_hash.slice(-8);
          tx.append(a);
        }
        else tx.textContent = x.reason ?? x.tx_hash ?? '—';
        return [cell(new Date(x.at).toLocaleString()), cell(x.kind.replace('_', ' ')), cell(String(x.usdt), true), tx];
      }),
      'No deposits yet.',
      4,
    );
    say('history-status', `${h.totals.calls} calls, ${h.totals.spend_usdt} USDT spent in this period.`, 'ok');
  } catch (e) {
    say('history-status', 'Usage history unavailable: ' + errText(e), 'error');
  }
}

async function deposit(ev: Event) {
  ev.preventDefault();
  const btn = $<HTMLButtonElement>('deposit');
  btn.disabled = true;
  for (const s of ['step-approve', 'step-deposit', 'step-credit']) step(s, 'idle', 'not started', '');
  try {
    const amount = $<HTMLInputElement>('deposit-amount').value.trim();
    const units = toUnits(amount);
    const before = (await loadUsage()) ?? 0n;
    say('deposit-status', 'Preparing the deposit…', 'pending');
    const ins = await api('GET', '/credits/initiate?amount=' + encodeURIComponent(amount), undefined, { 'X-API-Key': state.apiKey! });
    if (Number(ins.chain_id) !== CHAIN_ID) throw new Error('unexpected chain ' + ins.chain_id);

    step('step-approve', 'pending', 'confirm in your wallet');
    say('deposit-status', 'Approve USDT in your wallet…', 'pending');
    const a = await sendTx(ins.approve.to, ins.approve.data);
    step('step-approve', 'pending', 'pending on chain', a);
    await waitMined(a);
    step('step-approve', 'confirmed', 'confirmed', a);

    step('step-deposit', 'pending', 'confirm in your wallet');
    say('deposit-status', 'Confirm the deposit in your wallet…', 'pending');
    const d = await sendTx(ins.deposit.to, ins.deposit.data);
    step('step-deposit', 'pending', 'pending on chain', d);
    const rc = await waitMined(d);
    step('step-deposit', 'confirmed', 'confirmed in block ' + rc.blockNumber, d);

    const need = BigInt(ins.confirmations ?? 25);
    step('step-credit', 'pending', `waiting for ${need} confirmations`);
    say('deposit-status', `Deposit of ${ins.amount_usdt} USDT mined; credited after ${need} confirmations.`, 'pending');
    const deadline = Date.now() + 30 * 60_000;
    for (;;) {
      const head = await state.chain!.getBlockNumber();
      const conf = head - rc.blockNumber + 1n;
      const bal = await loadUsage();
      if (bal !== undefined && bal >= before + units) {
        step('step-credit', 'confirmed', `credited: balance ${fromUnits(bal)} USDT`);
        say('deposit-status', `Deposit credited: ${ins.amount_usdt} USDT added to ${ins.account}.`, 'ok');
        break;
      }
      step('step-credit', 'pending', `${conf < need ? conf : need} of ${need} confirmations`);
      if (Date.now() > deadline) throw new Error('not credited within 30 minutes; it will be credited once confirmed — check again later');
      await new Promise((r) => setTimeout(r, 1000));
    }
  } catch (e) {
    for (const s of ['step-approve', 'step-deposit', 'step-credit']) {
      if ($(s).dataset.state === 'pending') step(s, 'failed', 'failed');
    }
    say('deposit-status', 'Deposit failed: ' + errText(e), 'error');
  }
  refreshButtons();
}

// ---- node operator

async function login() {
  say('login-status', 'Sign the message in your wallet…', 'pending');
  try {
    const ch = await api('POST', '/api/auth/challenge', { wallet: state.account });
    const signature = await personalSign(ch.message);
    const t = await api('POST', '/api/auth/login', { message: ch.message, signature });
    state.jwt = t.token;
    say('login-status', 'Signed in as ' + t.wallet + ' until ' + new Date(t.expires_at).toLocaleTimeString() + '.', 'ok');
    refreshButtons();
    void loadNodes();
  } catch (e) {
    state.jwt = undefined;
    say('login-status', 'Sign-in failed: ' + errText(e), 'error');
  }
  refreshButtons();
}

function bearer(): Record<string, string> {
  return { Authorization: 'Bearer ' + state.jwt };
}

function onAuthError(e: unknown, statusId: string, what: string) {
  if (e instanceof ApiError && e.code === 'invalid_token') {
    state.jwt = undefined;
    say('login-status', 'Your sign-in expired: sign in again.', 'error');
    refreshButtons();
  }
  say(statusId, what + ': ' + errText(e), e instanceof ApiError && e.code === 'claims_paused' ? 'paused' : 'error');
}

async function register(ev: Event) {
  ev.preventDefault();
  say('register-status', 'Registering (the node is probed first)…', 'pending');
  try {
    const chain_ids = $<HTMLInputElement>('reg-chains')
      .value.split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => {
        if (!/^\d+$/.test(s)) throw new Error('chain ids are numbers such as 137');
        return Number(s);
      });
    const body: Record<string, unknown> = {
      region: $<HTMLInputElement>('reg-region').value.trim(),
      rpc_url: $<HTMLInputElement>('reg-url').value.trim(),
      chain_ids,
    };
    const label = $<HTMLInputElement>('reg-label').value.trim();
    if (label) body.label = label;
    const n = await api('POST', '/api/nodes/register', body, bearer());
    rememberNode(n.node_id);
    $<HTMLInputElement>('node-id').value = n.node_id;
    say('register-status', `Node ${n.node_id} registered (${n.status}).`, 'ok');
    await loadEarnings();
  } catch (e) {
    onAuthError(e, 'register-status', 'Registration failed');
  }
  refreshButtons();
}

async function loadEarnings(ev?: Event) {
  ev?.preventDefault();
  const id = $<HTMLInputElement>('node-id').value.trim();
  if (!id) return;
  try {
    const e = await api('GET', '/api/nodes/' + encodeURIComponent(id) + '/earnings', undefined, bearer());
    rememberNode(id);
    $('e-claimable').textContent = String(e.claimable_usdt);
    $('e-total').textContent = String(e.total_earned);
    $('e-claimed').textContent = String(e.claimed_usdt);
    $('e-last').textContent = e.last_claim ? new Date(e.last_claim).toLocaleString() : 'never';
    return e;
  } catch (e) {
    onAuthError(e, 'claim-status', 'Earnings unavailable');
  } finally {
    refreshButtons();
  }
}

// ---- node operator: my nodes

async function loadNodes() {
  say('nodes-status', 'Loading your nodes…', 'pending');
  try {
    // The overview (the ledger's) and the wallet's standing (the gateways',
    // shared in Redis: phase, share and check rate per chain) side by side.
    const [o, mine] = await Promise.all([
      api('GET', '/api/nodes/overview?days=14', undefined, bearer()),
      api('GET', '/api/nodes', undefined, bearer()),
    ]);
    const nodes: any[] = o.nodes;
    for (const n of nodes.slice().reverse()) rememberNode(n.node_id);
    const pct = (v: number | null) => (v == null ? '—' : (v * 100).toFixed(1) + ' %');
    const standings = new Map<string, any[]>((mine.nodes as any[]).map((n) => [n.node_id, n.standing ?? []]));
    const standing = (id: string) =>
      (standings.get(id) ?? [])
        .map((s: any) => `chain ${s.chain_id}: ${s.phase}${s.penalty ? ' (after a quarantine)' : ''}, share ${pct(s.traffic_share)}, checks ${pct(s.check_rate)}`)
        .join('; ') || '—';
    fillTable(
      'nodes-table',
      nodes.map((n) => {
        const v = n.verification;
        const ver = v.quarantined ? `quarantined (${v.evidence_count} evidence)` : v.evidence_count ? `${v.evidence_count} evidence` : 'no mismatches';
        return [
          cell(n.label ? `${n.label} (${n.node_id})` : n.node_id),
          cell(n.status),
          cell(n.chain_ids.join(', ')),
          cell(String(n.served.calls), true),
          cell(pct(n.probes.uptime_24h), true),
          cell(n.probes.p50_latency_ms_24h == null ? '—' : Math.round(n.probes.p50_latency_ms_24h) + ' ms', true),
          cell(standing(n.node_id)),
          cell(ver),
          cell(`${n.earnings.claimable_usdt} / ${n.earnings.claimed_usdt}`, true),
        ];
      }),
      'No nodes registered with this wallet.',
      9,
    );
    const name = (n: any) => n.label || n.node_id;
    const days: number[] = (nodes[0]?.daily ?? []).map((d: any) => Date.parse(d.day + 'T00:00:00Z') / 1000);
    drawChart('chart-traffic', days, nodes.map((n) => ({ label: name(n), values: n.daily.map((d: any) => d.calls) })), { bars: true });
    drawChart('chart-earned', days, nodes.map((n) => ({ label: name(n), values: n.daily.map((d: any) => unitsToUSDT(d.earned_units)) })), {
      money: true,
      bars: true,
    });
    // Epoch splits: each epoch's revenue, its 50/30/20 parts, and the
    // wallet's share (all its nodes).
    const ep = new Map<number, any>();
    for (const n of nodes)
      for (const e of n.epochs) {
        const x = Date.parse(e.starts_at) / 1000;
        const cur = ep.get(x) ?? { ...e, mine: 0 };
        cur.mine += unitsToUSDT(e.share_units);
        ep.set(x, cur);
      }
    const xs = [...ep.keys()].sort((a, b) => a - b);
    const col = (f: (e: any) => number) => xs.map((x) => f(ep.get(x)));
    drawChart(
      'chart-epochs',
      xs,
      xs.length
        ? [
            { label: 'epoch revenue', values: col((e) => unitsToUSDT(e.epoch_total_units)) },
            { label: 'operators 50 %', values: col((e) => unitsToUSDT(e.epoch_operators_units)), dash: true },
            { label: 'platform 30 %', values: col((e) => unitsToUSDT(e.epoch_platform_units)), dash: true },
            { label: 'pool 20 %', values: col((e) => unitsToUSDT(e.epoch_pool_units)), dash: true },
            { label: 'your share', values: col((e) => e.mine) },
          ]
        : [],
      { money: true },
    );
    say('nodes-status', `${nodes.length} node${nodes.length === 1 ? '' : 's'}; updated ${new Date().toLocaleTimeString()}.`, 'ok');
  } catch (e) {
    onAuthError(e, 'nodes-status', 'Nodes unavailable');
  }
}

async function withdraw() {
  const id = $<HTMLInputElement>('node-id').value.trim();
  const btn = $<HTMLButtonElement>('claim');
  btn.disabled = true;
  $('claim-tx').replaceChildren();
  say('claim-status', 'Requesting a claim signature…', 'pending');
  try {
    const c = await api('POST', '/api/nodes/' + encodeURIComponent(id) + '/claim', { walletAddress: state.account }, bearer());
    const s = c.signature;
    if (Number(s.chain_id) !== CHAIN_ID) throw new Error('unexpected chain ' + s.chain_id);
    say('claim-status', `Confirm the withdrawal of ${s.amount_usdt} USDT in your wallet…`, 'pending');
    const data = encodeFunctionData({ abi: claimAbi, functionName: 'claim', args: [s.signature, BigInt(s.cumulative_raw), BigInt(s.deadline_unix)] });
    const hash = await sendTx(s.contract, data);
    $('claim-tx').replaceChildren('Transaction: ', txLink(hash));
    say('claim-status', `Withdrawal of ${s.amount_usdt} USDT pending on chain…`, 'pending');
    await waitMined(hash);
    say('claim-status', `Withdrawal confirmed: ${s.amount_usdt} USDT sent to ${state.account}.`, 'ok');
    await loadEarnings();
  } catch (e) {
    if (e instanceof ApiError && e.code === 'claims_paused') {
      say('claim-status', 'Claims are paused by the operator: ' + e.message + '. Your earnings are safe; try again later.', 'paused');
    } else if (e instanceof ApiError && e.code === 'nothing_claimable') {
      say('claim-status', 'Nothing to withdraw yet: earnings become claimable after their epoch is settled.', 'error');
    } else if (/paused/i.test(errText(e))) {
      say('claim-status', 'Claims are paused on chain; try again later.', 'paused');
    } else {
      onAuthError(e, 'claim-status', 'Withdrawal failed');
    }
  }
  refreshButtons();
}

// loadChainNames adds the gateway's configured chains to CHAIN_NAMES. Without the gateway in front
// (settlementd reached directly) service.json is not there, and the built-in names stay.
async function loadChainNames() {
  try {
    const resp = await fetch('/.well-known/service.json');
    if (!resp.ok) return;
    const doc = await resp.json();
    for (const s of doc.services ?? []) {
      if (s.type === 'json-rpc' && typeof s.chain_id === 'number' && typeof s.name === 'string' && !(s.chain_id in CHAIN_NAMES)) {
        CHAIN_NAMES[s.chain_id] = s.name;
      }
    }
  } catch {
    // the built-in names stay
  }
}

// ---- wiring

function init() {
  $('connect').addEventListener('click', connect);
  $('create-key').addEventListener('click', () => createKey(false));
  $('rotate-key').addEventListener('click', () => createKey(true));
  $('copy-key').addEventListener('click', copyKey);
  $('use-key-form').addEventListener('submit', useKey);
  $('refresh-usage').addEventListener('click', () => void loadUsage());
  $('deposit-form').addEventListener('submit', deposit);
  $('login').addEventListener('click', login);
  $('register-form').addEventListener('submit', register);
  $('node-form').addEventListener('submit', loadEarnings);
  $('node-id').addEventListener('input', refreshButtons);
  $('claim').addEventListener('click', withdraw);
  $('history-form').addEventListener('submit', loadHistory);
  $('load-nodes').addEventListener('click', () => void loadNodes());
  let resizing = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resizing);
    resizing = requestAnimationFrame(resizeCharts);
  });
  if (!window.ethereum) say('wallet-status', 'No wallet found: install a browser wallet (such as MetaMask) to use the console.', 'error');
  window.ethereum?.on?.('accountsChanged', () => {
    state.jwt = undefined;
    state.account = undefined;
    say('wallet-status', 'Wallet account changed: connect again.', 'error');
    refreshButtons();
  });
  refreshButtons();
  void loadChainNames();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
