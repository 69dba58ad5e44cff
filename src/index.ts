/**
 * a2a-commerce — commerce protocols over A2A v1.0 (ACMP and ACPspec), on @a2a-js/sdk; ACMP also over MCP
 * (2026-07-28, with 2025-era clients), on the official MCP SDKs.
 *
 * The pieces most agents need: a host (`startHost` with modules, or `createApp` to mount yourself), the
 * ACMP provider definition and buyer (`createAcmpBuyer` picks the binding), and the ACPspec receiver
 * module and sender client.
 */
export * as acmp from './acmp/index.js';
export * as identity from './acmp/identity/index.js';
export { createAcmpProvider } from './acmp/provider/provider.js';
export type {
  AcmpCapability,
  AcmpProvider,
  AcmpProviderOptions,
  EscrowVerifier,
  HandlerContext,
} from './acmp/provider/provider-types.js';
export { AcmpError } from './acmp/wire/errors.js';
export { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE, SESSION_EXTENSION_URI } from './acmp/wire/constants.js';
export { concedeToFloor, type CounterPolicy } from './acmp/negotiation/session-policy.js';

export { AcpError } from './acpspec/errors.js';
export { ACP_EXTENSION_URI, ACP_MEDIA_TYPE, ACP_VERSION } from './acpspec/constants.js';
export { createAcpReceiver } from './acpspec/receiver.js';
export { createAcpSenderCore } from './acpspec/sender.js';
export { buildDelta, buildSnapshot } from './acpspec/envelope.js';
export type {
  AcpAck,
  AcpAddress,
  AcpEvent,
  AcpFinancing,
  AcpFulfillment,
  AcpParty,
  AcpQuote,
  AcpState,
  AcpTransaction,
  AcpVehicle,
  ConsentMap,
  ConsentRecord,
  DeltaEnvelope,
  Envelope,
  Money,
  Producer,
  SnapshotEnvelope,
} from './acpspec/envelope.js';
export { checkEnvelope, parseEnvelope } from './acpspec/validate.js';

export type { BuyerCallPolicy } from './acmp/buyer/buyer.js';
export type { IdentityChallengeMode, IdentityChallengePolicy } from './acmp/buyer/identity-gate.js';
export {
  createAcmpBuyer,
  agentEndpoints,
  type AcmpBindingName,
  type PickAcmpBuyerOptions,
  type PickedAcmpBuyer,
} from './connect/acmp-buyer.js';
export {
  createA2AAcmpBuyer,
  type A2AAcmpBuyer as AcmpBuyer,
  type A2AAcmpBuyerOptions as AcmpBuyerConnectOptions,
  type A2AFanOutResult as FanOutResult,
} from './connect/a2a-acmp-buyer.js';
export type { AgreementInvoke, BuyerNegotiation } from './a2a/acmp/buyer.js';
export type { NegotiatedAgreement } from './a2a/acmp/negotiation-client.js';
export type { Counter, CounterDecision, OfferContext } from './a2a/acmp/session-client.js';
export { negotiateBest, type FanOutOptions } from './a2a/acmp/fan-out.js';
export {
  connectMcpAcmpBuyer,
  type McpAcmpBuyer,
  type McpBuyerConnectOptions,
  type McpEndpoint,
  type McpEra,
} from './mcp/buyer.js';
export { ACMP_MCP_EXTENSION_ID, MCP_PATH, MCP_PROTOCOL_VERSION } from './mcp/acmp-extension.js';
export { createAcmpBinding } from './a2a/acmp/provider-binding.js';
export { createAcpClient, type AcpClient, type AcpClientOptions } from './a2a/acp/client.js';
export { createAcpBinding } from './a2a/acp/receiver-binding.js';
export { createA2AClient, fetchAgentCard, type A2AConnectOptions } from './a2a/client.js';
export type { A2ABinding, BindingCall } from './a2a/binding.js';

export {
  runConformance,
  type ConformOptions,
  type ConformReport,
  type ReportedCheck,
} from './conform/runner.js';
export { renderJunit, renderTable } from './conform/report.js';
export { allChecks as conformanceChecks } from './conform/checks.js';
export type {
  Check,
  CheckOutcome,
  CheckResult,
  CheckStatus,
  ConformBinding,
  ConformContext,
  ConformTransport,
} from './conform/check.js';

export { createAcpHttpClient } from './http/acp-client.js';

export { startHost, type RunningHost, type StartHostOptions } from './server/host.js';
export { migrateAll } from './server/host-migrations.js';
export { createApp, type AppDeps, type AgentIdentity } from './server/create-app.js';
export { resolveHostConfig, type HostConfig, type HostFlags } from './server/config.js';
export type { HostModule, ModuleContext, ModuleParts } from './server/module.js';
export { acmpModule, type AcmpModuleOptions, type SessionModuleOptions } from './server/modules/acmp.js';
export { acpModule, type AcpModuleOptions } from './server/modules/acpspec.js';
export { escrowModule, type EscrowModuleOptions } from './server/modules/escrow.js';
export {
  createEscrowClient,
  type EscrowClient,
  type EscrowClientOptions,
  type EscrowStatus,
} from './a2a/escrow/client.js';
export { openDatabase, type Database } from './storage/sql/database.js';
export { openWallet, type OpenWallet } from './connect/wallet.js';
export { SpendDeniedError, type SpendRequest, type Wallet } from './wallet/wallet.js';
export type { AuditEntry, AuditKind } from './wallet/store.js';
