import { AcmpSessionBinding } from '../../a2a/acmp/negotiation-session.js';
import type { AcmpCapability } from '../../acmp/provider/provider.js';
import type { AgreementStore } from '../../acmp/negotiation/agreement-store.js';
import { MemoryAgreementStore } from '../../storage/memory/acmp-agreement-store-memory.js';
import { MemorySessionStore } from '../../storage/memory/acmp-session-store-memory.js';
import { Negotiator, type NegotiationOptions } from '../../acmp/negotiation/negotiator.js';
import { sessionReferences, type SessionStore } from '../../acmp/negotiation/session-store.js';
import { NegotiationSessions, type SessionOptions } from '../../acmp/negotiation/sessions.js';
import { KyselyAgreementStore } from '../../storage/acmp/acmp-agreement-store-kysely.js';
import { KyselySessionStore } from '../../storage/acmp/acmp-session-store-kysely.js';
import type { ModuleContext } from '../module.js';

/** Session mode (our extension, docs/acmp-negotiation.md "Session mode"): its limits, policy and URI. */
export type SessionModuleOptions = SessionOptions & {
  /** The extension URI (default `urn:a2a-commerce:acmp:negotiation-session:v0`). */
  uri?: string;
  /** How often a subscriber re-reads its session when no signal came (default 1 s). */
  fallbackReadMs?: number;
};

/** Layer 6 negotiation as the module takes it: the negotiator's options, and session mode when wanted. */
export type NegotiationModuleOptions = Omit<NegotiationOptions, 'store' | 'clock' | 'references'> & {
  sessions?: boolean | SessionModuleOptions;
};

/** Session mode once started: the session service and its A2A side. */
export interface StartedSessions {
  readonly service: NegotiationSessions;
  readonly binding: AcmpSessionBinding;
}

/** The stores Layer 6 negotiation keeps (the session store only in session mode). */
export interface NegotiationStores {
  readonly agreements: AgreementStore;
  readonly sessions: KyselySessionStore | MemorySessionStore | undefined;
}

/**
 * The negotiation stores for the host's dialect: over the host database when there is one (agreements
 * survive restarts and are shared by every host on it), in memory otherwise.
 */
export function negotiationStoresOf(
  context: Pick<ModuleContext, 'database' | 'logger' | 'metrics'>,
  withSessions: boolean,
): NegotiationStores {
  const { database, logger, metrics } = context;
  const sessions = withSessions
    ? database
      ? new KyselySessionStore(database, { logger, ...(metrics ? { metrics } : {}) })
      : new MemorySessionStore()
    : undefined;
  const agreements = database ? new KyselyAgreementStore(database) : new MemoryAgreementStore();
  return { agreements, sessions };
}

/**
 * Layer 6 negotiation over the host database: the negotiator's options, and the start of session mode when
 * it is configured — the session service (the same agreement store as flat mode, so an acceptance writes
 * the same agreement) and its A2A side. The negotiator resolves an invoke's `referenceTaskIds` through the
 * sessions.
 */
export class AcmpNegotiation {
  /** What every negotiator of this module is given (the provider's and session mode's). */
  readonly options: NegotiationOptions;
  private readonly sessionStore: SessionStore | undefined;
  private readonly sessionOptions: true | SessionModuleOptions | undefined;

  constructor(
    private readonly context: ModuleContext,
    negotiation: NegotiationModuleOptions,
  ) {
    const { sessions, ...negotiatorOptions } = negotiation;
    this.sessionOptions = sessions || undefined;
    const stores = negotiationStoresOf(context, this.sessionOptions !== undefined);
    this.sessionStore = stores.sessions;
    this.options = {
      ...negotiatorOptions,
      store: stores.agreements,
      clock: context.clock,
      ...(context.metrics ? { metrics: context.metrics } : {}),
      ...(stores.sessions ? { references: sessionReferences(stores.sessions) } : {}),
    };
  }

  /**
   * The negotiator over these capabilities: what the provider is handed as its Layer 6 port
   * (`src/acmp/provider/provider-negotiation.ts`), signing offers with the key given in the options.
   */
  negotiatorFor(capabilities: readonly AcmpCapability[]): Negotiator {
    return new Negotiator(this.options, new Map(capabilities.map((c) => [c.id, c])));
  }

  /** Starts session mode over these capabilities; `undefined` when it is not configured. */
  async startSessions(capabilities: readonly AcmpCapability[]): Promise<StartedSessions | undefined> {
    if (!this.sessionStore || !this.sessionOptions) return undefined;
    const { uri, fallbackReadMs, ...limits } = this.sessionOptions === true ? {} : this.sessionOptions;
    if (this.sessionStore instanceof KyselySessionStore) await this.sessionStore.open();
    const service = this.sessionService(this.sessionStore, limits, capabilities);
    service.start();
    // The open sessions, read from the store at each scrape (docs/operations.md "Metrics").
    const store = this.sessionStore;
    this.context.metrics?.readGauge('negotiation_sessions_open', () =>
      store.countOpen(this.context.clock.now()),
    );
    const binding = new AcmpSessionBinding({
      sessions: service,
      ids: this.context.ids,
      ...(uri !== undefined ? { uri } : {}),
      ...(fallbackReadMs !== undefined ? { fallbackReadMs } : {}),
    });
    return { service, binding };
  }

  /** The session service over the store, with its own negotiator over the same options. */
  private sessionService(
    store: SessionStore,
    limits: SessionOptions,
    capabilities: readonly AcmpCapability[],
  ): NegotiationSessions {
    const byId = new Map(capabilities.map((c) => [c.id, c]));
    return new NegotiationSessions({
      ...limits,
      store,
      negotiator: new Negotiator(this.options, byId),
      capabilities: byId,
      clock: this.context.clock,
      ids: this.context.ids,
      logger: this.context.logger,
      ...(this.context.metrics ? { metrics: this.context.metrics } : {}),
    });
  }
}
