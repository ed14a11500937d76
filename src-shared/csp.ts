/**
 * The Content-Security-Policy of the renderer page, sent as a header by the bridge and by the
 * Electron main process (and mirrored in `src-renderer/index.html`'s meta tag, which the tests
 * compare). Scripts only from the app itself, no plugins, no framing, no form posts, network only to
 * the page's own origin (the bridge's API and event stream). `'unsafe-inline'` styles are needed
 * by Vue's style bindings; Monaco later needs the `blob:` workers and `data:` fonts/images.
 *
 * No Node or DOM imports.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "worker-src 'self' blob:",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The same policy without the directives a `<meta>` tag cannot carry (`frame-ancestors`). */
export const META_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.split('; ')
  .filter((d) => !d.startsWith('frame-ancestors'))
  .join('; ');
