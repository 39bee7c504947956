/** Runs operations one after another, in call order; different queues run in parallel. */
export class OperationQueue {
  private tail: Promise<void> = Promise.resolve();
  private running = 0;

  /** Whether an operation is running or waiting. */
  get isBusy(): boolean {
    return this.running > 0;
  }

  /** Runs `work` after every operation queued before it has settled, whatever their outcome. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    this.running++;
    try {
      await previous;
      return await work();
    } finally {
      this.running--;
      release();
    }
  }
}
