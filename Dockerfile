# The service image: API (default command) or workers (`npm run worker`), configured by environment
# variables (see docs/operators.md, Configuration). TypeScript runs through tsx, so there is no build step.
FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8000 DATA_DIR=/data
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY api ./api
COPY bin ./bin
COPY db ./db
COPY engine ./engine
COPY lib ./lib
COPY workers ./workers
COPY tsconfig.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8000
CMD ["npm", "run", "api"]
