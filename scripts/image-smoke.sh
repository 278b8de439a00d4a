#!/usr/bin/env bash
# The container image's smoke test (issue 42), with rootful podman on this machine: builds the
# Dockerfile on a local debootstrap base (scripts/image-base.sh; no registry is reachable here) with
# the machine's CA bundle as a build secret, then runs it over host networking and checks that
#   - /healthz, /readyz and the web UI's first page answer, and the image's HEALTHCHECK passes;
#   - a chat is answered by the fake model on loopback;
#   - every process of the container runs as the non-root user;
#   - without container options the shell is not offered, and the reason names them;
#   - the conversation is still there after `podman restart`, and in a new container on the same
#     volume, where `--security-opt unmask=ALL --security-opt seccomp=unconfined` gives the shell its
#     bubblewrap sandbox (unmask=ALL alone: bwrap may not set its hostname under the default seccomp).
# Podman's layer cache keeps a rebuild to the changed layers. Prints the build time and image size.
# Env: CA_BUNDLE (default /etc/ssl/certs/ca-certificates.crt), IMAGE (default localhost/dimsum:smoke).
set -euo pipefail
cd "$(dirname "$0")/.."

CA_BUNDLE="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
IMAGE="${IMAGE:-localhost/dimsum:smoke}"
# runc: crun 1.8 refuses this machine's hybrid cgroups; limits above the defaults for npm and node.
RUN_OPTS=(--runtime runc --network host --ulimit nofile=20000:20000 --ulimit nproc=32768:32768)
work="$(mktemp -d)"
name="dimsum-smoke-$$"
volume="dimsum-smoke-$$"
llm_pid=""
cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  [ -n "$llm_pid" ] && kill "$llm_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "image-smoke: FAILED: $*" >&2
  podman logs "$name" 2>&1 | tail -30 >&2 || true
  exit 1
}

for tool in podman runc; do
  command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install podman runc debootstrap)"
done
[ -f dist/testing/index.js ] || fail "dist/ is missing: run npm run build first (the fake model comes from dist/testing)"

revision="$(git rev-parse HEAD)"
base="$(scripts/image-base.sh)"
echo "image-smoke: base $base" >&2
started=$(date +%s)
# --format docker: the OCI format has no HEALTHCHECK.
podman build "${RUN_OPTS[@]}" --format docker --secret "id=npm_ca,src=$CA_BUNDLE" \
  --build-arg "BASE_IMAGE=$base" --build-arg "REVISION=$revision" -t "$IMAGE" . >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log" >&2; fail "podman build"; }
built=$(($(date +%s) - started))
size=$(podman image inspect "$IMAGE" --format '{{.Size}}')
echo "image-smoke: built $IMAGE in ${built} s; image size $((size / 1000000)) MB"
labels="$(podman image inspect "$IMAGE" --format '{{json .Labels}}')"

# The fake model, on loopback: the container shares the host's network.
node --input-type=module -e "
  const { startFakeLlmServer } = await import('$PWD/dist/testing/index.js');
  const llm = await startFakeLlmServer({ defaultTurn: { text: 'hello from the image' } });
  console.log(llm.url);
  process.on('SIGTERM', () => llm.close().then(() => process.exit(0)));
" >"$work/llm.url" &
llm_pid=$!
for _ in $(seq 100); do [ -s "$work/llm.url" ] && break; sleep 0.1; done
llm_url="$(head -1 "$work/llm.url")"
[ -n "$llm_url" ] || fail "the fake model did not start"

port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
url="http://127.0.0.1:$port"
password="smoke-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
podman volume create "$volume" >/dev/null
ENV_OPTS=(-v "$volume:/app/data" -e "PORT=$port" -e "DIMSUM_OWNER_PASSWORD=$password"
  -e DIMSUM_MODEL=openai:gpt-test -e OPENAI_API_KEY=sk-image-smoke -e "OPENAI_BASE_URL=$llm_url/v1")

wait_ready() {
  for _ in $(seq 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ] && return 0
    [ "$(podman inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ] || fail "the container stopped"
    sleep 0.2
  done
  fail "$url/readyz never answered 200"
}
expect() { # what, actual, expected substring
  case "$2" in *"$3"*) echo "image-smoke: ok: $1" ;; *) fail "$1: expected \"$3\" in: $2" ;; esac
}

# (podman 4.3's layer cache may keep an earlier build's revision label: only the fixed ones are checked.)
expect "OCI labels" "$labels" '"org.opencontainers.image.title":"Dimsum"'

podman run -d --name "$name" "${RUN_OPTS[@]}" "${ENV_OPTS[@]}" "$IMAGE" >/dev/null
wait_ready
expect "GET /healthz" "$(curl -sf "$url/healthz")" '{"status":"ok"}'
expect "GET /readyz" "$(curl -sf "$url/readyz")" '"database":"ok"'
expect "the web UI's first page" "$(curl -sf "$url/")" "<!doctype html>"
podman healthcheck run "$name" >/dev/null || fail "the image's HEALTHCHECK failed"
echo "image-smoke: ok: HEALTHCHECK"
users="$(podman top "$name" user | tail -n +2 | sort -u | tr '\n' ' ')"
[ "$users" = "dimsum " ] || fail "processes run as: $users"
[ "$(podman exec "$name" id -u)" != 0 ] || fail "podman exec runs as root"
echo "image-smoke: ok: every process runs as dimsum (uid $(podman exec "$name" id -u))"

chat="$(node scripts/image-smoke-client.mjs chat "$url" "$password")" || fail "chat"
expect "a chat answered by the fake model" "$chat" '"answer":"hello from the image"'
channel="$(node -p 'JSON.parse(process.argv[1]).channelId' "$chat")"
shell="$(node scripts/image-smoke-client.mjs shell "$url" "$password")"
expect "no shell without container options" "$shell" '"offered":false'
expect "the refusal names the options" "$shell" "--security-opt unmask=ALL"
expect "the server log says it" "$(podman logs "$name" 2>&1)" "unmask=ALL"

podman restart "$name" >/dev/null
wait_ready
expect "the conversation after podman restart" "$(node scripts/image-smoke-client.mjs recall "$url" "$password" "$channel")" "hello from the image"

# A new container on the same volume, with what bubblewrap needs.
podman rm -f "$name" >/dev/null
podman run -d --name "$name" "${RUN_OPTS[@]}" --security-opt unmask=ALL --security-opt seccomp=unconfined "${ENV_OPTS[@]}" "$IMAGE" >/dev/null
wait_ready
expect "the conversation in a new container on the volume" "$(node scripts/image-smoke-client.mjs recall "$url" "$password" "$channel")" "hello from the image"
shell="$(node scripts/image-smoke-client.mjs shell "$url" "$password")"
expect "the shell sandboxed with unmask=ALL and seccomp=unconfined" "$shell" '"sandboxed":true'
echo "image-smoke: passed"
