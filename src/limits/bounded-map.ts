/**
 * A map capped at maxKeys with two generations: writes go to the young one; when it is half full it
 * becomes the old one and the previous old one is dropped whole. A key used within the last
 * maxKeys/2 new keys always survives. No per-call scan: iterating a Map from its head after many
 * deletes is linear in the deleted slots, which made a true LRU crawl under a flood of keys.
 * Entries that `isStale` says are worthless are dropped when read.
 */
export class BoundedMap<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();

  constructor(
    private readonly maxKeys: number,
    private readonly isStale: (value: V) => boolean = () => false,
  ) {}

  get size(): number {
    return this.young.size + this.old.size;
  }

  get(key: string): V | undefined {
    const young = this.young.get(key);
    const value = young ?? this.old.get(key);
    if (value === undefined) return undefined;
    if (this.isStale(value)) {
      this.delete(key);
      return undefined;
    }
    if (young === undefined) this.set(key, value); // a read is a use: keep the key young
    return value;
  }

  set(key: string, value: V): void {
    this.old.delete(key);
    if (!this.young.has(key) && this.young.size >= Math.max(1, Math.floor(this.maxKeys / 2))) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  /** Every live entry, young first; for the rare full pass (Redis coming back), not the hot path. */
  *entries(): IterableIterator<[string, V]> {
    for (const [key, value] of this.young) if (!this.isStale(value)) yield [key, value];
    for (const [key, value] of this.old) if (!this.young.has(key) && !this.isStale(value)) yield [key, value];
  }

  delete(key: string): void {
    this.young.delete(key);
    this.old.delete(key);
  }
}
