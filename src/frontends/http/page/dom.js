/* global document -- browser globals (eslint's shared config lists Node's) */
/**
 * Building the page's elements. Every text — file contents, paths, messages from the server — goes
 * in as a text node, never as markup: what a repository holds is untrusted.
 */

/** An element with attributes (`class`, `data-*`, `aria-*`, …, or `on<event>` handlers) and children (text or nodes). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name === 'hidden') el.hidden = Boolean(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Append children: strings become text nodes, arrays are flattened, empty values skipped. */
export function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
  return el;
}

/** Replace an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}
