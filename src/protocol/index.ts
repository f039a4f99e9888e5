/**
 * What front ends import: the op table and what is derived from it, `accept` (parse, refuse,
 * audit) and `call` (run, cap, split refusals, audit), the request schemas and the response types,
 * and the few engine types a front end handles (never engine internals). The response schemas
 * themselves are imported from `./responses.js` by the front ends that describe them (MCP,
 * OpenAPI): building them costs every one-shot command start-up time otherwise, and the CLI never
 * applies them.
 */
export type { Engine } from '../engine/engine.js';
export type { SyncEvent } from '../engine/sync.js';
export { type CliField, type FieldOf, type HandleOptions, OPS, type OpSpec, type Surface, handle } from './ops.js';
export { type Caller, type Refused, type RefusalLog, type Taken, accept, refuseCall } from './accept.js';
export { type CallContext, type CallError, type CallResult, type Partition, call, partition, recordRefused, recordRequest, recordUnreadable } from './call.js';
export type { ResponseOf } from './responses.js';
export {
  ALL_OPS,
  type FieldKind,
  REPO_ID,
  choicesOf,
  cliField,
  fieldsOn,
  flagOf,
  fromSurface,
  inputSchema,
  kindOf,
  nameOn,
  opName,
  opNamed,
  opsOn,
  requestFields,
  serves,
  toSurface,
  withheldOn,
} from './surfaces.js';
export { type Op, Request, type RequestOf, describeIssues, wholeNumber } from './schemas.js';
