/**
 * No import cycles in the source tree (src-main, src-renderer, src-shared), and the layers import
 * only downward: the engine nothing of the API, Electron, bridge or CLI; an API domain no other
 * domain (only `api/core/`, which imports no domain); `src-shared` nothing of either side. A new cycle or an upward import
 * fails here, naming its modules.
 */
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, relativeSpecifiers, type ImportGraph } from './support/import-graph.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('import cycles', () => {
  it('finds a cycle, a self-import and an acyclic graph in small graphs', () => {
    const g: ImportGraph = new Map([
      ['/r/a.ts', ['/r/b.ts']],
      ['/r/b.ts', ['/r/c.ts', '/r/d.ts']],
      ['/r/c.ts', ['/r/a.ts']],
      ['/r/d.ts', []],
      ['/r/e.ts', ['/r/e.ts']],
    ]);
    expect(importCycles(g, '/r')).toEqual(['a.ts -> b.ts -> c.ts -> a.ts', 'e.ts -> e.ts']);
    g.set('/r/c.ts', []);
    g.set('/r/e.ts', ['/r/d.ts']);
    expect(importCycles(g, '/r')).toEqual([]);
  });

  it('reads static, type-only, re-export, side-effect and dynamic imports, not packages', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      "export { c } from './c.ts';",
      "import './d.css';",
      "const { e } = await import('./e.ts');",
      "import { z } from 'zod';",
      "import { join, relative } from 'node:path';",
    ].join('\n');
    expect(relativeSpecifiers(text)).toEqual(['./a.ts', '../b.ts', './c.ts', './d.css', './e.ts']);
  });

  it('src-main, src-renderer and src-shared have none', () => {
    const graph = importGraph(['src-main', 'src-renderer/src', 'src-shared'].map((d) => join(ROOT, d)));
    expect(graph.size).toBeGreaterThan(150);
    expect(importCycles(graph, ROOT)).toEqual([]);
  });

  it('the engine, the API domains and src-shared import only downward', () => {
    const graph = importGraph(['src-main', 'src-renderer/src', 'src-shared'].map((d) => join(ROOT, d)));
    const upward: string[] = [];
    for (const [from, targets] of graph) {
      const f = relative(ROOT, from);
      for (const target of targets) {
        const t = relative(ROOT, target);
        const domain = /^src-main\/api\/([^/]+)\//.exec(f)?.[1];
        const bad =
          (f.startsWith('src-main/engine/') && !t.startsWith('src-main/engine/') && !t.startsWith('src-shared/')) ||
          (f.startsWith('src-shared/') && !t.startsWith('src-shared/')) ||
          (domain !== undefined && t.startsWith('src-main/api/') && !t.startsWith(`src-main/api/${domain}/`) && !t.startsWith('src-main/api/core/'));
        if (bad) upward.push(`${f} -> ${t}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
