/** Every item of an async iterable (a run's events, a provider's stream) to its end. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of items) seen.push(item);
  return seen;
}
