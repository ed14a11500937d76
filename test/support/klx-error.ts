/** Catching the typed error a call must throw, in tests. */
import { KlxError } from '../../src-main/engine/errors.ts';

/**
 * The KlxError `fn` throws.
 * @throws the error itself when it is not a KlxError, and an Error when `fn` returns.
 */
export function thrownKlxError(fn: () => unknown): KlxError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KlxError) return err;
    throw err;
  }
  throw new Error('expected a KlxError');
}
