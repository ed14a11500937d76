#!/usr/bin/env node
// The `klx` command: runs the TypeScript CLI through tsx's loader, so it works straight after
// `npm ci` in a fresh clone without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src-main/cli/main.ts');
