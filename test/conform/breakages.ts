import { randomUUID } from 'node:crypto';
import type { Rewrites } from './rewrite-proxy.js';

/**
 * One breakage per ACMP check: what the proxy in front of the fixture host rewrites, and the one check
 * that must then fail (test/conform/breakages.test.ts). Each breaks exactly one rule of seed 000,
 * Layer 1 or Layer 3, as a wrong agent would.
 */

type Json = Record<string, unknown>;

export interface Breakage {
  readonly name: string;
  /**
   * The id of the check that must fail, and no other: for a rule checked per transport, its JSON-RPC id,
   * and the check fails over every transport `rewrites.transports` names (default all three).
   */
  readonly breaks: string;
  readonly rewrites: Rewrites;
  /** Checks that then skip, and rightly: what they judge is not advertised any more. */
  readonly alsoSkips?: readonly string[];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Calls `fn` on every object inside `value`, depth first. */
function walk(value: unknown, fn: (o: Json) => void): void {
  if (Array.isArray(value)) for (const v of value) walk(v, fn);
  else if (isObject(value)) {
    fn(value);
    for (const v of Object.values(value)) walk(v, fn);
  }
}

/** A response rewrite applied to every agent message of a body. */
function agentMessages(fn: (m: Json) => void): Rewrites['response'] {
  return (body) => {
    walk(body, (o) => o.role === 'ROLE_AGENT' && Array.isArray(o.parts) && fn(o));
    return body;
  };
}

/** A response rewrite of every ACMP root of a kind (`acmp_result`, `acmp_error`, or a method). */
function roots(kind: string, fn: (inner: Json, root: Json) => void): Rewrites['response'] {
  return (body) => {
    walk(body, (o) => {
      if (kind.startsWith('acmp/') ? o.acmp_method === kind : isObject(o[kind]))
        fn((kind.startsWith('acmp/') ? o.params : o[kind]) as Json, o);
    });
    return body;
  };
}

/** A rewrite of an ACMP error code into the generic -33099. */
const recode = (from: number): Rewrites['response'] =>
  roots('acmp_error', (e) => {
    if (e.code === from) e.code = -33099;
  });

/** Rewrites the capability object on the card and over MCP alike, so only the rule in question breaks. */
function capability(fn: (params: Json) => void): Rewrites {
  return {
    card: (card) => {
      walk(card, (o) => o.uri === 'https://a2agora.org/acmp/v0.1' && isObject(o.params) && fn(o.params));
      return card;
    },
    response: (body, path) => {
      if (path.startsWith('/mcp'))
        walk(body, (o) => {
          for (const v of [o['org.a2agora/acmp'], o.acmp]) if (isObject(v)) fn(v);
        });
      return body;
    },
  };
}

const card = (fn: (card: Json) => void): Rewrites => ({ card: (c) => (fn(c), c) });

/** Sends a repeated invoke to the agent under a fresh task id, and maps the answer back: a re-execution. */
function reExecuting(): Rewrites {
  const seen = new Set<string>();
  const renamed = new Map<string, string>();
  return {
    request: (body) => {
      let text = JSON.stringify(body);
      walk(body, (o) => {
        if (o.acmp_method !== 'acmp/invoke' || !isObject(o.params)) return;
        const id = o.params.task_id as string;
        if (!seen.has(id)) return void seen.add(id);
        const fresh = `task_${randomUUID().replaceAll('-', '')}`;
        renamed.set(fresh, id);
        text = text.replaceAll(id, fresh);
      });
      return JSON.parse(text) as Json;
    },
    response: (body) => {
      let text = JSON.stringify(body);
      for (const [fresh, id] of renamed) text = text.replaceAll(fresh, id);
      return JSON.parse(text) as Json;
    },
  };
}

/** Points every acmp/cancel at a task that does not exist: the cancel is never applied. */
const cancelLost: Rewrites = {
  request: (body) => {
    let text = JSON.stringify(body);
    walk(body, (o) => {
      if (o.acmp_method === 'acmp/cancel' && isObject(o.params))
        text = text.replaceAll(o.params.task_id as string, 'task_nowhere');
    });
    return JSON.parse(text) as Json;
  },
};

/** Turns every answer carrying acmp_error into a failed task (JSON-RPC `{result}` or bare REST bodies). */
const failedTask: Rewrites['response'] = (body) => {
  const wrapped = isObject(body.result);
  const result = wrapped ? (body.result as Json) : body;
  if (!JSON.stringify(result).includes('"acmp_error"')) return body;
  let out = result;
  if (isObject(result.message)) {
    let id = '';
    walk(result.message, (o) => isObject(o.acmp_error) && (id = String((o.acmp_error.data as Json).task_id)));
    const message = { ...result.message, taskId: id };
    out = { task: { id, status: { state: 'TASK_STATE_FAILED', message } } };
  } else
    walk(result, (o) => {
      if (typeof o.state === 'string') o.state = 'TASK_STATE_FAILED';
    });
  return wrapped ? { ...body, result: out } : out;
};

export const BREAKAGES: readonly Breakage[] = [
  {
    name: 'a wrong media type on ACMP parts',
    breaks: 'acmp-a2a-media-type',
    rewrites: {
      response: agentMessages((m) => {
        for (const p of m.parts as Json[]) p.mediaType = 'application/json';
      }),
    },
  },
  {
    name: 'a wrong media type on ACMP parts over gRPC only',
    breaks: 'acmp-a2a-media-type',
    rewrites: {
      transports: ['GRPC'],
      response: agentMessages((m) => {
        for (const p of m.parts as Json[]) p.mediaType = 'application/json';
      }),
    },
  },
  {
    name: 'task_id hoisted into Message.metadata over HTTP+JSON only',
    breaks: 'acmp-a2a-no-metadata',
    rewrites: {
      transports: ['HTTP+JSON'],
      response: agentMessages((m) => (m.metadata = { acmp: { task_id: m.taskId } })),
    },
  },
  {
    name: 'chunks numbered from 1 over gRPC only',
    breaks: 'acmp-a2a-stream',
    rewrites: {
      transports: ['GRPC'],
      response: roots('acmp/streamChunk', (p) => (p.seq = (p.seq as number) + 1)),
    },
  },
  {
    name: 'an extra key beside acmp_result',
    breaks: 'acmp-a2a-root-keys',
    rewrites: { response: roots('acmp_result', (_r, root) => (root.jsonrpc = '2.0')) },
  },
  {
    name: 'Message.task_id differing from the payload',
    breaks: 'acmp-a2a-task-id',
    rewrites: { response: agentMessages((m) => m.taskId !== undefined && (m.taskId = 'task_elsewhere')) },
  },
  {
    name: 'max_price_cu hoisted into Message.metadata',
    breaks: 'acmp-a2a-no-metadata',
    rewrites: { response: agentMessages((m) => (m.metadata = { max_price_cu: 0.005 })) },
  },
  {
    name: 'an ACMP error as a failed task',
    breaks: 'acmp-a2a-error-in-payload',
    rewrites: { response: failedTask },
  },
  {
    name: '-33001 answered as -33099',
    breaks: 'acmp-a2a-budget-exceeded',
    rewrites: { response: recode(-33001) },
  },
  {
    name: '-33002 answered as -33099',
    breaks: 'acmp-a2a-capability-not-found',
    rewrites: { response: recode(-33002) },
  },
  {
    name: '-33007 answered as -33099',
    breaks: 'acmp-a2a-input-stream-refused',
    rewrites: { response: recode(-33007) },
  },
  { name: 'acmp/cancel not applied', breaks: 'acmp-a2a-cancel', rewrites: cancelLost },
  {
    name: 'chunks numbered from 1',
    breaks: 'acmp-a2a-stream',
    rewrites: { response: roots('acmp/streamChunk', (p) => (p.seq = (p.seq as number) + 1)) },
  },
  {
    name: 'no heartbeats',
    breaks: 'acmp-a2a-liveness',
    rewrites: { response: (body) => (JSON.stringify(body).includes('"acmp/heartbeat"') ? undefined : body) },
  },
  {
    name: 'a wrong proof hash',
    breaks: 'acmp-a2a-proof',
    rewrites: {
      response: roots('acmp_result', (r) => isObject(r.proof) && (r.proof.hash = `sha256:${'0'.repeat(64)}`)),
    },
  },
  {
    name: 'cost_cu above max_price_cu',
    breaks: 'acmp-a2a-cost',
    rewrites: { response: roots('acmp_result', (r) => (r.cost_cu = 1000)) },
  },
  { name: 'a repeated task_id executed again', breaks: 'acmp-a2a-idempotent', rewrites: reExecuting() },
  {
    name: 'params that do not accept acmp/invoke',
    breaks: 'acmp-a2a-card-params',
    rewrites: capability((p) => (p.accepts = ['acmp/cancel'])),
  },
  {
    name: 'emits acmp/heartbeat without an interval',
    breaks: 'acmp-a2a-card-emits',
    alsoSkips: ['acmp-a2a-liveness'],
    rewrites: capability((p) => delete (p.features as Json).heartbeat_interval_ms),
  },
  {
    name: 'input_streaming: true',
    breaks: 'acmp-a2a-card-input-streaming',
    rewrites: capability((p) => ((p.features as Json).input_streaming = true)),
  },
  {
    name: 'required: true on a card serving plain A2A',
    breaks: 'acmp-a2a-card-required',
    rewrites: card((c) => walk(c, (o) => o.uri === 'https://a2agora.org/acmp/v0.1' && (o.required = true))),
  },
  {
    name: 'capabilities.streaming: false',
    breaks: 'acmp-a2a-card-streaming',
    rewrites: card((c) => ((c.capabilities as Json).streaming = false)),
  },
  {
    name: 'a v0.3 interface missing from supportedInterfaces',
    breaks: 'acmp-a2a-card-interfaces',
    rewrites: card(
      (c) => (c.additionalInterfaces = [{ url: 'http://127.0.0.1:1/a2a/rest', transport: 'HTTP+JSON' }]),
    ),
  },
  {
    name: 'an MCP capability object other than the card’s',
    breaks: 'acmp-mcp-discover',
    rewrites: {
      response: (body, path) => {
        if (path.startsWith('/mcp'))
          walk(body, (o) => isObject(o['org.a2agora/acmp']) && (o['org.a2agora/acmp'].version = '9.9.9'));
        return body;
      },
    },
  },
];
