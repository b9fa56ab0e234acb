# syntax=docker/dockerfile:1
#
# warden in a container. Two targets:
#   docker build -t warden .                    # "runtime": Debian slim with bash, git and python3
#   docker build -t warden:minimal --target minimal .   # distroless, no shell
# The state (SQLite store, sockets, shell state) lives in the volume
# /home/warden/.local/state/warden; the config in
# /home/warden/.config/warden/config.yaml (mount it read-only).
# See docs/install.md.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The release build; internal/archtest's packaging test runs this same line.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/warden ./cmd/warden
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/warden-hook ./cmd/warden-hook

# minimal: the host with no shell and no tools. Approvals, the console,
# hooks and warden mcp work; tools that run commands fail, since there is
# nothing to run them with.
FROM gcr.io/distroless/static-debian12:nonroot AS minimal
COPY --from=build /out/warden /out/warden-hook /usr/local/bin/
ENV HOME=/home/nonroot
VOLUME ["/home/nonroot/.local/state/warden"]
EXPOSE 7878
ENTRYPOINT ["/usr/local/bin/warden"]
CMD ["serve", "--addr", "0.0.0.0:7878", "--allow-remote"]

# runtime (the default): what agents' commands commonly need.
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
	&& apt-get install -y --no-install-recommends bash ca-certificates git python3 \
	&& rm -rf /var/lib/apt/lists/* \
	&& useradd --create-home --uid 10001 warden
COPY --from=build /out/warden /out/warden-hook /usr/local/bin/
USER warden
WORKDIR /home/warden
RUN mkdir -p /home/warden/.local/state/warden /home/warden/.config/warden
VOLUME ["/home/warden/.local/state/warden"]
EXPOSE 7878
ENTRYPOINT ["/usr/local/bin/warden"]
# Inside the container the console must listen beyond loopback to be
# published; publish it on the host's loopback only:
#   docker run -p 127.0.0.1:7878:7878 -v warden-state:/home/warden/.local/state/warden warden
CMD ["serve", "--addr", "0.0.0.0:7878", "--allow-remote"]
