"""The gateway bench (issue 32): booted Debian images with systemd, relink
installed from its .deb by apt, driven from the host over a virtio serial
port. See bench/gateway/README.md."""
