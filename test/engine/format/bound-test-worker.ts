/**
 * A worker entry for `inflate-bound.test.ts`: answers each message with the decompression bound this
 * thread applies to a one-record batch (`decompressionLimit(1)`), to show that a bound set in the
 * main thread after the worker started reaches it (compression.ts's broadcast channel).
 */
import { parentPort } from 'node:worker_threads';
import { decompressionLimit } from '../../../src-main/engine/format/compression.ts';

parentPort!.on('message', () => parentPort!.postMessage(decompressionLimit(1)));
parentPort!.postMessage('ready');
