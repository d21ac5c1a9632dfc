# The harnessx image: the built package and its production dependencies. The default command
# is a worker serving examples/distributed/agents.mjs; mount or copy your own agents module.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# The image serves the dashboard and the real providers: their optional peer dependencies become
# this image's dependencies (npm would drop them with the devDependencies otherwise).
RUN npm run build && npm prune --omit=dev \
  && node -e "const fs = require('node:fs'); const p = JSON.parse(fs.readFileSync('package.json', 'utf8')); Object.assign(p.dependencies, p.peerDependencies); delete p.peerDependencies; delete p.peerDependenciesMeta; delete p.devDependencies; fs.writeFileSync('package.json', JSON.stringify(p, null, 2));" \
  && npm install --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY examples/distributed ./examples/distributed
USER node
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["worker", "--agents", "examples/distributed/agents.mjs"]
