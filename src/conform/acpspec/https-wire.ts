import { ACP_HTTP_ROUTES, ACP_MEDIA_TYPE } from '../../acpspec/constants.js';
import { fetchTrusting } from '../../shared/fetch.js';
import { canonicalBytes } from '../../shared/jcs.js';
import { isJsonObject } from '../../shared/json.js';
import type { ConformContext } from '../check.js';
import { clip, need } from './outcome.js';
import { classify, type AcpReply, type AcpWire } from './wire.js';

/** Longest event stream the kit reads back (pages of 1000). */
const MAX_EVENT_PAGES = 10;

/**
 * ACPspec over plain HTTPS (docs/acpspec-binding.md "HTTPS binding") at the agent's base URL: envelopes
 * are POSTed as their canonical bytes, state and events are read with GET; the raw state bytes are kept
 * for the byte-identity check.
 */
export class HttpsWire implements AcpWire {
  readonly name = 'https';
  private readonly base: string;
  private readonly doFetch: typeof fetch;
  private readonly auth: Record<string, string>;

  private constructor(private readonly ctx: ConformContext) {
    this.base = ctx.url.replace(/\/+$/, '');
    this.doFetch = fetchTrusting(ctx.caCert);
    this.auth = ctx.token === undefined ? {} : { authorization: `Bearer ${ctx.token}` };
  }

  /**
   * A wire on the agent's HTTPS binding; skips the check when the agent serves none (a state request for
   * an unknown transaction answers no `acp_error`).
   */
  static async open(ctx: ConformContext): Promise<HttpsWire> {
    const wire = new HttpsWire(ctx);
    const probe = await wire.state(`conform-probe-${crypto.randomUUID()}`);
    need(
      probe.kind === 'error',
      `no ACPspec HTTPS binding at ${wire.base}${ACP_HTTP_ROUTES.state('…')} (${probe.kind === 'other' ? probe.evidence : probe.kind})`,
    );
    return wire;
  }

  /** Whether the binding is reached over TLS. */
  get secure(): boolean {
    return this.base.startsWith('https:');
  }

  send(envelope: unknown): Promise<AcpReply> {
    return this.request(ACP_HTTP_ROUTES.envelopes, {
      method: 'POST',
      headers: { 'content-type': ACP_MEDIA_TYPE, accept: ACP_MEDIA_TYPE },
      body: canonicalBytes(envelope),
    });
  }

  state(transactionId: string): Promise<AcpReply> {
    return this.request(ACP_HTTP_ROUTES.state(transactionId), { headers: { accept: ACP_MEDIA_TYPE } });
  }

  /** Every page of `GET …/events`, in order. */
  async events(transactionId: string): Promise<unknown[] | AcpReply> {
    const events: unknown[] = [];
    let after = 0;
    for (let page = 0; page < MAX_EVENT_PAGES; page++) {
      const path = `${ACP_HTTP_ROUTES.events(transactionId)}?after=${after}&limit=1000`;
      const reply = await this.request(path, { headers: { accept: 'application/json' } });
      if (reply.kind !== 'data') return reply;
      const list = reply.data['events'];
      if (!Array.isArray(list)) return { kind: 'other', evidence: 'an events page without an events list' };
      const page: unknown[] = list;
      events.push(...page);
      const next = reply.data['next'];
      if (typeof next !== 'number') return events;
      after = next;
    }
    return events;
  }

  private async request(path: string, init: RequestInit): Promise<AcpReply> {
    let res: Response;
    let bytes: Buffer;
    try {
      res = await this.doFetch(this.base + path, {
        ...init,
        headers: { ...this.auth, ...(init.headers as Record<string, string>) },
        signal: AbortSignal.timeout(this.ctx.timeoutMs),
      });
      bytes = Buffer.from(await res.arrayBuffer());
    } catch (error) {
      return {
        kind: 'other',
        evidence: clip(`the request failed: ${error instanceof Error ? error.message : String(error)}`),
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      return { kind: 'other', evidence: `HTTP ${res.status} with a body that is not JSON` };
    }
    const reply = classify(body);
    if (reply.kind === 'data') {
      return res.ok && isJsonObject(body)
        ? { kind: 'data', data: reply.data, bytes }
        : { kind: 'other', evidence: `HTTP ${res.status} without an acp_error` };
    }
    return reply;
  }
}
