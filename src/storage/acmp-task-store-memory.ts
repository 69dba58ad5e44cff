/**
 * The in-memory {@link AcmpTaskStore}. It lives in src/acmp (the provider's default store, and src/acmp
 * may not import src/storage); re-exported here beside the other store implementations.
 */
export { MemoryAcmpTaskStore } from '../acmp/memory-task-store.js';
