// Node module hooks that append the URL of every module loaded through the ES module loader to
// the file named by $KLX_RECORD_LOADS (one per line). Used by test/cli/startup.test.ts as
// `node --import ./test/support/record-loads.mjs bin/klx.mjs ...`.
import { register } from 'node:module';

register('./record-loads-hooks.mjs', import.meta.url, { data: { file: process.env.KLX_RECORD_LOADS } });
