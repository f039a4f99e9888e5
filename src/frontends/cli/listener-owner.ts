import { readFileSync } from 'node:fs';

/** Linux's tables of TCP sockets (this network namespace): a socket's state and the user owning it. */
const SOCKET_TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];
/** The state of a listening socket in those tables. */
const LISTEN = '0A';

/**
 * Whether every socket listening on `port` here belongs to this user: false when one is another
 * user's (or none listens), undefined where the system does not say (no /proc/net: not Linux).
 * A client sends the token its user's server made only to that user's server: a port another
 * user took while that server was down must not collect it.
 */
export function listenerIsMine(port: number): boolean | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const owners = new Set<number>();
  // How the tables write a local port: 4 upper-case hex digits after the address's colon.
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
  let readable = false;
  for (const table of SOCKET_TABLES) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // tcp6 is absent where IPv6 is off; both are, off Linux
    }
    readable = true;
    // Columns: sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
    for (const line of text.split('\n')) {
      if (!line.includes(local)) continue; // most lines: cheaper than splitting each into fields
      const fields = line.trim().split(/\s+/);
      if (fields.length >= 8 && fields[1]!.endsWith(local.trimEnd()) && fields[3] === LISTEN) owners.add(Number(fields[7]));
    }
  }
  if (!readable) return undefined;
  return owners.size > 0 && [...owners].every((owner) => owner === uid);
}
