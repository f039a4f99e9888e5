/** A fixed-size pool of database connections; callers wait when all are busy. */
export class ConnectionPool<C> {
  private readonly idle: C[] = [];
  private readonly waiting: ((connection: C) => void)[] = [];

  constructor(connections: C[]) {
    this.idle.push(...connections);
  }

  async acquire(): Promise<C> {
    const connection = this.idle.pop();
    if (connection) return connection;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(connection: C): void {
    const next = this.waiting.shift();
    if (next) next(connection);
    else this.idle.push(connection);
  }
}
