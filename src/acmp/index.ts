/** Public surface of the transport-free ACMP core (explicit names: no `export *`). */
export {
  ACMP_METHOD,
  L6_METHOD,
  SESSION_METHOD,
  SESSION_EXTENSION_URI,
  ACMP_EXTENSION_URI,
  ACMP_MEDIA_TYPE,
  ACMP_VERSION,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_OUTPUT_TYPE,
  MAX_TIMER_MS,
  IMPLEMENTED_PROOF_METHODS,
  type AcmpMethod,
} from './wire/constants.js';
export {
  ACMP_ERRORS,
  ACMP_CODE,
  acmpErrorSpec,
  AcmpError,
  isAcmpError,
  toAcmpErrorObject,
  type AcmpErrorSpec,
  type AcmpErrorKey,
  type AcmpErrorCode,
} from './wire/errors.js';
export {
  AcmpErrorObjectSchema,
  CapabilityObjectSchema,
  PARAMS_SCHEMA_BY_METHOD,
  parseInvokeParams,
  parseCancelParams,
  parseAcmpRoot,
  encodeRequestRoot,
  encodeResultRoot,
  encodeErrorRoot,
  encodeEventRoot,
  eventOfRoot,
  type AcmpErrorObject,
  type CapabilityObject,
  type AcmpEvent,
  type AcmpRoot,
} from './wire/messages.js';
export {
  PayloadSchema,
  InvokeParamsSchema,
  CancelParamsSchema,
  StreamChunkParamsSchema,
  InputChunkParamsSchema,
  HeartbeatParamsSchema,
  ProofSchema,
  AcmpResultSchema,
  resolveInvoke,
  type Payload,
  type InvokeParams,
  type CancelParams,
  type StreamChunkParams,
  type InputChunkParams,
  type HeartbeatParams,
  type Proof,
  type AcmpResult,
  type ResolvedInvoke,
} from './wire/task-messages.js';
export {
  resultHash,
  createResultHashProof,
  verifyProof,
  assembleChunks,
  samePayload,
  type ResultHashProof,
  type ProofCheck,
} from './wire/proof.js';
export {
  TaskOutcomeSchema,
  isFinished,
  unrecordedEnd,
  type TaskOutcome,
  type TaskScope,
  type TaskEnd,
  type AcmpTaskRecord,
  type FinishedTaskRecord,
  type NewAcmpTask,
  type AppendChunks,
  type FinishTask,
  type TaskSignal,
  type TaskListQuery,
  type HostBeat,
  type AcmpTaskStore,
} from './provider/task-store.js';
export { MemoryAcmpTaskStore } from './provider/memory-task-store.js';
export { createAcmpProvider, buildCapabilityObject } from './provider/provider.js';
export type {
  AcmpCapability,
  AcmpProvider,
  AcmpProviderOptions,
  EscrowVerifier,
  HandlerContext,
  ProviderEvent,
} from './provider/provider-types.js';
export { createAcmpBuyerCore } from './buyer/buyer.js';
export type {
  AcmpBuyerCore,
  AcmpBuyerOptions,
  AcmpBuyerTransport,
  AcmpInbound,
  BuyerEvent,
  InvokeInput,
} from './buyer/buyer.js';
export { createLoopbackTransport, type LoopbackOptions } from './loopback-transport.js';
