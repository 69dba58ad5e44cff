/** Public surface of the transport-free ACMP core. */
export * from './constants.js';
export * from './errors.js';
export * from './messages.js';
export * from './proof.js';
export * from './task-store.js';
export { MemoryAcmpTaskStore } from './memory-task-store.js';
export { createAcmpProvider, buildCapabilityObject } from './provider.js';
export type {
  AcmpCapability,
  AcmpProvider,
  AcmpProviderOptions,
  EscrowVerifier,
  HandlerContext,
  ProviderEvent,
} from './provider-types.js';
export { createAcmpBuyerCore } from './buyer.js';
export type {
  AcmpBuyerCore,
  AcmpBuyerOptions,
  AcmpBuyerTransport,
  AcmpInbound,
  BuyerEvent,
  InvokeInput,
} from './buyer.js';
export { createLoopbackTransport, type LoopbackOptions } from './loopback-transport.js';
export { demoCapabilities } from './demo-capabilities.js';
