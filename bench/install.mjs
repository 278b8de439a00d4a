// Install cost (issue 42): a checkout's `npm ci` against the packed tarball's `npm install --omit=dev`,
// and the container image. Not re-measured by `npm run bench`: a checkout install takes many minutes
// and the image needs podman. These are the figures measured on the date given, by
// test/package/packed-install.test.ts (it prints its line), scripts/image-smoke.sh (it prints build
// time and size) and one `time npm ci` in a scratch clone; rerun those to refresh them.
export async function run() {
  return `## Install: checkout, packed package, container image (issue 42)

Recorded 2026-12-07 on the machine above while seven other engineers' builds and tests shared its two cores
(wall times are inflated by that load; CPU times and sizes are not). Both installs used the same warm npm cache;
GitHub is unreachable there, so the checkout compiled better-sqlite3 from source and the packed install took
the prebuilt binary from a local folder (as prebuild-install downloads it elsewhere).

| | packages | node_modules on disk | wall time | CPU (user + sys) |
|---|---|---|---|---|
| checkout: \`npm ci\` (dev dependencies, \`prepare\` builds dist/ and web/dist/) | 448 | 651 MB (+ 19 MB built) | 37 min 18 s | 2 min 50 s + 29 s |
| packed: \`npm install --omit=dev ./dimsum-0.1.0.tgz\` into an empty folder | 175 | 222 MB | 57 s (72 s in the test) | 10.7 s + 6.1 s |

The tarball is 3.2 MB (12.1 MB unpacked, 1,223 files: dist/ with the CLI bundle and type declarations,
web/dist/, HTTP tools, skills, templates; no sources, tests or source maps). Of the 222 MB, the largest are
pdfjs-dist (41 MB) and its optional \`@napi-rs/canvas\` (33 MB, which Dimsum's text extraction does not use;
\`--omit=optional\` leaves it out), the OpenTelemetry SDK (29 MB), the Feishu SDK (29 MB) and the MCP SDKs
(16 MB): all loaded on first use only.

Container image (\`scripts/image-smoke.sh\`, rootful podman 4.3 with runc, on the local debootstrap base):

| | value |
|---|---|
| base: Debian 12 minbase + bubblewrap, tini + Node 20.20.2, npm, Node headers | 318 MB |
| image (base + production dependencies + built files) | 540 MB |
| first build from nothing cached (compilers from apt, \`npm ci\` from the registry, better-sqlite3 compiled, build; the layout before the deps stage) | 22 min 47 s |
| rebuild after a source change (dependency layers cached: tsc, CLI bundle, web UI) | 118 s |
| adding the deps stage to a cached build (\`npm ci --omit=dev\`, better-sqlite3 compiled, build) | 15 min 2 s |
`;
}
