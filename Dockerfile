# A small static image of grmdp for vantage6 nodes: the container runs
# `grmdp vantage6`, which reads the node's INPUT_FILE, database and
# thresholds from the environment and writes its message to OUTPUT_FILE
# (docs/FEDERATED.md).
#
#   docker build -t grmdp .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/grmdp ./cmd/grmdp

# distroless/static: no shell, no libc, a /tmp and a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/grmdp /usr/local/bin/grmdp
ENTRYPOINT ["/usr/local/bin/grmdp", "vantage6"]
