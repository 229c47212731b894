/**
 * Node flags every service runs with, here as in the image (Dockerfile `NODE_OPTIONS`) and under
 * `make dev` (scripts/dev.mjs). A 32 MiB semi-space (V8's default is 16) halves the young
 * generation's collections in services that allocate per request: +3-12 % throughput in every
 * bench phase, for ~50 MiB more resident memory at peak (bench/README.md).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=32']
