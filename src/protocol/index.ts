/**
 * What front ends import: the request schemas, the response types, the typed dispatch, and the
 * few engine types a front end handles (never engine internals). The response schemas themselves
 * are imported from `./responses.js` by the front ends that describe them (MCP, OpenAPI): building
 * them costs every one-shot command start-up time otherwise, and the CLI never applies them.
 */
export type { Engine } from '../engine/engine.js';
export type { SyncEvent } from '../engine/sync.js';
export { type HandleOptions, handle, isRefusal } from './dispatch.js';
export { type CallContext, type CallError, type CallResult, call, recordRefused, recordRequest, recordUnreadable } from './call.js';
export type { ResponseOf } from './responses.js';
export {
  AuditRequest,
  BundleRequest,
  CAPS,
  DEFAULTS,
  FetchRequest,
  FilesRequest,
  OPS,
  type Op,
  OpenRequest,
  OutlineRequest,
  Request,
  type RequestOf,
  SearchRequest,
  SyncRequest,
  describeIssues,
  wholeNumber,
} from './schemas.js';
