import type { Metrics } from '../shared/metrics.js';
import type { Readable, Writable } from 'node:stream';
import type express from 'express';
import type { Request, RequestHandler } from 'express';
import type { A2ABinding, PlainExecutor } from '../a2a/binding.js';
import type { WebIdentity } from '../acmp/identity/host-identity.js';
import type { Clock } from '../shared/clock.js';
import type { IdSource } from '../shared/ids.js';
import type { Logger } from '../shared/logger.js';
import type { McpContributions } from '../mcp/contribution.js';
import type { Database } from '../storage/sql/database.js';
import type { MigrationSet } from '../storage/sql/migrations.js';
import type { OwnerColumn } from '../storage/sql/owner-columns.js';

/** What a module is given when the host starts. */
export interface ModuleContext {
  /** The shared database; `undefined` when the host runs on memory stores. */
  readonly database: Database | undefined;
  readonly logger: Logger;
  readonly ids: IdSource;
  readonly clock: Clock;
  /** Whether the host serves over TLS. */
  readonly secure: boolean;
  /** The host's public base URL (known once it listens). */
  readonly baseUrl: () => string;
  /**
   * Aborted when the host begins to stop, before it closes connections: a connection closed after this is
   * the host going away, not the client (MCP treats a client's closed stream as a cancel).
   */
  readonly stopping: AbortSignal;
  /** The host's Layer 7 did:web identity, when its identity key file holds a key (docs/acmp-identity.md). */
  readonly identity?: WebIdentity;
  /** The host's metrics (docs/operations.md "Metrics"); absent: nothing is counted. */
  readonly metrics?: Metrics;
  /**
   * What modules add to the host's MCP server (resources, tools, prompts; docs/acpspec-mcp.md): a module
   * adds its contribution when it starts, the module serving MCP applies them all.
   */
  readonly mcp?: McpContributions;
}

/** What the host gives a module's HTTP routes: its bearer authentication and body limit. */
export interface HttpGuards {
  /** Bearer authentication answering failures as google.rpc.Status (a no-op without tokens). */
  readonly auth: RequestHandler;
  /** The identity of the caller `auth` authenticated (`anonymous` without tokens; src/shared/identity.ts). */
  readonly callerOf: (req: Request) => string;
  readonly bodyLimitBytes: number;
}

/** One stdio connection a module serves (`a2a-commerce mcp-stdio`): its streams and its one caller. */
export interface StdioConnection {
  readonly stdin: Readable;
  readonly stdout: Writable;
  /** The caller's identity (src/shared/identity.ts), from the token in the environment. */
  readonly caller: string;
}

/** A stdio connection being served. */
export interface StdioSession {
  /** Resolves when the client closes its end. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** What a started module contributes. */
export interface ModuleParts {
  /** Its A2A binding: card extension, skills, message routing. */
  binding?: A2ABinding;
  /**
   * The executor for plain A2A messages no binding claims (default: the host's echo executor); at most
   * one started module may bring one.
   */
  plainExecutor?: PlainExecutor;
  /** Plain HTTP(S) routes (e.g. ACPspec over HTTPS, schemas), mounted before the A2A routes. */
  mountHttp?(app: express.Express, guards: HttpGuards): void;
  /** Serves the module's MCP methods over one stdio connection. */
  serveStdio?(connection: StdioConnection): StdioSession;
  /**
   * Stops taking new long-running work and waits, at most `graceMs`, for the work running here to finish
   * and its answers to be sent (the host drains before it stops; docs/operations.md "Health, readiness
   * and shutdown"). Requests about work already taken are still answered.
   */
  drain?(graceMs: number): Promise<void>;
  close?(): Promise<void>;
}

/**
 * A feature of the host (one per binding). Adding a binding to the host is adding a module: its tables
 * (migrations), then its parts once the database is open.
 */
export interface HostModule {
  readonly name: string;
  readonly migrations?: readonly MigrationSet[];
  /** The columns its tables record caller identities in (`a2a-commerce reassign` moves rows between them). */
  readonly ownerColumns?: readonly OwnerColumn[];
  /** Aliases of the host's DID (`alsoKnownAs`, Layer 7 §2.2), e.g. the ACMP `provider_id`. */
  readonly aliases?: readonly string[];
  /** Refuses to start in a configuration the binding cannot serve conformantly. */
  check?(context: { secure: boolean; noPersonalData: boolean }): void;
  start(context: ModuleContext): Promise<ModuleParts> | ModuleParts;
}
