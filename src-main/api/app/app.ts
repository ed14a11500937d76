/**
 * `app.*` handlers: facts about the running application, and its decompression bound. The renderer
 * may call these at any time; they take no path and change no file.
 */
import { readFileSync } from 'node:fs';
import type { ApiContext, DomainHandlers } from '../core/types.ts';
import { DECOMPRESSION_CEILING, MAX_INFLATED_BYTES_CEILING, maxInflatedBytes, setMaxInflatedBytes } from '../../engine/format/compression.ts';

/** The product name shown in the window title and by `app.info`. */
export const APP_NAME = 'Kafka Log Explorer';

/** The `version` of the repository's package.json (read once from disk, relative to this file). */
export function readPackageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

/** Builds the `app.*` handlers. */
export function appHandlers(ctx: ApiContext): DomainHandlers<'app'> {
  return {
    /** Name, version, platform, transport; `readOnly` and `fixedRoots` are those of the call. */
    'app.info': async (_req, call) => ({
      name: APP_NAME,
      version: ctx.version,
      platform: process.platform,
      transport: ctx.transport,
      readOnly: call.readOnly,
      demoDir: ctx.demoDir ?? null,
      fixedRoots: [...(call.allowedRoots ?? [])],
    }),
    /** Sets (when given) and gives the decompression bound of the process (`setMaxInflatedBytes`). */
    'app.decompressionBound': async (req) => {
      if (req.maxInflatedBytes !== undefined) setMaxInflatedBytes(req.maxInflatedBytes);
      return { maxInflatedBytes: maxInflatedBytes(), defaultCeilingBytes: DECOMPRESSION_CEILING, maxBytes: MAX_INFLATED_BYTES_CEILING };
    },
  };
}
