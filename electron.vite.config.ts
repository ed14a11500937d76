import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import vue from '@vitejs/plugin-vue';

/**
 * Where the builds go: `out/` unless `KLX_OUT_DIR` names another folder (so that several checkouts'
 * or several people's end-to-end runs on one machine do not rebuild each other's page mid-test).
 */
const OUT = process.env.KLX_OUT_DIR ? resolve(process.env.KLX_OUT_DIR) : resolve(__dirname, 'out');

/**
 * Three builds: the Electron main process (ESM; plus its worker entries: the cleaner, groups and log workers), the sandboxed preload (must be CommonJS in a
 * sandboxed renderer, so `[name].cjs`), and the Vue renderer, which the loopback bridge also serves.
 */
export default defineConfig({
  main: {
    build: {
      outDir: resolve(OUT, 'main'),
      // The main process, and the workers it starts in worker threads
      // (`src-main/api/cleanup/cleaner-worker-runner.ts` looks for `cleaner-worker.js` next to `main.js`).
      lib: {
        entry: {
          main: resolve(__dirname, 'src-main/electron/main.ts'),
          'cleaner-worker': resolve(__dirname, 'src-main/api/cleanup/cleaner-worker.ts'),
          // the groups worker (`src-main/api/groups/groups-worker-client.ts`, via core/entry-worker.ts)
          'groups-worker': resolve(__dirname, 'src-main/api/groups/groups-worker.ts'),
          // The log domain's worker pool (`src-main/api/core/worker-pool.ts` looks for `<entry>.js` next to `main.js`).
          'log-worker': resolve(__dirname, 'src-main/api/log/log-worker.ts'),
          // The segment-scan pool of a verify split over segments (`src-main/api/log/scan-pool.ts`).
          'scan-worker': resolve(__dirname, 'src-main/api/log/scan-worker.ts'),
          // The SQL build's segment decoders (`src-main/engine/sql/sql-build-pool.ts`, started through core/entry-worker.ts).
          'sql-build-worker': resolve(__dirname, 'src-main/engine/sql/sql-build-worker.ts'),
          // The offset-map build's key digesting thread (`src-main/engine/cleaner/map-builder.ts`, started through core/entry-worker.ts).
          'map-build-worker': resolve(__dirname, 'src-main/engine/cleaner/map-build-worker.ts'),
        },
        formats: ['es'],
      },
      rolldownOptions: {
        external: ['electron', 'snappy', 'lz4-napi', 'zstd-napi', '@node-rs/crc32', '@duckdb/node-api'],
      },
    },
  },
  preload: {
    build: {
      outDir: resolve(OUT, 'preload'),
      lib: { entry: resolve(__dirname, 'src-main/electron/preload.ts'), formats: ['cjs'], fileName: () => 'preload.cjs' },
      // A sandboxed preload can require only 'electron' (and a few built-ins): bundle everything
      // else it imports (the contract's method list, hence zod).
      externalizeDeps: false,
      rolldownOptions: { external: ['electron'] },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    plugins: [vue()],
    build: {
      outDir: resolve(OUT, 'renderer'),
      emptyOutDir: true,
      rolldownOptions: { input: resolve(__dirname, 'src-renderer/index.html') },
    },
  },
});
