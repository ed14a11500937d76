/**
 * Worker-thread entry of the two-thread offset-map build (`map-builder.ts`, issue 16): reads the
 * dirty segments it is given, checks their CRCs, walks their records and digests their keys
 * (`map-chunks.ts`), and posts the chunks, by transfer, on the port it got, at most
 * `MAX_CHUNKS_AHEAD` ahead of the building thread (which is blocked in `Atomics.wait`, so it takes
 * them with `receiveMessageOnPort`: the shared cells count chunks posted and taken). Stops when the
 * stop cell is set, after the last segment, or after a segment that could not be read. Reads only;
 * the map, the transaction state and every decision stay with the building thread.
 * Built as a main-process entry (`electron.vite.config.ts`: `out/main/map-build-worker.js`).
 */
import { parentPort } from 'node:worker_threads';
import { keyDigestFn } from './key-hash.ts';
import { chunkErrorOf, chunkTransferList, mapChunks, MAX_CHUNKS_AHEAD, type MapWorkerMessage, type MapWorkerStart } from './map-chunks.ts';

const parent = parentPort;
if (!parent) throw new Error('map-build-worker runs in a worker thread');

parent.once('message', (m: MapWorkerStart) => {
  const ctl = new Int32Array(m.control);
  const port = m.port;
  const stopped = () => Atomics.load(ctl, 2) !== 0;
  const post = (msg: MapWorkerMessage, transfer: ArrayBuffer[] = []) => {
    port.postMessage(msg, transfer);
    Atomics.add(ctl, 0, 1);
    Atomics.notify(ctl, 0);
  };
  Atomics.store(ctl, 3, 1);
  try {
    const digest = keyDigestFn(m.keyHash);
    for (const chunk of mapChunks(m.tasks, m.start, digest, true, stopped)) {
      // Backpressure: wait while MAX_CHUNKS_AHEAD chunks are not taken.
      for (;;) {
        const taken = Atomics.load(ctl, 1);
        if (Atomics.load(ctl, 0) - taken < MAX_CHUNKS_AHEAD || stopped()) break;
        Atomics.wait(ctl, 1, taken, 100);
      }
      if (stopped()) break;
      post({ chunk }, chunkTransferList(chunk));
    }
  } catch (err) {
    if (!stopped()) post({ fatal: chunkErrorOf(err) });
  }
  port.close();
  parent.close();
});
