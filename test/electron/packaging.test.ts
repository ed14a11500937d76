/**
 * The packaged build's Electron fuses (issue 17, defect 12): build/electron-builder.yml, parsed as
 * electron-builder parses it (YAML), flips them in the binary at packaging time. Packaging itself
 * (`npm run dist`) cannot run here (electron-builder downloads Electron); so this checks the
 * configuration, not a built binary (`npx @electron/fuses read --app …` does that on a packaging machine).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const config = parse(readFileSync(join(import.meta.dirname, '../../build/electron-builder.yml'), 'utf8')) as Record<string, unknown>;

describe('build/electron-builder.yml', () => {
  it('flips the fuses: no run-as-node, no NODE_OPTIONS, no --inspect, asar integrity and asar only, encrypted cookies, no extra file:// privileges', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('packs the app into app.asar (the integrity and asar-only fuses rely on it), native modules unpacked', () => {
    expect(config.asar).toBe(true);
    expect(config.asarUnpack).toContain('**/*.node');
    expect((config.extraMetadata as Record<string, unknown>).main).toBe('out/main/main.js');
  });

  it('is packaged with electron-builder 26, whose electronFuses option flips them', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.dist).toMatch(/electron-builder@26\.\d+\.\d+ --config build\/electron-builder\.yml/);
  });
});
