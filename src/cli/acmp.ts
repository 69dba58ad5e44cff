import { parseArgs } from 'node:util';
import { createAcmpBuyer as createA2AAcmpBuyer } from '../a2a/acmp/buyer.js';
import { createAcmpBuyer, type AcmpBindingName } from '../connect/acmp-buyer.js';
import type { BuyerEvent, InvokeInput } from '../acmp/buyer/buyer.js';
import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import { PayloadSchema, type AcmpResult, type Payload } from '../acmp/wire/task-messages.js';
import { readCapabilitySkill } from '../acmp/provider/capability-summary.js';
import { verifyProof } from '../acmp/wire/proof.js';
import {
  agreementInvokeFromFlags,
  negotiate,
  NEGOTIATE_USAGE,
  quote,
  readAgreementFile,
} from './acmp-negotiate.js';
import { dag, DAG_USAGE } from './acmp-dag.js';
import { identity, IDENTITY_USAGE } from './acmp-identity.js';
import { printAcmpError } from './acmp-error-text.js';
import { createProgressLine, progressIsTty, type ProgressLine } from './acmp-progress.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { walletFromFlags } from './wallet.js';
import { UsageError, type CliIo } from './io.js';

export const ACMP_USAGE = `Usage:
  a2a-commerce acmp capabilities <agent-url> [--binding a2a|mcp] [--token <t>] [--data-dir <dir> | --ca <pem>] [--json]
  a2a-commerce acmp invoke <agent-url> --capability <id> --input <text> --max-price <cu>
      [--input-type text|json] [--stream] [--timeout-ms <ms>] [--proof result-hash] [--task-id <id>]
      [--binding a2a|mcp] [--escrow-id <id>] [--offer <offer_id>] [--token <t>] [--data-dir <dir> | --ca <pem>]
  a2a-commerce acmp invoke <agent-url> --agreement <file> [--input <text>] [--stream] [--timeout-ms <ms>]
      [--task-id <id>] [--token <t>] [--data-dir <dir> | --ca <pem>]
${NEGOTIATE_USAGE}
${IDENTITY_USAGE}
${DAG_USAGE}

capabilities  prints the ACMP capability object the provider advertises (the A2A extension's params, or
              MCP server/discover's org.a2agora/acmp extension) and, over A2A, each capability (one skill
              each): its price, the input it takes, and an invoke command to try.
invoke        buys one capability over A2A (docs/acmp-a2a-binding.md) or MCP (docs/acmp-mcp-binding.md):
              shows a live progress line from
              heartbeats and chunks on stderr, prints the result JSON on stdout (with the reassembled
              output when streamed) and, with --proof, verifies the result-hash proof.
              --input-type json parses --input as JSON. --task-id makes a retry idempotent.
              --escrow-id pays through an escrow bound to the provider (a2a-commerce escrow, docs/acmp-escrow.md).
              --offer runs under a flat agreement (accepted offer); --agreement under the agreement file
              "acmp negotiate" wrote (capability, price, proof and escrow come from it), over A2A.
              Exits 1 with the ACMP code on stderr when the provider (or the buyer's checks) refuse.

identity      challenges the provider with acmp/proveIdentity and verifies it is the DID it advertises
              (or --did), docs/acmp-identity.md.
--binding     a2a or mcp: the binding to buy over. Without it the agent card is tried first, then MCP at
              <agent-url>/mcp (an <agent-url> ending in /mcp is the MCP endpoint itself).
--token <t>   bearer token; without it, A2AC_TOKEN from the environment (keeps the token out of shell
              history and the process list).
--wallet-limits <file>  (or A2AC_WALLET_LIMITS) invoke through the operator's wallet: its limits refuse
              an invoke before it is sent, and its audit log records it (a2a-commerce wallet, docs/acmp-wallet.md).`;

const CONNECT_OPTIONS = {
  token: { type: 'string' },
  'data-dir': { type: 'string' },
  ca: { type: 'string' },
  binding: { type: 'string' },
} as const;

/** The bindings `--binding` allows, in the order tried without it. */
function bindingsFromFlag(value: string | undefined): AcmpBindingName[] {
  if (value === undefined) return ['a2a', 'mcp'];
  if (value !== 'a2a' && value !== 'mcp') throw new UsageError('--binding must be a2a or mcp');
  return [value];
}

/** `a2a-commerce acmp <capabilities|invoke> …`. */
export async function acmp(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'capabilities') return capabilities(rest, io);
  if (sub === 'invoke') return invoke(rest, io);
  if (sub === 'quote') return quote(rest, io);
  if (sub === 'negotiate') return negotiate(rest, io);
  if (sub === 'identity') return identity(rest, io);
  if (sub === 'dag') return dag(rest, io);
  throw new UsageError(sub === undefined ? 'acmp needs a subcommand' : `unknown acmp subcommand "${sub}"`);
}

function agentUrl(positionals: string[]): string {
  const [url, extra] = positionals;
  if (!url || extra !== undefined) throw new UsageError('expected exactly one <agent-url>');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`"${url}" is not an http(s) URL`);
  return url;
}

async function capabilities(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...CONNECT_OPTIONS, json: { type: 'boolean' } },
    allowPositionals: true,
  });
  const url = agentUrl(positionals);
  const prefer = bindingsFromFlag(values.binding);
  const buyer = await createAcmpBuyer({
    agentUrl: url,
    prefer,
    token: tokenFromFlags(values, io.env),
    caCert: caFromFlags(values, io.env),
  });
  await buyer.close();
  const { capabilityObject: capability, card } = buyer;
  const skills = (card?.skills ?? [])
    .filter((s) => s.tags.includes('acmp'))
    .map((s) => ({ id: s.id, name: s.name, ...readCapabilitySkill(s) }));
  if (values.json) {
    io.out(JSON.stringify({ binding: buyer.binding, capability, skills }, null, 2));
    return 0;
  }
  io.out(
    `ACMP ${capability.version} ${capability.role} over ${buyer.binding}${card ? ` at ${card.name}` : ''}`,
  );
  io.out(JSON.stringify(capability, null, 2));
  if (!card) return 0;
  const trust = values.ca
    ? ` --ca ${values.ca}`
    : values['data-dir']
      ? ` --data-dir ${values['data-dir']}`
      : '';
  io.out(`\ncapabilities (${skills.length}):`);
  for (const s of skills) {
    io.out(`\n  ${s.id} — ${s.summary}`);
    io.out(`    price: ${s.price ?? 'not stated'}`);
    if (s.inputSchema)
      io.out(
        `    input data: ${typeof s.inputSchema['description'] === 'string' ? s.inputSchema['description'] : JSON.stringify(s.inputSchema)}`,
      );
    const example = s.examples[0];
    if (example)
      io.out(
        `    try: a2a-commerce acmp invoke ${url}${trust} --capability ${s.id} ${exampleFlags(example)} --max-price 1`,
      );
  }
  return 0;
}

/** The `--input`/`--input-type` flags for an example payload, quoted for a POSIX shell. */
function exampleFlags(example: Payload): string {
  const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
  if (example.type === 'text' && typeof example.data === 'string') return `--input ${quote(example.data)}`;
  return `--input-type json --input ${quote(JSON.stringify(example.data))}`;
}

const INVOKE_OPTIONS = {
  ...CONNECT_OPTIONS,
  capability: { type: 'string' },
  input: { type: 'string' },
  'input-type': { type: 'string', default: 'text' },
  'wallet-limits': { type: 'string' },
  'max-price': { type: 'string' },
  stream: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  proof: { type: 'string' },
  'task-id': { type: 'string' },
  'escrow-id': { type: 'string' },
  offer: { type: 'string' },
  agreement: { type: 'string' },
} as const;

/** The invoke params the flags describe. @throws UsageError for missing or malformed flags. */
export function invokeInputFromFlags(values: {
  [K in keyof typeof INVOKE_OPTIONS]?: string | boolean;
}): InvokeInput {
  const str = (name: keyof typeof INVOKE_OPTIONS): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const capability = str('capability');
  const raw = str('input');
  const maxPrice = str('max-price');
  if (!capability || raw === undefined || maxPrice === undefined)
    throw new UsageError('invoke needs --capability, --input and --max-price');
  const max = Number(maxPrice);
  if (!Number.isFinite(max) || max < 0)
    throw new UsageError('--max-price must be a non-negative number of CU');
  const inputType = str('input-type') ?? 'text';
  if (inputType !== 'text' && inputType !== 'json') throw new UsageError('--input-type must be text or json');
  let data: Payload['data'] = raw;
  if (inputType === 'json') {
    try {
      data = PayloadSchema.shape.data.parse(JSON.parse(raw));
    } catch {
      throw new UsageError('--input is not valid JSON');
    }
  }
  const timeout = str('timeout-ms');
  const timeoutMs = timeout === undefined ? undefined : Number(timeout);
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs <= 0))
    throw new UsageError('--timeout-ms must be a positive integer');
  const proof = str('proof');
  const taskId = str('task-id');
  const escrowId = str('escrow-id');
  const offer = str('offer');
  return {
    capability,
    input: { type: inputType, data },
    max_price_cu: max,
    ...(values.stream === true ? { stream: true } : {}),
    ...(timeoutMs !== undefined ? { timeout_ms: timeoutMs } : {}),
    ...(proof !== undefined ? { proof_method: proof } : {}),
    ...(taskId !== undefined ? { task_id: taskId } : {}),
    ...(escrowId !== undefined ? { escrow_id: escrowId } : {}),
    ...(offer !== undefined ? { offer_id: offer } : {}),
  };
}

async function invoke(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseInvokeArgs(argv);
  const url = agentUrl(positionals);
  const buyer = await purchase(values, url, io);
  const progress = createProgressLine(io, progressIsTty(io));
  // Ctrl-C cancels the purchase: the buyer sends acmp/cancel (Layer 1 §3.7) before rejecting.
  const interrupt = new AbortController();
  const onSigint = (): void => interrupt.abort(new AcmpError(ACMP_CODE.cancelled, { reason: 'interrupted' }));
  process.once('SIGINT', onSigint);
  let result: AcmpResult & { output: Payload };
  try {
    result = await run(buyer.events(interrupt.signal), progress);
  } catch (error) {
    progress.done();
    if (!(error instanceof AcmpError)) throw error;
    printAcmpError(error, io);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await buyer.close();
  }
  progress.done();
  io.out(JSON.stringify(result, null, 2));
  const proofMethod = buyer.proofMethod;
  if (proofMethod !== undefined) {
    // The buyer already refused a bad proof; say what was checked.
    const check = verifyProof(result.proof, {
      method: proofMethod,
      output: result.output,
      input: buyer.input as Payload,
    });
    if (!check.ok) {
      io.err(`proof ${proofMethod} NOT verified: ${check.reason}`);
      return 1;
    }
    io.err(`proof ${proofMethod} verified: ${String(result.proof?.hash)}`);
  }
  return 0;
}

function parseInvokeArgs(argv: string[]) {
  return parseArgs({ args: argv, options: INVOKE_OPTIONS, allowPositionals: true });
}

/** A purchase the flags describe, on its buyer. */
interface Purchase {
  events(signal: AbortSignal): AsyncIterable<BuyerEvent>;
  close(): Promise<void>;
  readonly input: unknown;
  readonly proofMethod: string | undefined;
}

/**
 * Under `--agreement`: over A2A, where the agreement was negotiated (Layer 6 is served there) and where a
 * session agreement is named by `referenceTaskIds`. Otherwise on the binding `--binding` picks.
 */
async function purchase(
  values: ReturnType<typeof parseInvokeArgs>['values'],
  url: string,
  io: CliIo,
): Promise<Purchase> {
  // With the operator's wallet every invoke is authorized, counted and logged (docs/acmp-wallet.md).
  const open = await walletFromFlags(values, io.env);
  const connect = {
    agentUrl: url,
    token: tokenFromFlags(values, io.env),
    caCert: caFromFlags(values, io.env),
    ...(open ? { wallet: open.wallet } : {}),
  };
  const closeWallet = async (): Promise<void> => open?.close();
  if (values.agreement !== undefined) {
    const agreement = readAgreementFile(values.agreement);
    const params = agreementInvokeFromFlags(values, agreement);
    const buyer = await createA2AAcmpBuyer(connect);
    return {
      events: (signal) => buyer.stream(params, { signal }),
      close: closeWallet,
      input: params.input,
      proofMethod: values.proof ?? agreement.offer.proof_method,
    };
  }
  const params = invokeInputFromFlags(values);
  const buyer = await createAcmpBuyer({ ...connect, prefer: bindingsFromFlag(values.binding) });
  return {
    events: (signal) => buyer.stream(params, { signal }),
    close: async () => {
      await buyer.close();
      await closeWallet();
    },
    input: params.input,
    proofMethod: values.proof,
  };
}

async function run(
  events: AsyncIterable<BuyerEvent>,
  progress: ProgressLine,
): Promise<AcmpResult & { output: Payload }> {
  for await (const event of events) {
    if (event.kind === 'result') return { ...event.result, output: event.output };
    progress.update(event);
  }
  throw new AcmpError(ACMP_CODE.internal, { reason: 'no_result' });
}
