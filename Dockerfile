# Build: compile the single executable (server, migrations, PGlite wasm and data embedded).
FROM oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

# Run: the executable alone on a slim base, as a non-root user, with its data folder as a volume.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /var/lib/content-service content-service \
 && mkdir -p /var/lib/content-service/data /var/lib/content-service/backups \
 && chown -R content-service /var/lib/content-service
COPY --from=build /src/dist/content-service /usr/local/bin/content-service
USER content-service
WORKDIR /var/lib/content-service
ENV DATA_DIR=/var/lib/content-service/data \
    BACKUP_DIR=/var/lib/content-service/backups \
    PORT=8080 \
    HOST=0.0.0.0
VOLUME ["/var/lib/content-service/data", "/var/lib/content-service/backups"]
EXPOSE 8080
# The image has no curl: the executable asks its own /v1/health/ready (exit 0 ready, 1 not).
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["/usr/local/bin/content-service", "health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/content-service"]
CMD ["serve"]
