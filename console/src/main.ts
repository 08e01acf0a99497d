// Tollgate web console: an injected EIP-1193 wallet (window.ethereum) through
// viem; developers create a wallet-bound API key with one signature, see
// usage and balance and deposit USDT; node operators sign in, register a
// node, see earnings and withdraw them with claim(). Every request goes to
// the page's own origin (the gateway, which passes settlementd's routes on).
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

const CHAIN_ID = 137;
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
    return bal;
  } catch (e) {
    say('usage-status', 'Usage unavailable: ' + errText(e), 'error');
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
  if (!window.ethereum) say('wallet-status', 'No wallet found: install a browser wallet (such as MetaMask) to use the console.', 'error');
  window.ethereum?.on?.('accountsChanged', () => {
    state.jwt = undefined;
    state.account = undefined;
    say('wallet-status', 'Wallet account changed: connect again.', 'error');
    refreshButtons();
  });
  refreshButtons();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
