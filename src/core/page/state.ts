/** Names one feature's state and makes its first value; the key's type parameter is the state's type. */
export interface StateKey<T> {
  readonly name: string;
  readonly create: () => T;
}

/** A key for a feature's state on a session or a page, e.g. `stateKey('snapshot.refs', () => new Map<string, RefTarget>())`. */
export function stateKey<T>(name: string, create: () => T): StateKey<T> {
  return { name, create };
}

/** Each feature's own state, found by its key object: no string collisions and no casts at the call sites. */
export class FeatureState {
  private readonly slots = new Map<StateKey<unknown>, unknown>();

  /** The feature's state, created by its key on first use. */
  get<T>(key: StateKey<T>): T {
    if (!this.slots.has(key)) this.slots.set(key, key.create());
    // Sound: only `get` and `set` write a slot, always with the value type of the key object it is filed under.
    return this.slots.get(key) as T;
  }

  set<T>(key: StateKey<T>, value: T): void {
    this.slots.set(key, value);
  }
}
