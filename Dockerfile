# ARGUS worker image. Build: docker build -t argus-worker . (docker-compose.yml does it for you).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    ARGUS_STATE_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The worker keeps local scratch in /data (and file catalogs in /data/catalogs: mount one shared volume there).
RUN mkdir -p /data/catalogs && chown node:node /data /data/catalogs
USER node
VOLUME ["/data"]
# The worker's JavaScript heap in MiB (docs/operations.md, "Memory"); exec, so signals reach node itself.
ENV ARGUS_WORKER_HEAP_MB=1024
CMD ["sh", "-c", "exec node --max-old-space-size=\"$ARGUS_WORKER_HEAP_MB\" dist/worker/main.js"]
