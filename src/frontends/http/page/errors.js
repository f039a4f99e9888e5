/** Errors as people read them: what happened, the server's words, and what to do next. */
import { h } from './dom.js';

const TITLES = {
  OFFLINE: 'The server cannot be reached',
  BAD_REQUEST: 'The request was refused',
  UNAUTHORIZED: 'The token was refused',
  BLOCKED: 'Refused',
  NOT_FOUND: 'Not found',
  REPO_UNKNOWN: 'Unknown repository',
  RATE_LIMITED: 'Too many requests',
  TIMEOUT: 'The server took too long',
  LOCKED: 'The index is busy',
  INDEX_MISSING: 'No index yet',
  INDEX_STALE: 'The index is out of date',
  INDEX_CORRUPT: 'The index is damaged',
  INTERNAL: 'The server failed',
};

/** A box for a failed call: a title (given, or from the error's code), the message and the hint. */
export function errorBox(error, title) {
  const heading = title ?? TITLES[error.code] ?? 'Something went wrong';
  return h(
    'div',
    { class: error.blocked ? 'error is-blocked' : 'error', role: 'alert', 'data-code': error.code ?? '' },
    h('strong', { class: 'error-title' }, heading),
    // The server's words as they are: a message may start with a path, whose case matters.
    h('p', { class: 'error-message' }, error.message),
    error.hint ? h('p', { class: 'error-hint' }, error.hint) : null,
    error.requestId ? h('p', { class: 'error-id muted' }, `request ${error.requestId}`) : null,
  );
}
