# datasf-mcp as a container: a static binary (no cgo; the SQLite driver is
# pure Go) in a small Alpine image, run as a non-root user, serving MCP over
# Streamable HTTP and the REST API on port 8080.
#
#   docker build -t datasf-mcp .
#   docker run --rm -p 8080:8080 datasf-mcp serve --http 0.0.0.0:8080 --public-url http://127.0.0.1:8080
#
# Several replicas behind HAProxy with Redis: deploy/docker-compose.yml.
# Never bake SOCRATA_APP_TOKEN or DATASF_REST_TOKEN into the image: pass
# them at run time (docker run -e, or a secret).

FROM golang:1.26-alpine AS build
WORKDIR /src
# The app alone, as a clone without go.work builds it: the workspace's
# other modules (the example, dualresp/gosdk) are not the image's.
ENV GOWORK=off
# The app's module and the dualresp modules it replaces by local
# directories (go.mod), so that their dependencies download in one layer.
COPY go.mod go.sum ./
COPY dualresp/go.mod dualresp/go.sum dualresp/
COPY dualresp/mcpgo/go.mod dualresp/mcpgo/go.sum dualresp/mcpgo/
COPY dualresp/redisstore/go.mod dualresp/redisstore/go.sum dualresp/redisstore/
COPY dualresp/sqlitestore/go.mod dualresp/sqlitestore/go.sum dualresp/sqlitestore/
RUN go mod download
COPY . .
ARG VERSION=0.1.0-container
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/datasf-mcp ./cmd/datasf-mcp

FROM alpine:3.22
# ca-certificates: the portals are reached over HTTPS. busybox's wget (in
# the base image) is the health check's client.
RUN apk add --no-cache ca-certificates \
 && adduser -D -H -u 10001 datasf \
 && mkdir -p /home/datasf/.cache && chown -R datasf /home/datasf
COPY --from=build /out/datasf-mcp /usr/local/bin/datasf-mcp
USER 10001
ENV HOME=/home/datasf \
    DATASF_HTTP=0.0.0.0:8080 \
    DATASF_LOG_LEVEL=info
EXPOSE 8080
# /healthz answers {"status":"ok"} whatever the Host header.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD wget -q -O /dev/null "http://127.0.0.1:${DATASF_HTTP##*:}/healthz" || exit 1
ENTRYPOINT ["datasf-mcp"]
CMD ["serve", "--http", "0.0.0.0:8080"]
