/** What `action` throws; fails the test when it returns. */
export function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected it to throw");
}
